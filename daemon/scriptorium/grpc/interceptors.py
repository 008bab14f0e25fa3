"""Server interceptors: bearer-token authentication, a concurrency limit, request decoding.

Health checks and reflection are exempt from both, so a load balancer or an orchestrator can
always probe the daemon, even when it is saturated or when the probe holds no token.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from scriptorium.index.native import release_free_memory

log = logging.getLogger(__name__)

EXEMPT_PREFIXES = (
    "/grpc.health.v1.Health/",
    "/grpc.reflection.v1alpha.ServerReflection/",
    "/grpc.reflection.v1.ServerReflection/",
)
_BEHAVIOURS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")
_FACTORIES = {
    "unary_unary": grpc.unary_unary_rpc_method_handler,
    "unary_stream": grpc.unary_stream_rpc_method_handler,
    "stream_unary": grpc.stream_unary_rpc_method_handler,
    "stream_stream": grpc.stream_stream_rpc_method_handler,
}


def is_exempt(method: str) -> bool:
    return method.startswith(EXEMPT_PREFIXES)


class _WrappedHandlers:
    """Wrapped handlers kept per method, so a call does not rebuild its handler.

    An interceptor's wrapping depends only on the method and the handler it was given; grpc
    asks every interceptor for a handler on every call, and building closures and a new
    handler object each time is measurable per call. The cache holds one entry per method of
    the server (a fixed set) and rebuilds when the inner handler is a different object.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def get(
        self,
        method: str,
        handler: grpc.RpcMethodHandler,
        build: Callable[[], grpc.RpcMethodHandler],
    ) -> grpc.RpcMethodHandler:
        entry = self._entries.get(method)
        if entry is not None and entry[0] is handler:
            return entry[1]
        wrapped = build()
        self._entries[method] = (handler, wrapped)
        return wrapped


def _behaviour_name(handler: grpc.RpcMethodHandler) -> str:
    return _BEHAVIOURS[2 * bool(handler.request_streaming) + bool(handler.response_streaming)]


def _replace_behaviour(handler: grpc.RpcMethodHandler, behaviour: Callable[..., Any]):
    name = _behaviour_name(handler)
    return _FACTORIES[name](
        behaviour,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


def _refusing(handler: grpc.RpcMethodHandler, code: grpc.StatusCode, message: str):
    """A handler of the same shape that answers every call with ``code``."""

    async def refuse(request_or_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        await context.abort(code, message)

    return _replace_behaviour(handler, refuse)


def _wrap(
    handler: grpc.RpcMethodHandler,
    before: Callable[[grpc.aio.ServicerContext], Awaitable[None]],
    after: Callable[[], None],
) -> grpc.RpcMethodHandler:
    """A handler that runs ``before`` (which may abort) and then the original, then ``after``.

    Handlers that are neither coroutine nor async-generator functions are returned unchanged.
    """
    original = getattr(handler, _behaviour_name(handler))

    if inspect.isasyncgenfunction(original):

        async def stream(request_or_iterator: Any, context: grpc.aio.ServicerContext):
            await before(context)
            try:
                async for item in original(request_or_iterator, context):
                    yield item
            finally:
                after()

        return _replace_behaviour(handler, stream)

    if inspect.iscoroutinefunction(original):

        async def unary(request_or_iterator: Any, context: grpc.aio.ServicerContext) -> Any:
            await before(context)
            try:
                return await original(request_or_iterator, context)
            finally:
                after()

        return _replace_behaviour(handler, unary)

    return handler


class ConcurrencyLimitInterceptor(grpc.aio.ServerInterceptor):
    """Refuses calls beyond ``limit`` in flight with RESOURCE_EXHAUSTED instead of queueing them.

    A prompt refusal lets a client (or a load balancer) try another replica; a queue would only
    turn overload into deadline expiries. The count is exact because the check and the increment
    run on one event loop without an ``await`` between them.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the concurrency limit must be at least 1")
        self.limit = limit
        self.in_flight = 0
        self._handlers = _WrappedHandlers()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or is_exempt(method):
            return handler
        return self._handlers.get(method, handler, lambda: self._limited(method, handler))

    def _limited(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        async def admit(context: grpc.aio.ServicerContext) -> None:
            if self.in_flight >= self.limit:
                log.warning("refused %s: %d calls in flight", method, self.in_flight)
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"server is at its concurrency limit ({self.limit})",
                )
            self.in_flight += 1

        def release() -> None:
            self.in_flight -= 1

        return _wrap(handler, admit, release)


class _Undecodable:
    """Stands in for a request whose bytes are not a valid message."""


_UNDECODABLE = _Undecodable()


# A request this large (100,000 source names, a query at its cap) makes the C heap grow by
# tens of MB that glibc keeps once freed: RSS stayed 136 MB higher after ten requests naming
# 100,000 sources. Once such a call is over, the free pages go back to the OS, at most once
# per TRIM_INTERVAL seconds (a trim walks the heap), off the event loop.
LARGE_REQUEST_BYTES = 256 * 1024
TRIM_INTERVAL = 1.0


class _Trimming:
    """One trim pending at a time, at least ``TRIM_INTERVAL`` seconds after the last one."""

    last = float("-inf")
    pending = False
    calls = 0  # large calls over so far


def _trim_after_large_request(_context: object) -> None:
    _Trimming.calls += 1
    if _Trimming.pending:
        return
    _Trimming.pending = True
    loop = asyncio.get_running_loop()
    delay = max(0.0, _Trimming.last + TRIM_INTERVAL - time.monotonic())
    loop.call_later(delay, _trim, loop)


def _trim(loop: asyncio.AbstractEventLoop) -> None:
    _Trimming.pending, _Trimming.last = False, time.monotonic()
    loop.run_in_executor(None, _collect_and_release, _Trimming.calls)


def _collect_and_release(calls: int) -> None:
    # What a large call leaves is mostly in reference cycles (an exception and the frames it
    # holds, with the request's lists in them): collected first, then the heap is trimmed.
    gc.collect()
    release_free_memory()
    log.debug("memory released after %d large calls", calls)


class RequestDecodeInterceptor(grpc.aio.ServerInterceptor):
    """Answers undecodable request bytes with INVALID_ARGUMENT instead of grpcio's UNKNOWN.

    The deserializer is wrapped so a decode failure becomes a marker the handler refuses; the
    daemon was never at risk, but a caller deserves to know the request itself was at fault.
    """

    def __init__(self) -> None:
        self._handlers = _WrappedHandlers()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if (
            handler is None
            or handler.request_streaming
            or handler.request_deserializer is None
            or is_exempt(method)
        ):
            return handler
        return self._handlers.get(method, handler, lambda: self._guarded(handler))

    @staticmethod
    def _guarded(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        decode = handler.request_deserializer
        original = getattr(handler, _behaviour_name(handler))

        def safe_decode(data: bytes) -> Any:
            try:
                return decode(data)
            except Exception:  # DecodeError and friends: the bytes are not our message
                return _UNDECODABLE

        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if request is _UNDECODABLE:
                await context.abort(
                    grpc.StatusCode.INVALID_ARGUMENT, "the request is not a valid message"
                )
            if request.ByteSize() >= LARGE_REQUEST_BYTES:
                context.add_done_callback(_trim_after_large_request)
            return await original(request, context)

        if not inspect.iscoroutinefunction(original) or handler.response_streaming:
            return handler
        return _FACTORIES[_behaviour_name(handler)](
            guarded,
            request_deserializer=safe_decode,
            response_serializer=handler.response_serializer,
        )


class BearerTokenInterceptor(grpc.aio.ServerInterceptor):
    """Requires ``authorization: Bearer <token>`` on every call except health and reflection."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("an empty token would accept every caller")
        self._expected = f"Bearer {token}".encode()

    def _authorised(self, metadata: Any) -> bool:
        presented = b""
        for key, value in metadata or ():
            if key.lower() == "authorization":
                presented = value.encode() if isinstance(value, str) else bytes(value)
                break
        return hmac.compare_digest(presented, self._expected)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or is_exempt(method):
            return handler
        if self._authorised(handler_call_details.invocation_metadata):
            return handler
        has_header = any(
            k.lower() == "authorization" for k, _ in handler_call_details.invocation_metadata or ()
        )
        log.warning(
            "refused %s: %s", method, "wrong bearer token" if has_header else "no bearer token"
        )
        return _refusing(
            handler, grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token"
        )


def build_interceptors(
    *, max_concurrent_rpcs: int, auth_token: str | None
) -> list[grpc.aio.ServerInterceptor]:
    """Authentication runs first, so an unauthenticated caller never takes a concurrency slot."""
    interceptors: list[grpc.aio.ServerInterceptor] = []
    if auth_token:
        interceptors.append(BearerTokenInterceptor(auth_token))
    interceptors.append(ConcurrencyLimitInterceptor(max_concurrent_rpcs))
    interceptors.append(RequestDecodeInterceptor())
    return interceptors
