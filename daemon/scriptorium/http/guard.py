"""What a browser must not be able to make the HTTP door do: DNS rebinding and simple requests.

A page on another site can make a browser send requests to 127.0.0.1, either under its own
name rebound to this address (the Host header then names the other site) or as a cross-origin
"simple" request, which may carry a body only as text/plain, a form or no content type at all.
So the door answers only Host names it knows (loopback's, the listen address's, and
``[server] http_allowed_hosts``; health is answered whatever the Host, as probes address pods by
IP), and takes a body only when it is declared ``application/json``, which no simple request can
declare.
"""

from __future__ import annotations

import logging
from typing import Any

import grpc
from starlette.responses import JSONResponse

from scriptorium.grpc.server import listen_host
from scriptorium.http.errors import RpcFailure
from scriptorium.settings.config import Settings

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
# Probes address a pod by IP; health says nothing a rebinding page could use.
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
JSON = "application/json"


def host_name(value: str) -> str:
    """The name part of a Host header, lower case: ``localhost:8080`` -> ``localhost``."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[: end + 1] if end > 0 else value
    name, sep, port = value.rpartition(":")
    return name if sep and port.isdigit() else value


class AllowedHosts:
    """The Host values the door answers: names on any port, or ``name:port`` exactly."""

    def __init__(self, settings: Settings) -> None:
        names = set(LOOPBACK_NAMES)
        if settings.http_listen is not None:
            host = listen_host(settings.http_listen).lower()
            names.add(f"[{host}]" if ":" in host else host)
        exact: set[str] = set()
        for entry in (e.strip().lower() for e in settings.http_allowed_hosts):
            (names if host_name(entry) == entry else exact).add(entry)
        self.any = "*" in names
        self._names = frozenset(names)
        self._exact = frozenset(exact)

    def allows(self, header: str) -> bool:
        if self.any:
            return True
        value = header.strip().lower()
        return bool(value) and (host_name(value) in self._names or value in self._exact)


class HostGuard:
    """ASGI middleware: requests naming a Host the door does not answer are refused (403)."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self._app = app
        self._hosts = AllowedHosts(settings)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS or self._hosts.any:
            await self._app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if self._hosts.allows(host):
            await self._app(scope, receive, send)
            return
        log.warning(
            "refused HTTP %s: Host %r is not one this daemon answers to",
            scope["path"][:80],
            host[:80],
        )
        failure = RpcFailure(
            grpc.StatusCode.PERMISSION_DENIED,
            f"this daemon does not answer to Host {host[:80]!r}; "
            "list the names it is reached by in [server] http_allowed_hosts",
        )
        response = JSONResponse(failure.body(), status_code=failure.http_status)
        await response(scope, receive, send)


def _header(scope: dict[str, Any], name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return ""


def check_content_type(declared: str | None, body: bytes | None = None) -> None:
    """Refuse (415) a body not declared as JSON; with ``body`` None only the header is judged.

    No content type is taken only with an empty body (the empty request), as curl sends it.
    """
    if declared is None:
        if body is None or not body.strip():
            return
    elif declared.split(";", 1)[0].strip().lower() == JSON:
        return
    got = "no content type" if declared is None else repr(declared[:80])
    raise RpcFailure(
        grpc.StatusCode.INVALID_ARGUMENT,
        f"a request body must be sent as content-type {JSON} (got {got})",
        http_status=415,
    )
