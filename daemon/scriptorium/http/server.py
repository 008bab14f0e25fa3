"""The HTTP listener: uvicorn serving the Starlette app, inside the daemon's event loop.

Uvicorn's own signal handling is left out (the daemon's SIGTERM handling drains both
listeners), and the socket is bound here so a taken address is the same one-sentence
BindError gRPC gives. TLS takes the daemon's certificate, key and client CA.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import Iterator

import uvicorn

from scriptorium.grpc.server import BindError, RunningServer, listen_host
from scriptorium.http.app import HttpApi
from scriptorium.http.guard import HostGuard
from scriptorium.http.protocol import DoorLimits, guarded_protocol
from scriptorium.settings.config import Settings

log = logging.getLogger(__name__)
BACKLOG = 128


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The daemon owns SIGTERM and SIGINT; uvicorn must not take them."""
        yield


def _bind(address: str) -> socket.socket:
    host = listen_host(address)
    port = int(address.rpartition(":")[2])
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise BindError(f"cannot listen for HTTP on {address}: {exc.strerror}") from None
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise BindError(f"cannot listen for HTTP on {address}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


class HttpSidecar:
    """A running HTTP listener; ``stop`` is the daemon's drain."""

    def __init__(self, server: _Server, task: asyncio.Task, port: int) -> None:
        self._server = server
        self._task = task
        self.port = port

    async def stop(self, grace: float, forced: asyncio.Event) -> None:
        self._server.config.timeout_graceful_shutdown = grace
        self._server.should_exit = True
        force = asyncio.create_task(forced.wait())
        await asyncio.wait({self._task, force}, return_when=asyncio.FIRST_COMPLETED)
        if not self._task.done():
            self._server.force_exit = True
            await asyncio.gather(self._task, return_exceptions=True)
        force.cancel()
        log.info("HTTP stopped")


async def http_sidecar(settings: Settings, running: RunningServer) -> HttpSidecar:
    """Bind ``settings.http_listen`` and serve the API and console there."""
    assert settings.http_listen is not None
    sock = _bind(settings.http_listen)
    tls = settings.tls_cert is not None
    limits = DoorLimits(
        header_seconds=settings.http_header_timeout_seconds,
        body_seconds=settings.http_body_timeout_seconds,
        max_connections=settings.http_max_connections,
    )
    config = uvicorn.Config(
        HostGuard(HttpApi(settings, running).application(), settings),
        http=guarded_protocol(limits),
        lifespan="off",
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=settings.grace_seconds,
        # Also how many connections asyncio accepts at a time before any is admitted or pushed
        # out: uvicorn's 2048 would take descriptors in bursts far past the connection cap.
        backlog=BACKLOG,
        ssl_certfile=str(settings.tls_cert) if tls else None,
        ssl_keyfile=str(settings.tls_key) if tls else None,
        ssl_ca_certs=str(settings.tls_client_ca) if settings.tls_client_ca else None,
        ssl_cert_reqs=ssl.CERT_REQUIRED if settings.tls_client_ca else ssl.CERT_NONE,
    )
    server = _Server(config)
    try:
        config.load()
    except (OSError, ssl.SSLError) as exc:
        sock.close()
        raise BindError(f"cannot serve HTTPS on {settings.http_listen}: {exc}") from None
    task = asyncio.create_task(server.serve(sockets=[sock]), name="http-serve")
    port = sock.getsockname()[1]
    log.info(
        "HTTP listening on %s (port %d, %s)",
        settings.http_listen,
        port,
        "TLS" if tls else "plaintext",
    )
    return HttpSidecar(server, task, port)
