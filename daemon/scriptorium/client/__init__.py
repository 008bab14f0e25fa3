"""Typed Python clients for the daemon: ``Client`` (blocking) and ``AsyncClient`` (asyncio).

Both return the protobuf responses unchanged. Failures raise ``ScriptoriumError`` (or
``ResolutionError`` when the server attached a Resolution). Only UNAVAILABLE is retried, with
exponential backoff and jitter inside the call's overall deadline: every other status is an
answer, and retrying it would only repeat it.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from scriptorium.client._wire import enum_value, fill_timestamp, resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc

DEFAULT_TARGET = "127.0.0.1:50051"
# The health entry that is SERVING once the daemon's answers are current (it has caught up
# with the roots it found at start-up); the server's ``grpc.server.CURRENT_NAME``.
CURRENT_HEALTH = "scriptorium.v1.current"
TARGET_ENV = "SCRIPTORIUM_TARGET"
T = TypeVar("T")


class ScriptoriumError(Exception):
    """A call failed with a gRPC status."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


class ResolutionError(ScriptoriumError):
    """A call failed and the server said how it tried to resolve the ref or location."""

    def __init__(self, code: grpc.StatusCode, message: str, resolution: pb.Resolution) -> None:
        super().__init__(code, message)
        self.resolution = resolution

    @property
    def reason(self) -> str:
        return self.resolution.reason

    @property
    def rule(self) -> str:
        return self.resolution.rule

    @property
    def candidates(self) -> list[str]:
        return list(self.resolution.candidates)


def error_from_rpc(err: grpc.RpcError) -> ScriptoriumError:
    """The typed error for a failed call (sync or asyncio)."""
    code_fn = getattr(err, "code", None)
    details_fn = getattr(err, "details", None)
    code = code_fn() if callable(code_fn) else grpc.StatusCode.UNKNOWN
    message = (details_fn() if callable(details_fn) else "") or ""
    resolution = resolution_from_error(err)
    if resolution is not None:
        return ResolutionError(code, message, resolution)
    return ScriptoriumError(code, message)


def resolve_target(target: str | None) -> str:
    return target or os.environ.get(TARGET_ENV) or DEFAULT_TARGET


# -- request building ----------------------------------------------------------------------------


def _corpora(kinds: Iterable[str | int] | str | None) -> list[int]:
    if kinds is None:
        return []
    if isinstance(kinds, str):
        kinds = [k for k in kinds.split(",") if k.strip()]
    return [k if isinstance(k, int) else enum_value(pb.Corpus, k, "kind") for k in kinds]


def _content_mode(mode: str | int | None) -> int:
    if mode is None or isinstance(mode, int):
        return mode or pb.CONTENT_MODE_UNSPECIFIED
    return enum_value(pb.ContentMode, mode, "content mode")


def _flow_style(style: str | int | None) -> int:
    if style is None or isinstance(style, int):
        return style or pb.FLOW_STYLE_UNSPECIFIED
    return enum_value(pb.FlowStyle, style, "flow style") if style else pb.FLOW_STYLE_UNSPECIFIED


def search_request(query: str, **fields: Any) -> pb.SearchRequest:
    """A SearchRequest; ``kinds`` accepts "docs"/"code" names, ``as_of`` a datetime."""
    kinds = fields.pop("kinds", None)
    as_of = fields.pop("as_of", None)
    request = pb.SearchRequest(query=query, kinds=_corpora(kinds), **fields)
    if isinstance(as_of, datetime):
        fill_timestamp(as_of, request.as_of)
    elif as_of is not None:
        request.as_of.CopyFrom(as_of)
    return request


def content_request(
    ref_id: str = "",
    location: str = "",
    mode: str | int | None = None,
    max_lines: int = 0,
    seen_doc_version: str = "",
    max_chars: int = 0,
    cursor: str = "",
) -> pb.GetContentRequest:
    """A GetContentRequest; under ``max_chars`` a long answer comes in parts (see next_cursor)."""
    if bool(ref_id) == bool(location):
        raise ValueError("give exactly one of ref_id or location")
    return pb.GetContentRequest(
        ref_id=ref_id,
        location=location,
        mode=_content_mode(mode),
        max_lines=max_lines,
        seen_doc_version=seen_doc_version,
        max_chars=max_chars,
        cursor=cursor,
    )


# -- channel and retry ---------------------------------------------------------------------------


def _read_pem(value: bytes | str | Path | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return Path(value).read_bytes()


class _Base:
    def __init__(
        self,
        target: str | None = None,
        *,
        token: str | None = None,
        root_certificates: bytes | str | Path | None = None,
        client_cert: bytes | str | Path | None = None,
        client_key: bytes | str | Path | None = None,
        timeout: float | None = 30.0,
        attempts: int = 3,
        backoff_initial: float = 0.1,
        backoff_max: float = 2.0,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.target = resolve_target(target)
        self.timeout = timeout
        self.attempts = attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self._options = list(options)
        self._secure = any(v is not None for v in (root_certificates, client_cert, client_key))
        self._credentials = (
            grpc.ssl_channel_credentials(
                root_certificates=_read_pem(root_certificates),
                private_key=_read_pem(client_key),
                certificate_chain=_read_pem(client_cert),
            )
            if self._secure
            else None
        )

    def _backoff(self, attempt: int) -> float:
        """Exponential with jitter (half to full), so retrying clients do not move in step."""
        cap = min(self.backoff_max, self.backoff_initial * (2**attempt))
        return random.uniform(cap / 2, cap)

    def _deadline(self, timeout: float | None) -> float | None:
        timeout = self.timeout if timeout is None else timeout
        return None if timeout is None else time.monotonic() + timeout

    def _next_delay(self, attempt: int, deadline: float | None) -> float | None:
        """The pause before the next attempt, or None when no attempt should follow."""
        if attempt + 1 >= self.attempts:
            return None
        delay = self._backoff(attempt)
        if deadline is not None and time.monotonic() + delay >= deadline:
            return None
        return delay


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


class Client(_Base):
    """Blocking client. Use as a context manager or call ``close()``."""

    def __init__(self, target: str | None = None, **kwargs: Any) -> None:
        super().__init__(target, **kwargs)
        if self._credentials is not None:
            self._channel = grpc.secure_channel(self.target, self._credentials, self._options)
        else:
            self._channel = grpc.insecure_channel(self.target, self._options)
        self._stub = retrieval_pb2_grpc.RetrievalServiceStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def _call(self, method: Callable[..., T], request: Any, timeout: float | None) -> T:
        deadline = self._deadline(timeout)
        attempt = 0
        while True:
            try:
                return method(request, timeout=_remaining(deadline), metadata=self._metadata)
            except grpc.RpcError as err:
                delay = self._next_delay(attempt, deadline)
                if err.code() != grpc.StatusCode.UNAVAILABLE or delay is None:
                    raise error_from_rpc(err) from None
            time.sleep(delay)
            attempt += 1

    def search(
        self, query: str, *, timeout: float | None = None, **fields: Any
    ) -> pb.SearchResponse:
        """``fields`` are SearchRequest fields; ``kinds`` may be names, ``as_of`` a datetime."""
        return self._call(self._stub.Search, search_request(query, **fields), timeout)

    def get_content(
        self,
        ref_id: str = "",
        location: str = "",
        *,
        mode: str | int | None = None,
        max_lines: int = 0,
        seen_doc_version: str = "",
        max_chars: int = 0,
        cursor: str = "",
        timeout: float | None = None,
    ) -> pb.GetContentResponse:
        """The block, file or page; with ``max_chars``, one part (pass its next_cursor back)."""
        request = content_request(
            ref_id, location, mode, max_lines, seen_doc_version, max_chars, cursor
        )
        return self._call(self._stub.GetContent, request, timeout)

    def outline(
        self, ref_id: str = "", location: str = "", *, timeout: float | None = None
    ) -> pb.GetContentResponse:
        """The headings or definitions of a document or file (GetContent's OUTLINE mode)."""
        request = content_request(ref_id, location, pb.CONTENT_MODE_OUTLINE)
        return self._call(self._stub.GetContent, request, timeout)

    def expand_related(
        self,
        ref_ids: Sequence[str],
        *,
        top_k: int = 0,
        kinds: Iterable[str | int] | str | None = None,
        mode: str = "",
        sources: Sequence[str] = (),
        token_budget: int = 0,
        timeout: float | None = None,
    ) -> pb.ExpandRelatedResponse:
        request = pb.ExpandRelatedRequest(
            ref_ids=list(ref_ids),
            top_k=top_k,
            kinds=_corpora(kinds),
            mode=mode,
            sources=sources,
            token_budget=token_budget,
        )
        return self._call(self._stub.ExpandRelated, request, timeout)

    def summarize_flow(
        self,
        ref_ids: Sequence[str] = (),
        *,
        topic: str = "",
        style: str | int | None = None,
        max_steps: int = 0,
        token_budget: int = 0,
        timeout: float | None = None,
    ) -> pb.SummarizeFlowResponse:
        request = pb.SummarizeFlowRequest(
            ref_ids=list(ref_ids),
            topic=topic,
            style=_flow_style(style),
            max_steps=max_steps,
            token_budget=token_budget,
        )
        return self._call(self._stub.SummarizeFlow, request, timeout)

    def guide_implementation(
        self, topic: str, *, timeout: float | None = None, **fields: Any
    ) -> pb.GuideImplementationResponse:
        style = _flow_style(fields.pop("style", None))
        request = pb.GuideImplementationRequest(topic=topic, style=style, **fields)
        return self._call(self._stub.GuideImplementation, request, timeout)

    def list_sources(self, *, timeout: float | None = None) -> pb.ListSourcesResponse:
        return self._call(self._stub.ListSources, pb.ListSourcesRequest(), timeout)

    def health(
        self, service: str = "", *, timeout: float | None = None
    ) -> health_pb2.HealthCheckResponse:
        request = health_pb2.HealthCheckRequest(service=service)
        return self._call(self._health.Check, request, timeout)

    def wait_current(self, timeout: float) -> None:
        """Block until the daemon's answers are current (health ``CURRENT_HEALTH`` SERVING),
        following Health/Watch; a daemon not up yet is waited for too. Raises
        ``ScriptoriumError`` (DEADLINE_EXCEEDED) when ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        request = health_pb2.HealthCheckRequest(service=CURRENT_HEALTH)
        serving = health_pb2.HealthCheckResponse.SERVING
        while (left := deadline - time.monotonic()) > 0:
            try:
                for reply in self._health.Watch(request, timeout=left, metadata=self._metadata):
                    if reply.status == serving:
                        return
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE:  # not up yet, or going away
                    raise error_from_rpc(err) from None
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        raise ScriptoriumError(
            grpc.StatusCode.DEADLINE_EXCEEDED, f"answers were not current after {timeout:g}s"
        )


class AsyncClient(_Base):
    """asyncio client over ``grpc.aio``. Use ``async with`` or ``await close()``."""

    def __init__(self, target: str | None = None, **kwargs: Any) -> None:
        super().__init__(target, **kwargs)
        if self._credentials is not None:
            self._channel = grpc.aio.secure_channel(self.target, self._credentials, self._options)
        else:
            self._channel = grpc.aio.insecure_channel(self.target, self._options)
        self._stub = retrieval_pb2_grpc.RetrievalServiceStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._channel.close()

    async def _call(
        self, method: Callable[..., Awaitable[T]], request: Any, timeout: float | None
    ) -> T:
        deadline = self._deadline(timeout)
        attempt = 0
        while True:
            try:
                return await method(request, timeout=_remaining(deadline), metadata=self._metadata)
            except grpc.RpcError as err:
                delay = self._next_delay(attempt, deadline)
                if err.code() != grpc.StatusCode.UNAVAILABLE or delay is None:
                    raise error_from_rpc(err) from None
            await asyncio.sleep(delay)
            attempt += 1

    async def search(
        self, query: str, *, timeout: float | None = None, **fields: Any
    ) -> pb.SearchResponse:
        """``fields`` are SearchRequest fields; ``kinds`` may be names, ``as_of`` a datetime."""
        return await self._call(self._stub.Search, search_request(query, **fields), timeout)

    async def get_content(
        self,
        ref_id: str = "",
        location: str = "",
        *,
        mode: str | int | None = None,
        max_lines: int = 0,
        seen_doc_version: str = "",
        max_chars: int = 0,
        cursor: str = "",
        timeout: float | None = None,
    ) -> pb.GetContentResponse:
        """The block, file or page; with ``max_chars``, one part (pass its next_cursor back)."""
        request = content_request(
            ref_id, location, mode, max_lines, seen_doc_version, max_chars, cursor
        )
        return await self._call(self._stub.GetContent, request, timeout)

    async def outline(
        self, ref_id: str = "", location: str = "", *, timeout: float | None = None
    ) -> pb.GetContentResponse:
        """The headings or definitions of a document or file (GetContent's OUTLINE mode)."""
        request = content_request(ref_id, location, pb.CONTENT_MODE_OUTLINE)
        return await self._call(self._stub.GetContent, request, timeout)

    async def expand_related(
        self,
        ref_ids: Sequence[str],
        *,
        top_k: int = 0,
        kinds: Iterable[str | int] | str | None = None,
        mode: str = "",
        sources: Sequence[str] = (),
        token_budget: int = 0,
        timeout: float | None = None,
    ) -> pb.ExpandRelatedResponse:
        request = pb.ExpandRelatedRequest(
            ref_ids=list(ref_ids),
            top_k=top_k,
            kinds=_corpora(kinds),
            mode=mode,
            sources=sources,
            token_budget=token_budget,
        )
        return await self._call(self._stub.ExpandRelated, request, timeout)

    async def summarize_flow(
        self,
        ref_ids: Sequence[str] = (),
        *,
        topic: str = "",
        style: str | int | None = None,
        max_steps: int = 0,
        token_budget: int = 0,
        timeout: float | None = None,
    ) -> pb.SummarizeFlowResponse:
        request = pb.SummarizeFlowRequest(
            ref_ids=list(ref_ids),
            topic=topic,
            style=_flow_style(style),
            max_steps=max_steps,
            token_budget=token_budget,
        )
        return await self._call(self._stub.SummarizeFlow, request, timeout)

    async def guide_implementation(
        self, topic: str, *, timeout: float | None = None, **fields: Any
    ) -> pb.GuideImplementationResponse:
        style = _flow_style(fields.pop("style", None))
        request = pb.GuideImplementationRequest(topic=topic, style=style, **fields)
        return await self._call(self._stub.GuideImplementation, request, timeout)

    async def list_sources(self, *, timeout: float | None = None) -> pb.ListSourcesResponse:
        return await self._call(self._stub.ListSources, pb.ListSourcesRequest(), timeout)

    async def health(
        self, service: str = "", *, timeout: float | None = None
    ) -> health_pb2.HealthCheckResponse:
        request = health_pb2.HealthCheckRequest(service=service)
        return await self._call(self._health.Check, request, timeout)
