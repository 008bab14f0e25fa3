"""Tracing overhead: Search latency and throughput of daemons with telemetry off and on.

Daemons on the same index run with telemetry off; traces to the console exporter (stdout to
/dev/null); the same plus console metrics; traces over OTLP/gRPC to a receiver in the bench
process, all of them and a 10 % sample. Ratios are to "off".
"""

from __future__ import annotations

from pathlib import Path

import grpc

from bench.measure import client_channel, latency, throughput
from bench.queries import QUERIES
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon


class ConsoleDaemon(Daemon):
    """A daemon whose stdout, where the console exporters write, goes to /dev/null."""

    stdout_to_log = False


TRACING_VARIANTS = {
    "off": "",
    "console": '\n[telemetry]\nexporter = "console"\n',
    "console_metrics": '\n[telemetry]\nexporter = "console"\nmetrics_exporter = "console"\n',
    "otlp_grpc": '\n[telemetry]\nexporter = "otlp-grpc"\nendpoint = "{endpoint}"\n',
    "otlp_grpc_10pct": (
        '\n[telemetry]\nexporter = "otlp-grpc"\nendpoint = "{endpoint}"\nsample_ratio = 0.1\n'
    ),
}


class OtlpSink:
    """A minimal OTLP/gRPC trace receiver in the bench process; it counts what it receives."""

    def __init__(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from opentelemetry.proto.collector.trace.v1 import (
            trace_service_pb2,
            trace_service_pb2_grpc,
        )

        sink = self
        self.spans = 0

        class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):
                for resource in request.resource_spans:
                    sink.spans += sum(len(scope.spans) for scope in resource.scope_spans)
                return trace_service_pb2.ExportTraceServiceResponse()

        self.server = grpc.server(ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(), self.server)
        port = self.server.add_insecure_port("127.0.0.1:0")
        self.endpoint = f"http://127.0.0.1:{port}"
        self.server.start()

    def stop(self) -> None:
        self.server.stop(0)


def tracing_overhead(config: Path, state: Path, quick: bool) -> dict:
    """Search latency and 16-caller throughput with telemetry off and on, same index, same run.

    The three daemons run side by side (idle ones cost no CPU: the bench config has no watcher)
    and are measured in alternating rounds, keeping each variant's best round, so a noisy
    neighbour on the machine does not land on one variant only.
    """
    n = 200 if quick else 1000
    seconds = 1.5 if quick else 4.0
    rounds = 1 if quick else 3
    base = config.read_text(encoding="utf-8")
    daemons: dict[str, Daemon] = {}
    out: dict = {
        "exporters": "batch span processor; console to /dev/null, or OTLP/gRPC to an in-bench sink"
    }
    sink = OtlpSink()
    try:
        for name, table in TRACING_VARIANTS.items():
            variant = config.with_name(f"{config.stem}-{name}.toml")
            variant.write_text(base + table.replace("{endpoint}", sink.endpoint), encoding="utf-8")
            daemons[name] = ConsoleDaemon(["--config", str(variant)], state).start()
        runs: dict[str, list[dict]] = {name: [] for name in daemons}
        for _ in range(rounds):
            for name, daemon in daemons.items():
                runs[name].append(_search_load(daemon, n, seconds))
    finally:
        for daemon in daemons.values():
            daemon.terminate()
        sink.stop()
    out["otlp_spans_received"] = sink.spans
    for name, measured in runs.items():
        out[name] = {
            "p50_ms": min(m["p50_ms"] for m in measured),
            "p99_ms": min(m["p99_ms"] for m in measured),
            "n": n,
            "search_per_s_16": max(m["search_per_s_16"] for m in measured),
        }
    off = out["off"]
    for name in TRACING_VARIANTS:
        if name != "off":
            out[name]["p50_over_off"] = round(out[name]["p50_ms"] / off["p50_ms"], 2)
            out[name]["throughput_over_off"] = round(
                out[name]["search_per_s_16"] / off["search_per_s_16"], 2
            )
    out["rounds"] = rounds
    return out


def _search_load(daemon: Daemon, n: int, seconds: float) -> dict:
    """Sequential Search latency and 16-caller Search throughput against one daemon."""
    stub = daemon.stub
    measured = latency(lambda i: stub.Search(pb.SearchRequest(query=QUERIES[i % len(QUERIES)])), n)

    def caller():
        s = pb_stub(client_channel(daemon.address))
        return lambda i: s.Search(pb.SearchRequest(query=QUERIES[i % len(QUERIES)]))

    measured["search_per_s_16"] = throughput(caller, 16, seconds)
    return measured


def pb_stub(channel):
    from scriptorium.v1 import retrieval_pb2_grpc

    return retrieval_pb2_grpc.RetrievalServiceStub(channel)


def render_tracing(t: dict) -> list[str]:
    if "off" not in t:
        return []
    off = t["off"]
    lines = [f"tracing overhead   ({t['exporters']}; best of {t['rounds']} rounds)"]
    lines.append(
        f"  off              p50 {off['p50_ms']} ms, p99 {off['p99_ms']} ms,"
        f" {off['search_per_s_16']} search/s @16"
    )
    for name in TRACING_VARIANTS:
        if name != "off" and name in t:
            v = t[name]
            lines.append(
                f"  {name:<16} p50 {v['p50_ms']} ms ({v['p50_over_off']}x), p99 {v['p99_ms']} ms,"
                f" {v['search_per_s_16']} search/s @16 ({v['throughput_over_off']}x)"
            )
    return lines
