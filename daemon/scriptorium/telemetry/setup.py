"""Installing telemetry: providers, exporters, instruments and the server interceptor.

The SDK and the exporters are imported only when ``configure`` turns something on, so no
collector is ever required and an idle daemon loads none of them.
"""

from __future__ import annotations

import logging
from typing import Any

from scriptorium.settings.telemetry import TelemetrySettings
from scriptorium.telemetry import _state
from scriptorium.telemetry._state import State
from scriptorium.telemetry.names import (
    FETCHES,
    GAUGE_BLOCKS,
    GAUGE_BYTES,
    GAUGE_DOCUMENTS,
    GAUGE_STALENESS,
    INSTRUMENTATION_NAME,
    RPC_BUCKETS,
    RPC_DURATION,
    SEARCHES,
)

log = logging.getLogger("scriptorium.telemetry")


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
    shutdown()
    settings = settings or TelemetrySettings()
    state = State()
    if span_exporter is not None or settings.tracing:
        state.tracer_provider = _tracer_provider(settings, span_exporter)
        state.tracer = state.tracer_provider.get_tracer(INSTRUMENTATION_NAME, _version())
        state.tracing = True
    if metric_reader is not None or settings.metrics:
        state.meter_provider = _meter_provider(settings, metric_reader)
        _instruments(state)
        state.metrics = True
    _state.current = state
    if state.active:
        log.info(
            "telemetry: traces %s, metrics %s",
            "in-process" if span_exporter is not None else settings.exporter,
            "in-process" if metric_reader is not None else settings.metrics_exporter,
        )


def shutdown() -> None:
    """Flush and stop whatever is installed; telemetry is off afterwards."""
    state, _state.current = _state.current, State()
    for provider in (state.tracer_provider, state.meter_provider):
        if provider is not None:
            try:
                provider.shutdown()
            except Exception as exc:  # a failing exporter must not fail the shutdown
                log.warning("telemetry shutdown: %s", type(exc).__name__)


def tracing_enabled() -> bool:
    return _state.current.tracing


def metrics_enabled() -> bool:
    return _state.current.metrics


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


def _instruments(state: State) -> None:
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
    if _state.current.metrics:
        _state.current.engines.append(engine)


def server_interceptors() -> list[Any]:
    """The gRPC server-span interceptor when tracing is on (health and reflection excluded).

    The interceptor is the one ``GrpcAioInstrumentorServer`` installs, added to this server
    only: the instrumentor would patch ``grpc.aio.server`` for the whole process, once. Health
    is excluded because instrumenting it breaks its streaming ``Watch``.
    """
    state = _state.current
    if not state.tracing:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters

    probes = filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection."))
    return [
        aio_server_interceptor(
            tracer_provider=state.tracer_provider, filter_=filters.negate(probes)
        )
    ]
