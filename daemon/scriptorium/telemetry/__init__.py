"""Traces and metrics: an OpenTelemetry span per retrieval stage, counters for outcomes.

Off by default, and cheap when off: every helper checks one flag first, the tracer is a no-op
and attribute dicts are built only for a recording span.

Privacy: free text from a caller (a query, a location, a topic) never becomes a span attribute,
an event, a status description, a metric attribute or a log argument here. Queries are
described by their length and term count only; their terms are not recorded either, because a
pasted secret survives tokenisation. Failures are described by their status code, never by
their message (a message may quote the request).

The package, by job: ``names`` (the vocabulary), ``setup`` (providers, exporters,
instruments), ``spans`` (span helpers and ``traced``), ``stages`` (what each stage span says),
``operations`` (search and fetch operations, RPC latency, index builds). This module is its
face: import from here.
"""

from scriptorium.telemetry.names import *  # noqa: F403 (the vocabulary is the public face)
from scriptorium.telemetry.operations import (
    record_index_build,
    record_rpc,
    search_scope,
    traced_fetch,
    traced_search,
)
from scriptorium.telemetry.setup import (
    configure,
    http_endpoint,
    metrics_enabled,
    observe_engine,
    server_interceptors,
    shutdown,
    tracing_enabled,
)
from scriptorium.telemetry.spans import (
    Describer,
    current_trace_id,
    describer,
    error_code,
    mark_error,
    resolution_attributes,
    span,
    traced,
)
from scriptorium.telemetry.stages import (
    build_results,
    describe_cut,
    describe_fusion,
    describe_order,
    describe_priors,
    describe_rerank,
    describe_resolved,
    describe_retrieval,
    min_preview_chars,
    query_attributes,
    understanding,
)

__all__ = [
    "Describer",
    "build_results",
    "configure",
    "current_trace_id",
    "describe_cut",
    "describe_fusion",
    "describe_order",
    "describe_priors",
    "describe_rerank",
    "describe_resolved",
    "describe_retrieval",
    "describer",
    "error_code",
    "http_endpoint",
    "mark_error",
    "metrics_enabled",
    "min_preview_chars",
    "observe_engine",
    "query_attributes",
    "record_index_build",
    "record_rpc",
    "resolution_attributes",
    "search_scope",
    "server_interceptors",
    "shutdown",
    "span",
    "traced",
    "traced_fetch",
    "traced_search",
    "tracing_enabled",
    "understanding",
]
