"""The Starlette application: routes, the bearer token, the concurrency limit, the body cap.

The rules are gRPC's: with ``[server] auth_token`` every ``/v1/`` call needs
``Authorization: Bearer <token>`` (health, the console's files and the OpenAPI description
are exempt, as health and reflection are over gRPC); calls beyond ``max_concurrent_rpcs`` in
flight (counted together with gRPC's) are refused with RESOURCE_EXHAUSTED; a body over
``max_receive_message_bytes`` is refused before it is parsed. A client that disconnects
cancels its call, as a cancelled gRPC call does.
"""

from __future__ import annotations

import asyncio
import difflib
import hmac
import logging
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import grpc
from google.protobuf.message import Message
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from scriptorium.grpc.server import SERVING, RunningServer
from scriptorium.http.calls import RPCS, bind, parse_request, to_json
from scriptorium.http.errors import RpcFailure
from scriptorium.http.guard import check_content_type
from scriptorium.http.openapi import openapi_document
from scriptorium.http.query import request_from_query
from scriptorium.limits import EXPIRED_DEADLINE_SECONDS
from scriptorium.logfilters import REPEATS
from scriptorium.settings.config import Settings

log = logging.getLogger(__name__)

CONSOLE_FILES = {
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
    # Vendored from npm at the versions package.json pins (scripts/vendor_console.sh).
    "marked.umd.js": "text/javascript; charset=utf-8",
    "purify.min.js": "text/javascript; charset=utf-8",
}
# The console may load only its own files and talk only to this daemon.
CONSOLE_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _console_file(name: str) -> bytes:
    return resources.files("scriptorium.http").joinpath("console", name).read_bytes()


def failure_response(failure: RpcFailure) -> JSONResponse:
    headers = {"www-authenticate": "Bearer"} if failure.http_status == 401 else None
    return JSONResponse(failure.body(), status_code=failure.http_status, headers=headers)


class HttpApi:
    """The routes over one running daemon's servicer and limiter."""

    def __init__(self, settings: Settings, running: RunningServer) -> None:
        if running.servicer is None:
            raise ValueError("the gRPC server has no servicer to answer through")
        self._running = running
        self._token = f"Bearer {settings.auth_token}".encode() if settings.auth_token else None
        self._max_body = settings.max_receive_message_bytes
        self._calls = {name: bind(running.servicer, rpc) for name, rpc in RPCS.items()}
        self._openapi = openapi_document()
        self._index = _console_file("index.html")
        self._files = {name: _console_file(name) for name in CONSOLE_FILES}

    # -- the rules ---------------------------------------------------------------------------

    def _check_token(self, request: Request) -> None:
        if self._token is None:
            return
        presented = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(presented, self._token):
            log.warning(
                "refused HTTP %s: %s",
                request.url.path,
                "wrong bearer token" if presented else "no bearer token",
            )
            raise RpcFailure(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token")

    async def _body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._max_body:
            raise _too_large(int(declared), self._max_body)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self._max_body:
                raise _too_large(size, self._max_body)
            chunks.append(chunk)
        return b"".join(chunks)

    async def _admitted(self, request: Request, name: str, message: Message) -> Response:
        """Answer ``message`` through the servicer inside the shared concurrency limit."""
        limiter = self._running.limiter
        if limiter is not None and limiter.in_flight >= limiter.limit:
            log.warning("refused HTTP %s: %d calls in flight", name, limiter.in_flight)
            raise RpcFailure(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"server is at its concurrency limit ({limiter.limit})",
            )
        timeout = deadline_seconds(request.headers.get("grpc-timeout"))
        if timeout is not None and timeout <= EXPIRED_DEADLINE_SECONDS:
            raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
        if limiter is not None:
            limiter.in_flight += 1
        try:
            call = self._calls[name](message)
            if timeout is not None:
                call = _within(timeout, call)
            reply = await _unless_disconnected(request, call)
        finally:
            if limiter is not None:
                limiter.in_flight -= 1
        if reply is None:
            return Response(status_code=499)
        return JSONResponse(to_json(reply))

    # -- the routes --------------------------------------------------------------------------

    async def post_rpc(self, request: Request) -> Response:
        name = request.path_params["rpc"]
        rpc = RPCS.get(name)
        if rpc is None:
            close = difflib.get_close_matches(name, list(RPCS), n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; known: {', '.join(RPCS)}"
            raise RpcFailure(
                grpc.StatusCode.NOT_FOUND, f"no RPC named {name[:60]!r}{hint}", http_status=404
            )
        self._check_token(request)
        declared = request.headers.get("content-type")
        check_content_type(declared)
        body = await self._body(request)
        check_content_type(declared, body)
        return await self._admitted(request, name, parse_request(rpc, body))

    def get_rpc(self, name: str) -> Callable[[Request], Awaitable[Response]]:
        rpc = RPCS[name]

        async def endpoint(request: Request) -> Response:
            self._check_token(request)
            message = request_from_query(rpc, request.query_params.multi_items())
            return await self._admitted(request, name, message)

        return endpoint

    async def healthz(self, request: Request) -> Response:
        """Alive: answered whenever the process is; the body says whether it serves."""
        return JSONResponse({"status": self._status()})

    async def readyz(self, request: Request) -> Response:
        """Ready: 200 only while SERVING (loaded, not draining), 503 otherwise. With
        ``?current``, 200 only once answers are current too (the start-up catch-up landed)."""
        status = self._status()
        if "current" in request.query_params and self._running.current_status != SERVING:
            status = "NOT_SERVING"
        return JSONResponse({"status": status}, status_code=200 if status == "SERVING" else 503)

    def _status(self) -> str:
        return "SERVING" if self._running.status == SERVING else "NOT_SERVING"

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(self._openapi)

    async def index(self, request: Request) -> Response:
        return Response(self._index, media_type="text/html; charset=utf-8", headers=CONSOLE_HEADERS)

    async def console(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self._files:
            raise HTTPException(404)
        return Response(self._files[name], media_type=CONSOLE_FILES[name], headers=CONSOLE_HEADERS)

    def application(self) -> Starlette:
        routes = [
            Route("/", self.index, methods=["GET"]),
            Route("/console/{name}", self.console, methods=["GET"]),
            Route("/favicon.ico", _no_icon, methods=["GET"]),
            Route("/healthz", self.healthz, methods=["GET"]),
            Route("/readyz", self.readyz, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
            Route("/v1/search", self.get_rpc("Search"), methods=["GET"]),
            Route("/v1/content", self.get_rpc("GetContent"), methods=["GET"]),
            Route("/v1/{rpc}", self.post_rpc, methods=["POST"]),
        ]
        handlers: dict[Any, Callable[..., Any]] = {
            RpcFailure: _on_failure,
            ClientDisconnect: _on_client_gone,
            HTTPException: _on_http_exception,
            Exception: _on_unexpected,
        }
        return Starlette(routes=routes, exception_handlers=handlers)


_TIMEOUT_UNITS = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}


def deadline_seconds(header: str | None) -> float | None:
    """A ``Grpc-Timeout`` header (gRPC's form, as gateways take it: ``500m``, ``2S``)."""
    if header is None:
        return None
    value, unit = header[:-1], header[-1:]
    if not value.isdigit() or len(value) > 8 or unit not in _TIMEOUT_UNITS:
        raise RpcFailure(
            grpc.StatusCode.INVALID_ARGUMENT,
            "Grpc-Timeout must be up to 8 digits and a unit (H, M, S, m, u or n), such as 500m",
        )
    return int(value) * _TIMEOUT_UNITS[unit]


async def _within(seconds: float, call: Awaitable[Message]) -> Message:
    """The call, cancelled (as an expired gRPC deadline cancels it) past ``seconds``."""
    try:
        return await asyncio.wait_for(call, seconds)
    except TimeoutError:
        raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None


async def _no_icon(request: Request) -> Response:
    """Browsers ask for it on their own; there is none, and that is not an error."""
    return Response(status_code=204)


def _too_large(size: int, limit: int) -> RpcFailure:
    return RpcFailure(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"the request body is {size} bytes, over the limit of {limit}",
        http_status=413,
    )


async def _unless_disconnected(request: Request, call: Awaitable[Message]) -> Message | None:
    """The call's reply, or None when the client went away first (the call is cancelled)."""
    task = asyncio.ensure_future(call)
    watcher = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            task.cancel()
            # The servicer sees the cancellation as a gRPC call's would, and stops the work.
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        log.debug("the HTTP client went away: its call is cancelled")
        return None
    return task.result()


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _on_failure(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RpcFailure)
    return failure_response(exc)


async def _on_client_gone(request: Request, exc: Exception) -> Response:
    """A client that leaves mid-body is its own business: one line, no traceback."""
    log.info(
        "the HTTP client of %s went away before its request body was in",
        request.url.path[:80],
        extra={REPEATS: True},
    )
    return Response(status_code=499)


async def _on_http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        failure = RpcFailure(
            grpc.StatusCode.UNIMPLEMENTED,
            f"{request.method} is not answered at {request.url.path[:80]}",
            http_status=405,
        )
    else:
        failure = RpcFailure(
            grpc.StatusCode.NOT_FOUND,
            f"nothing at {request.url.path[:80]}; the API is POST /v1/<Rpc> (see /openapi.json)",
            http_status=exc.status_code,
        )
    response = failure_response(failure)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _on_unexpected(request: Request, exc: Exception) -> Response:
    log.error("HTTP %s failed with %s", request.url.path, type(exc).__name__, exc_info=exc)
    return failure_response(RpcFailure(grpc.StatusCode.INTERNAL, "internal error"))
