"""Benchmarks: every figure is reported next to a baseline measured in the same run.

    python bench/run.py [--json PATH] [--quick] [--scales 1,10]

What it measures, on copies of the FastAPI corpus (scaled copies are made by deterministic
mutation, see ``bench/corpus.py``):

* index build time and throughput (``scriptorium index build`` in a fresh state directory);
* cold start of ``scriptorium serve`` to SERVING from an existing generation;
* Search latency (p50/p99, sequential) over gRPC, next to the trivial RPC floor (the health
  Check served by the same server process), and their ratio;
* throughput with 1, 4, 16 and 64 concurrent callers for both;
* the engine alone: the same queries straight against the tantivy index in-process;
* GetContent / ExpandRelated / SummarizeFlow / GuideImplementation latencies;
* resident memory of the daemon and index size on disk per MB of corpus;
* tracing overhead: Search latency and 16-caller throughput of daemons on the same index with
  telemetry off; traces to the console exporter (stdout to /dev/null); the same plus console
  metrics; traces over OTLP/gRPC to a receiver in the bench process, all of them and a 10 %
  sample. Ratios are to "off".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scriptorium.v1 import retrieval_pb2 as pb  # noqa: E402

from bench.corpus import make_scaled_corpus  # noqa: E402
from tests.support.daemon import CORPUS, Daemon, write_fastapi_config  # noqa: E402

QUERIES = [
    "declare path parameters with types",
    "background tasks after response",
    "OAuth2PasswordBearer",
    "dependencies with yield",
    "CORS middleware allow origins",
    "パスパラメータ",
    "查询参数",
    "upload files with form data",
    "jsonable_encoder",
    "testing with TestClient",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def latency(call: Callable[[int], object], n: int) -> dict:
    for i in range(min(20, n)):
        call(i)
    samples = []
    for i in range(n):
        start = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - start) * 1000)
    return {
        "p50_ms": round(statistics.median(samples), 3),
        "p99_ms": round(percentile(samples, 0.99), 3),
        "n": n,
    }


def throughput(
    make_call: Callable[[], Callable[[int], object]], callers: int, seconds: float
) -> float:
    stop = time.monotonic() + seconds
    counts = [0] * callers

    def worker(slot: int) -> None:
        call = make_call()
        i = 0
        while time.monotonic() < stop:
            call(i)
            i += 1
        counts[slot] = i

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return round(sum(counts) / seconds, 1)


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def dir_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 2)


def corpus_mb(corpus: Path) -> float:
    total = 0
    for sub in ("docs", "fastapi", "docs_src"):
        total += sum(p.stat().st_size for p in (corpus / sub).rglob("*") if p.is_file())
    return round(total / 1e6, 2)


def build(config: Path, state: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "scriptorium",
            "index",
            "build",
            "--config",
            str(config),
            "--state-dir",
            str(state),
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def bench_scale(scale: int, work: Path, quick: bool) -> dict:
    corpus = CORPUS if scale == 1 else make_scaled_corpus(CORPUS, work / f"corpus-x{scale}", scale)
    config = write_fastapi_config(work / f"x{scale}.toml", corpus)
    state = work / f"state-x{scale}"
    size_mb = corpus_mb(corpus)
    build_s = build(config, state)
    result: dict = {
        "scale": scale,
        "corpus_mb": size_mb,
        "index_build_s": round(build_s, 2),
        "index_build_mb_per_s": round(size_mb / build_s, 2),
        "index_on_disk_mb": dir_mb(state / "generations") + dir_mb(state / "blobs"),
    }
    result["index_per_corpus_mb"] = round(result["index_on_disk_mb"] / size_mb, 2)
    daemon = Daemon(["--config", str(config)], state)
    started = time.perf_counter()
    daemon.start()
    result["cold_start_s"] = round(time.perf_counter() - started, 3)
    try:
        stub = daemon.stub
        health = health_pb2_grpc.HealthStub(daemon.channel)
        n = 200 if quick else 1000
        search = latency(
            lambda i: stub.Search(pb.SearchRequest(query=QUERIES[i % len(QUERIES)])), n
        )
        floor = latency(lambda i: health.Check(health_pb2.HealthCheckRequest()), n)
        result["search"] = search
        result["trivial_rpc"] = floor
        result["search_p50_over_trivial"] = round(search["p50_ms"] / floor["p50_ms"], 2)
        result["rss_mb"] = rss_mb(daemon.proc.pid)
        seconds = 1.5 if quick else 4.0

        def search_caller():
            channel = grpc.insecure_channel(daemon.address)
            s = pb_stub(channel)
            return lambda i: s.Search(pb.SearchRequest(query=QUERIES[i % len(QUERIES)]))

        def health_caller():
            channel = grpc.insecure_channel(daemon.address)
            h = health_pb2_grpc.HealthStub(channel)
            return lambda i: h.Check(health_pb2.HealthCheckRequest())

        result["throughput"] = {}
        for callers in (1, 4, 16, 64):
            s_rate = throughput(search_caller, callers, seconds)
            h_rate = throughput(health_caller, callers, seconds)
            result["throughput"][str(callers)] = {
                "search_per_s": s_rate,
                "trivial_per_s": h_rate,
                "ratio": round(s_rate / h_rate, 2) if h_rate else 0.0,
            }
        first = stub.Search(pb.SearchRequest(query="dependencies with yield")).results
        if first:
            ref = first[0].ref_id
            result["get_content"] = latency(
                lambda i: stub.GetContent(pb.GetContentRequest(ref_id=ref)), n // 4
            )
            for name, call in (
                (
                    "expand_related",
                    lambda i: stub.ExpandRelated(pb.ExpandRelatedRequest(ref_ids=[ref])),
                ),
                (
                    "summarize_flow",
                    lambda i: stub.SummarizeFlow(pb.SummarizeFlowRequest(ref_ids=[ref])),
                ),
                (
                    "guide_implementation",
                    lambda i: stub.GuideImplementation(
                        pb.GuideImplementationRequest(
                            topic="add OAuth2 password login", framework="fastapi"
                        )
                    ),
                ),
            ):
                try:
                    result[name] = latency(call, max(10, n // 20))
                except grpc.RpcError as exc:
                    result[name] = {"unavailable": exc.code().name}
        result["rss_mb_after_load"] = rss_mb(daemon.proc.pid)
    finally:
        daemon.terminate()
    result["engine_alone"] = engine_alone(config, state, 200 if quick else 1000)
    if result["engine_alone"].get("p50_ms"):
        result["search_p50_over_engine"] = round(
            result["search"]["p50_ms"] / result["engine_alone"]["p50_ms"], 2
        )
    result["tracing_overhead"] = tracing_overhead(config, state, quick)
    return result


class ConsoleDaemon(Daemon):
    """A daemon whose stdout, where the console exporters write, goes to /dev/null."""

    def start(self, timeout: float = 120.0) -> ConsoleDaemon:
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            self.cmd, stdout=subprocess.DEVNULL, stderr=self._log, env=self.env
        )
        self.channel = grpc.insecure_channel(self.address)
        self.wait_serving(timeout)
        return self


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
        s = pb_stub(grpc.insecure_channel(daemon.address))
        return lambda i: s.Search(pb.SearchRequest(query=QUERIES[i % len(QUERIES)]))

    measured["search_per_s_16"] = throughput(caller, 16, seconds)
    return measured


def pb_stub(channel):
    from scriptorium.v1 import retrieval_pb2_grpc

    return retrieval_pb2_grpc.RetrievalServiceStub(channel)


def engine_alone(config: Path, state: Path, n: int) -> dict:
    """The same queries straight against the tantivy index, in this process."""
    from scriptorium.config import load_settings
    from scriptorium.index.searcher import lexical_search
    from scriptorium.plugins import load_registry
    from scriptorium.retrieval import LocalEngine
    from scriptorium.text import query_terms

    settings = load_settings(config, state_dir=str(state))
    engine = LocalEngine(settings, load_registry())
    engine.load_or_build()
    snapshot = engine.snapshot
    terms = [tuple(query_terms(q)) for q in QUERIES]
    weights = engine.ranking.weights
    limit = engine.ranking.candidate_limit(10)
    return latency(lambda i: lexical_search(snapshot, terms[i % len(terms)], weights, limit), n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--quick", action="store_true", help="fewer samples (for smoke runs)")
    parser.add_argument("--scales", default="1", help="corpus scales, e.g. 1,10,100")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="scriptorium-bench-"))
    results = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "scales": []}
    try:
        for scale in (int(s) for s in args.scales.split(",")):
            results["scales"].append(bench_scale(scale, work, args.quick))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(render(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


def render(results: dict) -> str:
    lines = []
    for r in results["scales"]:
        lines.append(f"== corpus x{r['scale']}: {r['corpus_mb']} MB ==")
        lines.append(
            f"index build        {r['index_build_s']:>8} s   ({r['index_build_mb_per_s']} MB/s; "
            f"on disk {r['index_on_disk_mb']} MB = {r['index_per_corpus_mb']}x corpus)"
        )
        lines.append(
            f"cold start         {r['cold_start_s']:>8} s   (existing generation → SERVING)"
        )
        s, f = r["search"], r["trivial_rpc"]
        lines.append(f"search p50/p99     {s['p50_ms']:>8} / {s['p99_ms']} ms")
        lines.append(f"trivial p50/p99    {f['p50_ms']:>8} / {f['p99_ms']} ms")
        lines.append(f"search/trivial p50 {r['search_p50_over_trivial']:>8} x   (target ≤ 2)")
        e = r.get("engine_alone", {})
        if e:
            lines.append(
                f"engine alone p50   {e['p50_ms']:>8} ms  (gRPC search is {r.get('search_p50_over_engine')}x)"
            )
        for callers, t in r["throughput"].items():
            lines.append(
                f"throughput @{callers:<3}    {t['search_per_s']:>8} search/s vs {t['trivial_per_s']} trivial/s"
                f" = {t['ratio']}"
            )
        for name in ("get_content", "expand_related", "summarize_flow", "guide_implementation"):
            if name in r:
                v = r[name]
                text = (
                    f"{v['p50_ms']} / {v['p99_ms']} ms"
                    if "p50_ms" in v
                    else v.get("unavailable", "")
                )
                lines.append(f"{name:<18} {text}")
        lines.append(
            f"daemon RSS         {r['rss_mb']} MB (after load test {r['rss_mb_after_load']} MB)"
        )
        lines.extend(render_tracing(r.get("tracing_overhead", {})))
    return "\n".join(lines)


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


if __name__ == "__main__":
    raise SystemExit(main())
