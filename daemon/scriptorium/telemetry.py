"""Traces and metrics: an OpenTelemetry span per retrieval stage, counters for outcomes.

Off by default, and cheap when off: every helper checks one flag first, the tracer is a no-op
and attribute dicts are built only for a recording span. The SDK and the exporters are imported
only when ``configure`` turns something on, so no collector is ever required.

Privacy: free text from a caller (a query, a location, a topic) never becomes a span attribute,
an event, a status description, a metric attribute or a log argument here. Queries are
described by their length and term count only; their terms are not recorded either, because a
pasted secret survives tokenisation. Failures are described by their status code, never by
their message (a message may quote the request).

Attribution follows the seed's split: ``scriptorium.search.provider`` and
``scriptorium.fetch.provider`` are separate attributes, written on the operation's own span and
on the ambient span around it (the gRPC server span), so one trace can show who answered the
search and who served the page without one overwriting the other.
"""

from __future__ import annotations

import functools
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from scriptorium.config import TelemetrySettings

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

INSTRUMENTATION_NAME = "scriptorium"

# -- span names ---------------------------------------------------------------------------------

SEARCH = "scriptorium.search"
UNDERSTAND = "scriptorium.query.understand"
RETRIEVE = "scriptorium.retrieve"
FUSE = "scriptorium.rank.fuse"
PRIORS = "scriptorium.rank.priors"
RERANK = "scriptorium.rank.rerank"
DIVERSIFY = "scriptorium.rank.diversify"
BUILD_RESULTS = "scriptorium.results.build"
FETCH = "scriptorium.fetch"
RESOLVE = "scriptorium.resolve"
CUT = "scriptorium.content.cut"
INDEX_BUILD = "scriptorium.index.build"
STAGE_SPANS = (UNDERSTAND, RETRIEVE, FUSE, PRIORS, RERANK, DIVERSIFY, BUILD_RESULTS)

# -- attribute names ----------------------------------------------------------------------------

QUERY_CHARS = "scriptorium.query.chars"
TERM_COUNT = "scriptorium.query.term_count"
QUERY_MODE = "scriptorium.query.mode"
QUERY_KINDS = "scriptorium.query.kinds"
QUERY_SOURCES = "scriptorium.query.sources"
QUERY_TOP_K = "scriptorium.query.top_k"
QUERY_TOKEN_BUDGET = "scriptorium.query.token_budget"
QUERY_EXPLAIN = "scriptorium.query.explain"
QUERY_AS_OF = "scriptorium.query.as_of"
QUERY_SURFACE_CHARS = "scriptorium.query.surface_chars"
SEARCH_PROVIDER = "scriptorium.search.provider"
FETCH_PROVIDER = "scriptorium.fetch.provider"
RESULT_COUNT = "scriptorium.result_count"
MIN_PREVIEW_CHARS = "scriptorium.min_preview_chars"
ABSTAINED = "scriptorium.search.abstained"
ABSTAIN_REASON = "scriptorium.search.abstain_reason"
CONFLICTS = "scriptorium.search.conflicts"
TOKENS_USED = "scriptorium.tokens_used"
SOURCE = "scriptorium.source"
CANDIDATE_COUNT = "scriptorium.candidate_count"
CANDIDATE_LIMIT = "scriptorium.candidate_limit"
TOP_SCORE = "scriptorium.top_score"
FUSION_METHOD = "scriptorium.fusion.method"
FUSION_CORPORA = "scriptorium.fusion.corpora"
RANK_MODE = "scriptorium.rank.mode"
KEPT = "scriptorium.kept"
DROPPED = "scriptorium.dropped"
DROPPED_DUPLICATES = "scriptorium.dropped.duplicates"
DROPPED_DIVERSITY = "scriptorium.dropped.diversity"
FETCH_BY = "scriptorium.fetch.by"
FETCH_MODE = "scriptorium.fetch.mode"
FETCH_SOURCE = "scriptorium.fetch.source"
FETCH_LINES = "scriptorium.fetch.lines"
FETCH_TRUNCATED = "scriptorium.fetch.truncated"
REVISION_SKEW = "scriptorium.fetch.revision_skew"
DOC_VERSION = "scriptorium.doc_version"
RESOLUTION_REASON = "scriptorium.resolution.reason"
RESOLUTION_RULE = "scriptorium.resolution.rule"
RESOLUTION_SITE = "scriptorium.resolution.site"
RESOLUTION_CANDIDATES = "scriptorium.resolution.candidates"
CONTENT_KIND = "scriptorium.content.kind"
CONTENT_LINES = "scriptorium.content.lines"
CONTENT_RANGES = "scriptorium.content.ranges"
INDEX_GENERATION = "scriptorium.index.generation"
INDEX_DOCUMENTS = "scriptorium.index.documents"
INDEX_BLOCKS = "scriptorium.index.blocks"
INDEX_CHANGED = "scriptorium.index.changed"
INDEX_REMOVED = "scriptorium.index.removed"
ERROR_CODE = "scriptorium.error.code"
RETRIEVE_SOURCE_EVENT = "scriptorium.retrieve.source"

# -- metric names -------------------------------------------------------------------------------

SEARCHES = "scriptorium.searches"
FETCHES = "scriptorium.fetches"
RPC_DURATION = "scriptorium.rpc.duration"
GAUGE_DOCUMENTS = "scriptorium.index.documents"
GAUGE_BLOCKS = "scriptorium.index.blocks"
GAUGE_BYTES = "scriptorium.index.bytes"
GAUGE_STALENESS = "scriptorium.index.staleness"
# Seconds; sized for calls between a fraction of a millisecond and a few seconds.
RPC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass
class _State:
    """What ``configure`` installed; one instance per process, replaced whole."""

    tracing: bool = False
    metrics: bool = False
    tracer: trace.Tracer = field(default_factory=trace.NoOpTracer)
    tracer_provider: Any = None
    meter_provider: Any = None
    searches: Any = None
    fetches: Any = None
    rpc_duration: Any = None
    engines: list[Any] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.tracing or self.metrics


_state = _State()


# -- configuration ------------------------------------------------------------------------------


def configure(
    settings: TelemetrySettings | None = None,
    *,
    span_exporter: Any = None,
    metric_reader: Any = None,
) -> None:
    """Install tracing and metrics as ``settings`` say (replacing what was installed).

    ``span_exporter`` (exported synchronously) and ``metric_reader`` override the configured
    exporters; tests pass in-memory ones.
    """
    global _state
    shutdown()
    settings = settings or TelemetrySettings()
    state = _State()
    if span_exporter is not None or settings.tracing:
        state.tracer_provider = _tracer_provider(settings, span_exporter)
        state.tracer = state.tracer_provider.get_tracer(INSTRUMENTATION_NAME, _version())
        state.tracing = True
    if metric_reader is not None or settings.metrics:
        state.meter_provider = _meter_provider(settings, metric_reader)
        _instruments(state)
        state.metrics = True
    _state = state
    if state.active:
        log.info(
            "telemetry: traces %s, metrics %s",
            "in-process" if span_exporter is not None else settings.exporter,
            "in-process" if metric_reader is not None else settings.metrics_exporter,
        )


def shutdown() -> None:
    """Flush and stop whatever is installed; telemetry is off afterwards."""
    global _state
    state, _state = _state, _State()
    for provider in (state.tracer_provider, state.meter_provider):
        if provider is not None:
            try:
                provider.shutdown()
            except Exception as exc:  # a failing exporter must not fail the shutdown
                log.warning("telemetry shutdown: %s", type(exc).__name__)


def tracing_enabled() -> bool:
    return _state.tracing


def metrics_enabled() -> bool:
    return _state.metrics


def _version() -> str:
    from scriptorium import __version__

    return __version__


def _resource(settings: TelemetrySettings):
    from opentelemetry.sdk.resources import Resource

    return Resource.create({"service.name": settings.service_name, "service.version": _version()})


def _tracer_provider(settings: TelemetrySettings, span_exporter: Any):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    provider = TracerProvider(
        resource=_resource(settings),
        sampler=ParentBased(TraceIdRatioBased(settings.sample_ratio)),
    )
    if span_exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    else:
        provider.add_span_processor(BatchSpanProcessor(_span_exporter(settings)))
    return provider


def _span_exporter(settings: TelemetrySettings):
    kind = settings.exporter
    if kind == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        # One JSON object per line: greppable, and ``jq`` reads it as a stream.
        return ConsoleSpanExporter(
            service_name=settings.service_name,
            formatter=lambda span: span.to_json(indent=None) + "\n",
        )
    if kind == "otlp-grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(**_grpc_options(settings))
    if kind == "otlp-http":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpSpanExporter,
        )

        return HttpSpanExporter(**_http_options(settings, "traces"))
    raise ValueError(f"unknown trace exporter {kind!r}")


def _meter_provider(settings: TelemetrySettings, metric_reader: Any):
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

    if metric_reader is None:
        metric_reader = PeriodicExportingMetricReader(
            _metric_exporter(settings),
            export_interval_millis=settings.metrics_interval_seconds * 1000,
            export_timeout_millis=settings.export_timeout_seconds * 1000,
        )
    return MeterProvider(metric_readers=[metric_reader], resource=_resource(settings))


def _metric_exporter(settings: TelemetrySettings):
    kind = settings.metrics_exporter
    if kind == "console":
        from opentelemetry.sdk.metrics.export import ConsoleMetricExporter

        return ConsoleMetricExporter(formatter=lambda data: data.to_json(indent=None) + "\n")
    if kind == "otlp-grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter(**_grpc_options(settings))
    if kind == "otlp-http":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
            OTLPMetricExporter as HttpMetricExporter,
        )

        return HttpMetricExporter(**_http_options(settings, "metrics"))
    raise ValueError(f"unknown metrics exporter {kind!r}")


def _grpc_options(settings: TelemetrySettings) -> dict[str, Any]:
    return {
        "endpoint": settings.endpoint or None,
        "headers": dict(settings.headers) or None,
        "timeout": settings.export_timeout_seconds,
    }


def http_endpoint(endpoint: str, signal: str) -> str | None:
    """The per-signal OTLP/HTTP URL for a base endpoint (``/v1/traces``, ``/v1/metrics``)."""
    if not endpoint:
        return None
    base = endpoint.rstrip("/")
    for suffix in ("/v1/traces", "/v1/metrics"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return f"{base}/v1/{signal}"


def _http_options(settings: TelemetrySettings, signal: str) -> dict[str, Any]:
    return {
        "endpoint": http_endpoint(settings.endpoint, signal),
        "headers": dict(settings.headers) or None,
        "timeout": settings.export_timeout_seconds,
    }


def _instruments(state: _State) -> None:
    meter = state.meter_provider.get_meter(INSTRUMENTATION_NAME, _version())
    state.searches = meter.create_counter(
        SEARCHES, unit="{search}", description="Searches answered, by source scope and outcome"
    )
    state.fetches = meter.create_counter(
        FETCHES, unit="{fetch}", description="GetContent calls, by source and outcome"
    )
    state.rpc_duration = meter.create_histogram(
        RPC_DURATION,
        unit="s",
        description="Time to answer each retrieval RPC",
        explicit_bucket_boundaries_advisory=RPC_BUCKETS,
    )
    engines = state.engines
    for name, unit, description, value in (
        (GAUGE_DOCUMENTS, "{document}", "Indexed documents per source", "document_count"),
        (GAUGE_BLOCKS, "{block}", "Indexed blocks per source", "block_count"),
        (GAUGE_BYTES, "By", "Indexed bytes per source", "bytes"),
        (GAUGE_STALENESS, "s", "Seconds since a source was last scanned", "staleness_seconds"),
    ):
        meter.create_observable_gauge(
            name,
            callbacks=[_gauge_callback(engines, value)],
            unit=unit,
            description=description,
        )


def _gauge_callback(engines: list[Any], value: str):
    from opentelemetry.metrics import Observation

    def observe(_options: Any) -> list[Observation]:
        out = []
        for engine in engines:
            try:
                reports = engine.list_sources()
            except Exception:  # an engine that is still loading has nothing to report
                continue
            for report in reports:
                attributes = {"source": report.name, "state": report.state}
                out.append(Observation(getattr(report, value), attributes))
        return out

    return observe


def observe_engine(engine: Any) -> None:
    """Report ``engine.list_sources()`` through the index-size and staleness gauges."""
    if _state.metrics:
        _state.engines.append(engine)


def server_interceptors() -> list[Any]:
    """The gRPC server-span interceptor when tracing is on (health and reflection excluded).

    The interceptor is the one ``GrpcAioInstrumentorServer`` installs, added to this server
    only: the instrumentor would patch ``grpc.aio.server`` for the whole process, once. Health
    is excluded because instrumenting it breaks its streaming ``Watch``.
    """
    if not _state.tracing:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters

    probes = filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection."))
    return [
        aio_server_interceptor(
            tracer_provider=_state.tracer_provider, filter_=filters.negate(probes)
        )
    ]


# -- spans --------------------------------------------------------------------------------------


def current_trace_id() -> str:
    """The active trace's id (32 hex digits), or a random id of the same shape."""
    if _state.tracing:
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            return format(context.trace_id, "032x")
    return secrets.token_hex(16)


class _NoSpan:
    """A reusable context manager that yields the non-recording span."""

    __slots__ = ()

    def __enter__(self) -> Span:
        return trace.INVALID_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


def span(name: str):
    """A child span of the current one (the non-recording span when tracing is off).

    Exceptions are recorded by type and code only, never by message.
    """
    if not _state.tracing:
        return _NO_SPAN
    return _live_span(name)


@contextmanager
def _live_span(name: str) -> Iterator[Span]:
    with _state.tracer.start_as_current_span(
        name, record_exception=False, set_status_on_exception=False
    ) as live:
        try:
            yield live
        except BaseException as exc:
            mark_error(live, exc)
            raise


def error_code(exc: BaseException) -> str:
    """A failure's status code name (``NOT_FOUND``...) or its type name, never its message."""
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) else type(exc).__name__


def mark_error(target: Span, exc: BaseException) -> None:
    """Mark ``target`` failed with the error's code; a resolution adds its reason and rule."""
    if not target.is_recording():
        return
    code = error_code(exc)
    target.set_status(Status(StatusCode.ERROR, code))
    target.set_attribute(ERROR_CODE, code)
    resolution = getattr(exc, "resolution", None)
    if resolution is not None:
        target.set_attributes(resolution_attributes(resolution))


def traced(name: str, describe: Callable[..., None] | None = None) -> Callable[[F], F]:
    """Run a function inside leaf span ``name``; ``describe(span, result, *args)`` annotates it.

    ``describe`` runs only for a recording span, so attributes cost nothing when tracing is off.
    The span is a child of the current one but is not made current itself (a stage opens no
    spans of its own), which saves a context switch per stage.
    """

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            state = _state
            if not state.tracing:
                return fn(*args, **kwargs)
            live = state.tracer.start_span(name)
            try:
                result = fn(*args, **kwargs)
                if describe is not None and live.is_recording():
                    describe(live, result, *args, **kwargs)
                return result
            except BaseException as exc:
                mark_error(live, exc)
                raise
            finally:
                live.end()

        return wrapper  # type: ignore[return-value]

    return decorate


# -- describers: what each stage span says --------------------------------------------------


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
        state = _state
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


def describe_retrieval(target: Span, hits: Sequence[Any], *args: Any, **kwargs: Any) -> None:
    """``lexical_search``: candidates and top score overall and per source (as events)."""
    limit = args[3] if len(args) > 3 else kwargs.get("limit", 0)
    target.set_attributes(
        {
            CANDIDATE_COUNT: len(hits),
            CANDIDATE_LIMIT: limit,
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


def describe_fusion(target: Span, _result: Any, pipeline: Any, candidates: Sequence[Any]) -> None:
    target.set_attributes(
        {
            FUSION_METHOD: pipeline.settings.fusion,
            CANDIDATE_COUNT: len(candidates),
            FUSION_CORPORA: sorted({str(c.document.corpus) for c in candidates}),
        }
    )


def describe_priors(target: Span, drops: Sequence[Any], *args: Any) -> None:
    candidates = args[2]
    target.set_attributes({KEPT: len(candidates), DROPPED: len(drops)})


def describe_rerank(target: Span, _result: Any, _pipeline: Any, mode: Any, *rest: Any) -> None:
    candidates = rest[1]
    target.set_attributes(
        {
            RANK_MODE: mode.name,
            CANDIDATE_COUNT: len(candidates),
            TOP_SCORE: max((c.score for c in candidates), default=0.0),
        }
    )


def describe_order(target: Span, result: tuple[Any, Any, Any], *args: Any, **kwargs: Any) -> None:
    window, duplicates, diversity = result
    target.set_attributes(
        {
            KEPT: len(window),
            DROPPED_DUPLICATES: len(duplicates),
            DROPPED_DIVERSITY: len(diversity),
            RESULT_COUNT: len(window),
        }
    )


def resolution_attributes(resolution: Any) -> dict[str, Any]:
    """Reason, rule and site of a resolution; never the requested location (caller text)."""
    attributes: dict[str, Any] = {
        RESOLUTION_REASON: resolution.reason,
        RESOLUTION_RULE: resolution.rule,
    }
    if resolution.site:
        attributes[RESOLUTION_SITE] = resolution.site
    if resolution.candidates:
        attributes[RESOLUTION_CANDIDATES] = len(resolution.candidates)
    return attributes


def describe_resolved(target: Span, resolved: Any, *args: Any) -> None:
    target.set_attributes(resolution_attributes(resolved.resolution))


def describe_cut(target: Span, cut: Any, *args: Any, **kwargs: Any) -> None:
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
    state = _state
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


# -- search and fetch operations ----------------------------------------------------------------


def search_scope(sources: Sequence[str]) -> str:
    """The ``source`` metric attribute of a search: the sources it was limited to, or ``all``."""
    return ",".join(sorted(sources)) or "all"


def traced_search(fn: Callable[[Any, Any], Awaitable[T]]) -> Callable[[Any, Any], Awaitable[T]]:
    """For ``search(params)``: the operation span, attribution, and the searches counter."""

    @functools.wraps(fn)
    async def wrapper(self: Any, params: Any) -> Any:
        state = _state
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
        from scriptorium.refs import decode_ref

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
        state = _state
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


# -- RPCs and indexing --------------------------------------------------------------------------


def record_rpc(method: str, code: str, started: float) -> None:
    """Record one RPC's latency (from ``time.perf_counter()`` at ``started``) and its status.

    A failed call also marks the ambient server span: the engine's errors end the call with
    ``abort_with_status``, which the gRPC instrumentation does not see.
    """
    state = _state
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
    if not _state.tracing or summary is None:
        return
    now = time.time_ns()
    live = _state.tracer.start_span(INDEX_BUILD, start_time=now - int(summary.seconds * 1e9))
    live.set_attributes(
        {
            INDEX_GENERATION: summary.generation,
            INDEX_DOCUMENTS: summary.documents,
            INDEX_BLOCKS: summary.blocks,
            INDEX_CHANGED: summary.changed,
            INDEX_REMOVED: summary.removed,
        }
    )
    live.end(end_time=now)
