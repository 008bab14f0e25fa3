"""What ``configure`` installed, shared by every telemetry module (one instance per process).

``current`` is replaced whole (never mutated field by field), so a call that read it once sees
one consistent configuration even while another thread reconfigures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace


@dataclass
class State:
    """The installed providers, tracer and instruments; all off by default."""

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


current = State()
