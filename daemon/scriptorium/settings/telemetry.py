"""The [telemetry] table: where traces and metrics go, validated (nowhere by default)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from scriptorium.settings.schema import ConfigError, Key, check_table, table_of

TELEMETRY_EXPORTERS = ("none", "console", "otlp-grpc", "otlp-http")


@dataclass
class TelemetrySettings:
    """The [telemetry] table: where traces and metrics go. Nowhere by default.

    No collector is ever required: with ``none`` nothing is exported and the tracer is a no-op;
    an unreachable OTLP endpoint costs failed export attempts in the background, never a call.
    """

    exporter: str = "none"  # traces: none, console, otlp-grpc or otlp-http
    metrics_exporter: str = "none"  # metrics: same choices
    # OTLP endpoint shared by both signals; "" means the exporter's default (localhost). Use an
    # http:// URL for a plaintext gRPC collector; for otlp-http the per-signal path is added.
    endpoint: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    service_name: str = "scriptorium"
    sample_ratio: float = 1.0
    metrics_interval_seconds: float = 60.0
    export_timeout_seconds: float = 5.0

    @property
    def tracing(self) -> bool:
        return self.exporter != "none"

    @property
    def metrics(self) -> bool:
        return self.metrics_exporter != "none"


TELEMETRY_KEYS: tuple[Key, ...] = (
    Key("exporter", "string", "none", "traces: none, console, otlp-grpc or otlp-http"),
    Key("metrics_exporter", "string", "none", "metrics: none, console, otlp-grpc or otlp-http"),
    Key("endpoint", "string", "", "OTLP endpoint shared by both signals"),
    Key("headers", "string_table", {}, "headers sent with every export"),
    Key("service_name", "string", "scriptorium", "service.name of every span and metric"),
    Key("sample_ratio", "number", 1.0, "share of traces kept (0 to 1)"),
    Key("metrics_interval_seconds", "number", 60.0, "seconds between metric exports"),
    Key("export_timeout_seconds", "number", 5.0, "deadline of one export"),
)


def parse_telemetry(value: Any) -> TelemetrySettings:
    """The [telemetry] table, validated; an empty table leaves telemetry off."""
    table = table_of(value, "[telemetry]")
    check_table(table, TELEMETRY_KEYS, "[telemetry]")
    out: dict[str, Any] = {}
    for key in ("exporter", "metrics_exporter"):
        if key in table:
            if table[key].strip().lower() not in TELEMETRY_EXPORTERS:
                raise ConfigError(
                    f"[telemetry] {key} must be one of {', '.join(TELEMETRY_EXPORTERS)}"
                )
            out[key] = table[key].strip().lower()
    for key in ("endpoint", "service_name"):
        if key in table:
            out[key] = table[key].strip()
    if out.get("service_name") == "":
        raise ConfigError("[telemetry] service_name must not be empty")
    if "headers" in table:
        if not all(isinstance(k, str) for k in table["headers"]):
            raise ConfigError("[telemetry] headers must be a table of strings")
        out["headers"] = dict(table["headers"])
    if "sample_ratio" in table:
        if not 0 <= table["sample_ratio"] <= 1:
            raise ConfigError("[telemetry] sample_ratio must be a number from 0 to 1")
        out["sample_ratio"] = float(table["sample_ratio"])
    for key in ("metrics_interval_seconds", "export_timeout_seconds"):
        if key in table:
            if table[key] <= 0:
                raise ConfigError(f"[telemetry] {key} must be a number greater than 0")
            out[key] = float(table[key])
    return TelemetrySettings(**out)
