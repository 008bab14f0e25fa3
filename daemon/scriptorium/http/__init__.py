"""The HTTP/JSON API and the web console, served beside gRPC in the daemon process.

Imported only when ``[server] http_listen`` or ``serve --http`` asks for it, so a daemon
without HTTP never loads the ASGI stack. Every RPC answers through the gRPC servicer itself
(``scriptorium.http.calls``): HTTP is a second door, never a second implementation.
"""
