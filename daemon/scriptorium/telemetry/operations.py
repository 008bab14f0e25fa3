"""Search and fetch operations, RPC latency and index builds: spans, attribution and counters.

Attribution follows the seed's split: ``scriptorium.search.provider`` and
``scriptorium.fetch.provider`` are separate attributes, written on the operation's own span and
on the ambient span around it (the gRPC server span), so one trace can show who answered the
search and who served the page without one overwriting the other.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from scriptorium.telemetry import _state
from scriptorium.telemetry.names import (
    ABSTAIN_REASON,
    ABSTAINED,
    CONFLICTS,
    DOC_VERSION,
    ERROR_CODE,
    FETCH,
    FETCH_BY,
    FETCH_LINES,
    FETCH_MODE,
    FETCH_PROVIDER,
    FETCH_SOURCE,
    FETCH_TRUNCATED,
    INDEX_BLOCKS,
    INDEX_BUILD,
    INDEX_CHANGED,
    INDEX_DOCUMENTS,
    INDEX_GENERATION,
    INDEX_REMOVED,
    INDEX_RESUMED,
    MIN_PREVIEW_CHARS,
    RESULT_COUNT,
    REVISION_SKEW,
    SEARCH,
    SEARCH_PROVIDER,
    TOKENS_USED,
)
from scriptorium.telemetry.spans import error_code, resolution_attributes, span
from scriptorium.telemetry.stages import min_preview_chars

log = logging.getLogger("scriptorium.telemetry")
T = TypeVar("T")


def search_scope(sources: Sequence[str]) -> str:
    """The ``source`` metric attribute of a search: the sources it was limited to, or ``all``."""
    return ",".join(sorted(sources)) or "all"


def traced_search(fn: Callable[[Any, Any], Awaitable[T]]) -> Callable[[Any, Any], Awaitable[T]]:
    """For ``search(params)``: the operation span, attribution, and the searches counter."""

    @functools.wraps(fn)
    async def wrapper(self: Any, params: Any) -> Any:
        state = _state.current
        if not state.active and not log.isEnabledFor(logging.DEBUG):
            return await fn(self, params)
        ambient = trace.get_current_span()
        with span(SEARCH) as live:
            outcome = await fn(self, params)
            hits = outcome.hits
            if live.is_recording():
                attributes = {
                    RESULT_COUNT: len(hits),
                    SEARCH_PROVIDER: outcome.provider,
                    ABSTAINED: outcome.abstained,
                    ABSTAIN_REASON: outcome.abstain_reason,
                    CONFLICTS: len(outcome.conflicts),
                    TOKENS_USED: outcome.tokens_used,
                }
                if hits:
                    attributes[MIN_PREVIEW_CHARS] = min_preview_chars(hits)
                live.set_attributes(attributes)
            if ambient.is_recording():
                ambient.set_attribute(SEARCH_PROVIDER, outcome.provider)
        if state.metrics:
            state.searches.add(
                1,
                {
                    "source": search_scope(params.sources),
                    "outcome": "ok" if hits else "empty",
                },
            )
        log.debug(
            "search answered by %s: %d results%s",
            outcome.provider,
            len(hits),
            f", abstained ({outcome.abstain_reason})" if outcome.abstained else "",
        )
        return outcome

    return wrapper


def _fetch_source(engine: Any, params: Any, exc: BaseException) -> str:
    """The configured source a failed fetch was aimed at, or ``unknown`` (bounded values only)."""
    resolution = getattr(exc, "resolution", None)
    if resolution is not None and resolution.site:
        return resolution.site
    if params.ref_id:
        from scriptorium.domain.refs import decode_ref

        try:
            name = decode_ref(params.ref_id).source
        except Exception:
            return "unknown"
        if name in getattr(engine, "by_name", {}):
            return name
    return "unknown"


def traced_fetch(fn: Callable[[Any, Any], Awaitable[T]]) -> Callable[[Any, Any], Awaitable[T]]:
    """For ``get_content(params)``: the fetch span, attribution, and the fetches counter."""

    @functools.wraps(fn)
    async def wrapper(self: Any, params: Any) -> Any:
        state = _state.current
        if not state.active and not log.isEnabledFor(logging.DEBUG):
            return await fn(self, params)
        ambient = trace.get_current_span()
        by = "ref" if params.ref_id else "location"
        with span(FETCH) as live:
            if live.is_recording():
                live.set_attributes({FETCH_BY: by, FETCH_MODE: params.mode or "snippet"})
            try:
                out = await fn(self, params)
            except Exception as exc:
                source = _fetch_source(self, params, exc)
                outcome = "not_found" if error_code(exc) == "NOT_FOUND" else "failed"
                if live.is_recording():
                    live.set_attributes({FETCH_PROVIDER: "none", FETCH_SOURCE: source})
                if ambient.is_recording():
                    ambient.set_attribute(FETCH_PROVIDER, "none")
                if state.metrics:
                    state.fetches.add(1, {"source": source, "outcome": outcome})
                log.debug("fetch by %s failed: %s", by, error_code(exc))
                raise
            if live.is_recording():
                attributes = {
                    FETCH_PROVIDER: out.provider,
                    FETCH_SOURCE: out.source,
                    FETCH_LINES: max(0, out.end_line - out.start_line + 1),
                    FETCH_TRUNCATED: out.truncated,
                    REVISION_SKEW: out.revision_skew,
                    DOC_VERSION: out.doc_version,
                }
                attributes.update(resolution_attributes(out.resolution))
                live.set_attributes(attributes)
            if ambient.is_recording():
                ambient.set_attribute(FETCH_PROVIDER, out.provider)
        if state.metrics:
            state.fetches.add(1, {"source": out.source, "outcome": "ok"})
        log.debug(
            "fetch by %s served by %s from %s (%s, rule %s)",
            by,
            out.provider,
            out.source,
            out.resolution.reason,
            out.resolution.rule,
        )
        return out

    return wrapper


def record_rpc(method: str, code: str, started: float) -> None:
    """Record one RPC's latency (from ``time.perf_counter()`` at ``started``) and its status.

    A failed call also marks the ambient server span: the engine's errors end the call with
    ``abort_with_status``, which the gRPC instrumentation does not see.
    """
    state = _state.current
    if not state.active:
        return
    status = _grpc_status(code)
    if state.metrics:
        state.rpc_duration.record(
            time.perf_counter() - started,
            {"rpc.method": method, "rpc.grpc.status_code": status},
        )
    if state.tracing and code != "OK":
        ambient = trace.get_current_span()
        if ambient.is_recording():
            ambient.set_status(Status(StatusCode.ERROR, code))
            ambient.set_attributes({"rpc.grpc.status_code": status, ERROR_CODE: code})


def _grpc_status(code: str) -> int:
    import grpc

    member = grpc.StatusCode.__members__.get(code, grpc.StatusCode.UNKNOWN)
    return member.value[0]


def record_index_build(summary: Any) -> None:
    """A span for a newly written index generation, back-dated to when the build began."""
    if not _state.current.tracing or summary is None:
        return
    now = time.time_ns()
    started = now - int(summary.seconds * 1e9)
    live = _state.current.tracer.start_span(INDEX_BUILD, start_time=started)
    live.set_attributes(
        {
            INDEX_GENERATION: summary.generation,
            INDEX_DOCUMENTS: summary.documents,
            INDEX_BLOCKS: summary.blocks,
            INDEX_CHANGED: summary.changed,
            INDEX_REMOVED: summary.removed,
            INDEX_RESUMED: summary.resumed,
        }
    )
    live.end(end_time=now)
