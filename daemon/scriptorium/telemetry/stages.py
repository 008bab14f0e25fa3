"""What each ranking and fetching stage's span says: counts and validated constraints only."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span

from scriptorium.telemetry import _state
from scriptorium.telemetry.names import (
    BUILD_RESULTS,
    CANDIDATE_COUNT,
    CANDIDATE_LIMIT,
    CONTENT_KIND,
    CONTENT_LINES,
    CONTENT_RANGES,
    DROPPED,
    DROPPED_DIVERSITY,
    DROPPED_DUPLICATES,
    FETCH_TRUNCATED,
    FUSION_CORPORA,
    FUSION_METHOD,
    KEPT,
    MIN_PREVIEW_CHARS,
    QUERY_AS_OF,
    QUERY_CHARS,
    QUERY_EXPLAIN,
    QUERY_KINDS,
    QUERY_MODE,
    QUERY_SOURCES,
    QUERY_SURFACE_CHARS,
    QUERY_TOKEN_BUDGET,
    QUERY_TOP_K,
    RANK_MODE,
    RESULT_COUNT,
    RETRIEVE_SOURCE_EVENT,
    SOURCE,
    TERM_COUNT,
    TOP_SCORE,
    UNDERSTAND,
)
from scriptorium.telemetry.spans import describer, mark_error, resolution_attributes, span

log = logging.getLogger("scriptorium.telemetry")
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def query_attributes(query: Any) -> dict[str, Any]:
    """What a span may say about a query: counts and validated constraints, no text or terms."""
    attributes: dict[str, Any] = {
        QUERY_CHARS: len(query.text),
        TERM_COUNT: len(query.terms),
        QUERY_MODE: query.mode,
        QUERY_KINDS: sorted(str(c) for c in query.corpora),
        QUERY_SOURCES: sorted(query.sources),
        QUERY_TOP_K: query.top_k,
        QUERY_TOKEN_BUDGET: query.token_budget,
        QUERY_EXPLAIN: query.explain,
        QUERY_SURFACE_CHARS: len(query.surface),
    }
    if query.as_of is not None:
        attributes[QUERY_AS_OF] = query.as_of.isoformat()
    return attributes


def understanding(fn: F) -> F:
    """For ``make_query``: a span with the understood query, whose counts also go on the parent."""

    @functools.wraps(fn)
    def wrapper(self: Any, params: Any) -> Any:
        state = _state.current
        if not state.tracing and not log.isEnabledFor(logging.DEBUG):
            return fn(self, params)
        parent = trace.get_current_span()
        with span(UNDERSTAND) as live:
            query = fn(self, params)
            if live.is_recording():
                live.set_attributes(query_attributes(query))
        if parent.is_recording():
            parent.set_attributes({QUERY_CHARS: len(query.text), TERM_COUNT: len(query.terms)})
        log.debug(
            "query understood: %d chars, %d terms, mode %s",
            len(query.text),
            len(query.terms),
            query.mode,
        )
        return query

    return wrapper  # type: ignore[return-value]


@describer("limit")
def describe_retrieval(target: Span, hits: Sequence[Any], args: Mapping[str, Any]) -> None:
    """``lexical_search``: candidates and top score overall and per source (as events)."""
    target.set_attributes(
        {
            CANDIDATE_COUNT: len(hits),
            CANDIDATE_LIMIT: args["limit"],
            TOP_SCORE: max((h.score for h in hits), default=0.0),
        }
    )
    per_source: dict[str, list[float]] = {}
    for hit in hits:
        per_source.setdefault(hit.doc.source, []).append(hit.score)
    for source, scores in sorted(per_source.items()):
        target.add_event(
            RETRIEVE_SOURCE_EVENT,
            {SOURCE: source, CANDIDATE_COUNT: len(scores), TOP_SCORE: max(scores)},
        )


@describer("self", "candidates")
def describe_fusion(target: Span, _result: Any, args: Mapping[str, Any]) -> None:
    candidates = args["candidates"]
    target.set_attributes(
        {
            FUSION_METHOD: args["self"].settings.fusion,
            CANDIDATE_COUNT: len(candidates),
            FUSION_CORPORA: sorted({str(c.document.corpus) for c in candidates}),
        }
    )


@describer("candidates")
def describe_priors(target: Span, drops: Sequence[Any], args: Mapping[str, Any]) -> None:
    target.set_attributes({KEPT: len(args["candidates"]), DROPPED: len(drops)})


@describer("mode", "candidates")
def describe_rerank(target: Span, _result: Any, args: Mapping[str, Any]) -> None:
    candidates = args["candidates"]
    target.set_attributes(
        {
            RANK_MODE: args["mode"].name,
            CANDIDATE_COUNT: len(candidates),
            TOP_SCORE: max((c.score for c in candidates), default=0.0),
        }
    )


@describer()
def describe_order(target: Span, result: tuple[Any, Any, Any], _args: Mapping[str, Any]) -> None:
    window, duplicates, diversity = result
    target.set_attributes(
        {
            KEPT: len(window),
            DROPPED_DUPLICATES: len(duplicates),
            DROPPED_DIVERSITY: len(diversity),
            RESULT_COUNT: len(window),
        }
    )


@describer()
def describe_resolved(target: Span, resolved: Any, _args: Mapping[str, Any]) -> None:
    target.set_attributes(resolution_attributes(resolved.resolution))


@describer()
def describe_cut(target: Span, cut: Any, _args: Mapping[str, Any]) -> None:
    target.set_attributes(
        {
            CONTENT_KIND: str(cut.kind),
            CONTENT_LINES: max(0, cut.end_line - cut.start_line + 1),
            FETCH_TRUNCATED: cut.truncated,
            CONTENT_RANGES: len(cut.ranges),
        }
    )


def min_preview_chars(hits: Sequence[Any]) -> int:
    """Visible, whitespace-collapsed length of the thinnest preview (0 without results)."""
    if not hits:
        return 0
    return min(len(" ".join(h.preview.split())) for h in hits)


def build_results(build: Callable[[Any, Any], T], query: Any, window: Sequence[Any]) -> list[T]:
    """Snippets and previews for the ranked window, inside their own stage span."""
    state = _state.current
    if not state.tracing:
        return [build(query, cand) for cand in window]
    live = state.tracer.start_span(BUILD_RESULTS)
    try:
        hits = [build(query, cand) for cand in window]
    except BaseException as exc:
        mark_error(live, exc)
        live.end()
        raise
    if live.is_recording():
        live.set_attributes({RESULT_COUNT: len(hits), MIN_PREVIEW_CHARS: min_preview_chars(hits)})
    live.end()
    return hits
