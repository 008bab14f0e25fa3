"""Transport only: the server and its lifecycle, the servicer, proto <-> domain conversion,
interceptors, rich error details.
"""
