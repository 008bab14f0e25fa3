"""The RetrievalService servicer: protobuf in, engine call, protobuf out.

No retrieval logic lives here. Each method converts the request, awaits the engine and converts
the outcome; failures become statuses through ``scriptorium.status``. Cancellation
(``asyncio.CancelledError``) is never swallowed, so a client that goes away stops the work.
Every call's latency and status code go to ``scriptorium.telemetry``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc

from scriptorium import __version__, telemetry
from scriptorium.domain.outcomes import DeadlineExceeded, RetrievalError, Unavailable
from scriptorium.engine.base import Engine
from scriptorium.grpc import convert
from scriptorium.grpc.status import abort_with
from scriptorium.limits import EXPIRED_DEADLINE_SECONDS
from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc

log = logging.getLogger(__name__)
T = TypeVar("T")

LOADING_MESSAGE = "sources are still loading"
# What ends the process or a generator: never turned into a status. Anything else a call
# raises, ``BaseException`` or not, ends the call with one: a panic in a native library
# (pyo3's ``PanicException``) would otherwise escape every handler and leave the call hanging.
_NEVER_CAUGHT = (KeyboardInterrupt, SystemExit, GeneratorExit)


def _unexpected(method: str, exc: BaseException) -> Exception:
    """Log an unexpected failure (its type and stack: its message may quote the request) and
    say what the caller is told: INTERNAL, with a sentence when it was not an Exception."""
    log.error(
        "%s failed with %s\n%s",
        method,
        type(exc).__name__,
        "".join(traceback.format_tb(exc.__traceback__)).rstrip(),
    )
    if isinstance(exc, Exception):
        return exc
    return RetrievalError(
        f"the index failed underneath this call ({type(exc).__name__}); it was not completed"
    )


def _expired(context: grpc.aio.ServicerContext) -> bool:
    """Whether the call's deadline has passed (or all but passed) before its work starts."""
    remaining = getattr(context, "time_remaining", None)
    left = remaining() if remaining is not None else None
    return left is not None and left <= EXPIRED_DEADLINE_SECONDS


class RetrievalServicer(retrieval_pb2_grpc.RetrievalServiceServicer):
    """Maps every RPC of ``scriptorium.v1.RetrievalService`` onto the engine."""

    def __init__(self, engine: Engine, *, server_version: str = __version__) -> None:
        self._engine = engine
        self._server_version = server_version

    async def _answer(
        self,
        method: str,
        context: grpc.aio.ServicerContext,
        call: Callable[[], Awaitable[T]],
        *,
        needs_ready: bool = True,
    ) -> T:
        started = time.perf_counter()
        code = "OK"
        try:
            try:
                if _expired(context):
                    raise DeadlineExceeded("Deadline Exceeded")
                if needs_ready and not self._engine.ready:
                    raise Unavailable(LOADING_MESSAGE)
                return await call()
            except asyncio.CancelledError:
                code = "CANCELLED"
                raise
            except RetrievalError as exc:
                code = exc.code
                failure: Exception = exc
                log.debug("%s answered %s", method, exc.code)
            except _NEVER_CAUGHT:
                raise
            except BaseException as exc:  # a Rust panic (pyo3) is not an Exception
                code = "INTERNAL"
                failure = _unexpected(method, exc)
            # Aborting outside the handlers leaves the failure out of the abort's exception
            # context, which tracing records with its message.
            await abort_with(context, failure)
        finally:
            telemetry.record_rpc(method, code, started)

    async def Search(
        self, request: pb.SearchRequest, context: grpc.aio.ServicerContext
    ) -> pb.SearchResponse:
        async def call() -> pb.SearchResponse:
            params = convert.search_params(request)
            return convert.search_response(await self._engine.search(params))

        return await self._answer("Search", context, call)

    async def GetContent(
        self, request: pb.GetContentRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetContentResponse:
        async def call() -> pb.GetContentResponse:
            params = convert.content_params(request)
            return convert.content_response(await self._engine.get_content(params))

        return await self._answer("GetContent", context, call)

    async def ExpandRelated(
        self, request: pb.ExpandRelatedRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExpandRelatedResponse:
        async def call() -> pb.ExpandRelatedResponse:
            params = convert.related_params(request)
            return convert.related_response(await self._engine.expand_related(params))

        return await self._answer("ExpandRelated", context, call)

    async def SummarizeFlow(
        self, request: pb.SummarizeFlowRequest, context: grpc.aio.ServicerContext
    ) -> pb.SummarizeFlowResponse:
        async def call() -> pb.SummarizeFlowResponse:
            params = convert.flow_params(request)
            return convert.flow_response(await self._engine.summarize_flow(params))

        return await self._answer("SummarizeFlow", context, call)

    async def GuideImplementation(
        self, request: pb.GuideImplementationRequest, context: grpc.aio.ServicerContext
    ) -> pb.GuideImplementationResponse:
        async def call() -> pb.GuideImplementationResponse:
            params = convert.guide_params(request)
            return convert.guide_response(await self._engine.guide_implementation(params))

        return await self._answer("GuideImplementation", context, call)

    async def ListSources(
        self, request: pb.ListSourcesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListSourcesResponse:
        # Answered while loading too: it is how a caller watches sources become ready.
        async def call() -> pb.ListSourcesResponse:
            reports = self._engine.list_sources()
            return convert.list_sources_response(reports, self._server_version)

        return await self._answer("ListSources", context, call, needs_ready=False)
