"""Benchmarks: every figure is reported next to a baseline measured in the same run.

    python bench/run.py [--json PATH] [--quick] [--scales 1,10]

The FastAPI corpus is copied (scale 1) or grown by deterministic mutation (scales 10, 100; see
``bench/corpus.py``) into a temporary directory, and for every scale this measures:

* index build: a fresh ``scriptorium index build`` of the whole corpus (MB/s, files/s), and of
  its Markdown alone (the Markdown throughput target);
* index size on disk per MB of corpus;
* cold start of ``scriptorium serve`` to SERVING from the existing generation;
* Search latency (p50/p99, sequential) over gRPC, next to the trivial RPC floor (the health
  Check served by the same server process), and their ratio; the same for every query of the
  evaluation set asked once (no query repeats, so per-block caches see a realistic spread);
* throughput with 1, 4, 16 and 64 concurrent callers for both;
* in-process: the engine alone (the tantivy query) and the whole local search (ranking and
  result building, no gRPC), on the same queries;
* GetContent (a block, the first part of a page under max_chars, an outline) / ExpandRelated /
  SummarizeFlow / GuideImplementation latencies;
* resident memory of the daemon right after start and after the load test, and per MB of
  corpus; at the scales named by ``--cache-scales``, right after start and after every
  evaluation query under several ``text_cache_bytes`` bounds (``bench/memory.py``); and RSS,
  cold start and Search p50 of every scale against the 1x run (``vs_x1``), the Search p50 also
  measured in turns with the 1x daemon serving beside it (``bench/turns.py``);
* incremental updates: seconds from editing a file of the corpus copy until Search finds the
  new word, and the daemon's CPU use while idle, with the watcher on file-system events and,
  as the baseline, listing the roots every tick;
* what the recent ranking levers cost (``bench/ranking_cost.py``): Search p50/p90 of the shipped
  ranking against the same daemon with them off, and in process against block BM25 alone,
  flagged over 1.2x, at the scales named by ``--ranking-cost-scales``;
* tracing overhead (``bench/tracing.py``), at the scales named by ``--tracing-scales``;
* build MB/s per code language and configuration format (``bench/languages.py``), once per
  run, next to the same bytes cut into line windows (skipped with ``--no-languages``).
* build MB/s per documentation format against plain Markdown (``bench/formats.py``).
* a real large tree, tldr-pages at a pinned commit from a local mirror (``bench/realtree.py``):
  Markdown build MB/s, cold start, RSS after start, Search p50; skipped without the mirror.
* a real documentation tree with few headings, the DevDocs pages of code-rag-bench at a pinned
  commit from a local mirror (``bench/devdocs.py``): build MB/s and the building process's peak
  RSS against the targets (≥ 8 MB/s, ≤ 400 MB); skipped without the mirror.
* a large code tree, sympy at a SWE-bench base commit from a local mirror
  (``bench/largecode.py``): short queries and SWE-bench issue texts against the health check's
  p50 of the same run (targets ≤ 3×, ≤ 10× p50 and ≤ 30× p99), 16 callers' throughput against
  the health check's, RSS after the issue texts; skipped without the mirror. With
  ``--large-code-semantic``, the same searches again with the semantic retriever on.
* the HTTP/JSON API's Search latency against the gRPC call on one daemon, as ratios
  (``bench/http_cost.py``), at the scales named by ``--http-scales``.
* the docs through a three-node OpenSearch cluster beside the local index (``bench/cluster.py``:
  push MB/s, Search p50/p99 with the re-rank, throughput over one and three daemons), at the
  scales named by ``--cluster-scales``.

Scales of 100 and more measure with fewer samples and one cold start, and skip the separate
Markdown build, to stay within tens of minutes (docs/performance.md gives timings).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# Every daemon here measures lexical serving unless it asks for the semantic retriever
# (bench/semantic.py): vectors made in the background would share the cores with what is timed.
os.environ.setdefault("SCRIPTORIUM_SEMANTIC", "off")

from bench.cluster import cluster_bench, render_cluster  # noqa: E402
from bench.corpus import make_scaled_corpus  # noqa: E402
from bench.devdocs import devdocs, render_devdocs  # noqa: E402
from bench.formats import doc_formats, render_formats  # noqa: E402
from bench.http_cost import http_cost, render_http_cost  # noqa: E402
from bench.languages import languages_bench, render_languages  # noqa: E402
from bench.largecode import DEFAULT_BENCHMARKS, large_code, render_large_code  # noqa: E402
from bench.lifecycle import cold_start, edit_latency  # noqa: E402
from bench.measure import (  # noqa: E402
    client_channel,
    cpu_seconds,
    dir_mb,
    latency,
    ratio,
    rss_mb,
    summary,
    throughput,
    tree_bytes,
)
from bench.memory import across_scales, cache_bound  # noqa: E402
from bench.queries import QUERIES, eval_queries  # noqa: E402
from bench.ranking_cost import ranking_cost, render_ranking_cost  # noqa: E402
from bench.realtree import DEFAULT_MIRROR, real_tree, render_real_tree  # noqa: E402
from bench.semantic import render_semantic, semantic_cost  # noqa: E402
from bench.targets import check  # noqa: E402
from bench.tracing import pb_stub, render_tracing, tracing_overhead  # noqa: E402
from bench.turns import search_in_turns  # noqa: E402
from scriptorium.launcher import daemon_command  # noqa: E402
from scriptorium.v1 import retrieval_pb2 as pb  # noqa: E402
from tests.support.daemon import CORPUS, Daemon, write_fastapi_config  # noqa: E402

CORPUS_ROOTS = ("docs", "fastapi", "docs_src")
# Seconds an idle daemon is watched for its CPU use (the cost of watching a tree).
IDLE_SECONDS = 5.0


def corpus_sizes(corpus: Path) -> dict:
    files = [p for sub in CORPUS_ROOTS for p in (corpus / sub).rglob("*") if p.is_file()]
    markdown = tree_bytes(corpus / "docs", (".md",))
    code = tree_bytes(corpus / "fastapi", (".py",)) + tree_bytes(corpus / "docs_src", (".py",))
    return {
        "corpus_mb": round(sum(p.stat().st_size for p in files) / 1e6, 2),
        "corpus_files": len(files),
        "markdown_mb": round(markdown / 1e6, 2),
        "code_mb": round(code / 1e6, 2),
    }


def write_code_config(path: Path, corpus: Path) -> Path:
    """The library source and the documentation's examples without the docs."""
    path.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "code"\nkind = "code"\n'
        f'root = "{corpus}"\ninclude = ["fastapi/**/*.py", "docs_src/**/*.py"]\n',
        encoding="utf-8",
    )
    return path


def write_markdown_config(path: Path, corpus: Path) -> Path:
    """The English, Japanese and Chinese documentation without the code."""
    sources = "".join(
        f'\n[[sources]]\nname = "{name}"\nkind = "markdown"\n'
        f'root = "{corpus / "docs" / name / "docs"}"\n'
        for name in ("en", "ja", "zh")
    )
    path.write_text(f"[server]\nwatch = false\n{sources}", encoding="utf-8")
    return path


def build(config: Path, state: Path, megabytes: float, workers: int | None = None) -> dict:
    """A fresh build; ``indexing_s`` is the command's own figure (no interpreter start).

    ``workers`` is ``--build-workers`` (None: the default, one worker process per core).
    """
    started = time.perf_counter()
    command = [*daemon_command(), "--format", "json", "index", "build"]
    if workers is not None:
        command += ["--build-workers", str(workers)]
    done = subprocess.run(
        [*command, "--config", str(config), "--state-dir", str(state)],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    report = json.loads(done.stdout)
    indexing = float(report.get("seconds") or wall)
    documents = int(report.get("documents", 0))
    return {
        "wall_s": round(wall, 2),
        "indexing_s": round(indexing, 2),
        "documents": documents,
        "blocks": int(report.get("blocks", 0)),
        "mb_per_s": round(megabytes / indexing, 2),
        "mb_per_s_wall": round(megabytes / wall, 2),
        "files_per_s": round(documents / indexing, 1),
    }


def bench_scale(scale: int, work: Path, args: argparse.Namespace) -> dict:
    heavy = scale >= 100
    quick = args.quick or heavy
    started = time.perf_counter()
    corpus = make_scaled_corpus(CORPUS, work / f"corpus-x{scale}", scale)
    config = write_fastapi_config(work / f"x{scale}.toml", corpus)
    state = work / f"state-x{scale}"
    result: dict = {"scale": scale, **corpus_sizes(corpus)}
    log(f"x{scale}: corpus {result['corpus_mb']} MB, {result['corpus_files']} files")

    result["build"] = build(config, state, result["corpus_mb"])
    log(f"x{scale}: build {result['build']}")
    if scale <= args.markdown_build_max_scale:
        md_config = write_markdown_config(work / f"x{scale}-md.toml", corpus)
        md_state = work / f"state-x{scale}-md"
        result["build_markdown"] = build(md_config, md_state, result["markdown_mb"])
        shutil.rmtree(md_state, ignore_errors=True)
        log(f"x{scale}: markdown build {result['build_markdown']}")
        result["build_markdown_one_process"] = build(
            md_config, md_state, result["markdown_mb"], workers=1
        )
        shutil.rmtree(md_state, ignore_errors=True)
        log(f"x{scale}: markdown build, one process {result['build_markdown_one_process']}")
        code_config = write_code_config(work / f"x{scale}-code.toml", corpus)
        code_state = work / f"state-x{scale}-code"
        result["build_code"] = build(code_config, code_state, result["code_mb"])
        shutil.rmtree(code_state, ignore_errors=True)
        log(f"x{scale}: code build {result['build_code']}")
    on_disk = dir_mb(state / "generations") + dir_mb(state / "blobs")
    result["index_on_disk_mb"] = round(on_disk, 2)
    result["index_per_corpus_mb"] = ratio(on_disk, result["corpus_mb"])

    result["cold_start"] = cold_start(config, state, work, runs=1 if heavy else 3)
    log(f"x{scale}: cold start {result['cold_start']}")
    result.update(serve_measurements(config, state, scale, quick))
    base = (work / "x1.toml", work / "state-x1")
    if scale > 1 and (base[1] / "generations").is_dir():
        result["search_in_turns"] = search_in_turns(base, (config, state), quick)
        log(f"x{scale}: search p50 against x1, in turns {result['search_in_turns']}")
    if scale in args.cache_scales:
        result["cache_bound"] = cache_bound(config, state, work)
        log(f"x{scale}: text cache bound {result['cache_bound']}")
    result["in_process"] = in_process(config, state, 300 if quick else 1000)
    result["search_p50_over_engine"] = ratio(
        result["search"]["p50_ms"], result["in_process"]["engine_alone"]["p50_ms"]
    )
    if scale in args.ranking_cost_scales:
        result["ranking_cost"] = ranking_cost(config, state, work, quick)
        log(f"x{scale}: ranking cost {result['ranking_cost']['ratios']}")
    if scale in args.semantic_scales:
        log(f"x{scale}: the semantic retriever against lexical ranking")
        result["semantic"] = semantic_cost(config, state, work, quick)
        log(f"x{scale}: semantic retriever {result['semantic'].get('ratios')}")
    if scale in args.tracing_scales:
        log(f"x{scale}: tracing overhead")
        result["tracing_overhead"] = tracing_overhead(config, state, quick)
    if scale in args.http_scales:
        log(f"x{scale}: HTTP against gRPC")
        result["http_cost"] = http_cost(config, state, quick)
        log(f"x{scale}: HTTP against gRPC {result['http_cost']['ratios']}")
    if scale in args.cluster_scales:
        log(f"x{scale}: the docs through an OpenSearch cluster")
        # 1.5 GB of heap per node is what the 100x push and search were measured with.
        heap = "1536m" if scale >= 100 else "512m"
        result["cluster"] = cluster_bench(scale, work, quick, heap=heap)
    if args.edits > 0:
        result["incremental_update"] = incremental_update(corpus, state, work, scale, args.edits)
        log(f"x{scale}: incremental update {result['incremental_update']}")
    result["targets"] = check(result)
    result["bench_seconds"] = round(time.perf_counter() - started, 1)
    return result


def serve_measurements(config: Path, state: Path, scale: int, quick: bool) -> dict:
    """Everything measured against one serving daemon."""
    out: dict = {}
    n = 300 if quick else 1000
    seconds = 2.0 if quick else 4.0
    daemon = Daemon(["--config", str(config)], state)
    daemon.start(timeout=900)
    try:
        stub = daemon.stub
        health = health_pb2_grpc.HealthStub(daemon.channel)
        out["rss_mb"] = rss_mb(daemon.proc.pid)
        # Latencies are timed once the start-up reconcile (after SERVING) has landed.
        daemon.wait_caught_up(900)
        out["rss_mb_caught_up"] = rss_mb(daemon.proc.pid)
        search = latency(lambda i: stub.Search(pb.SearchRequest(query=QUERIES[i % 10])), n)
        floor = latency(lambda i: health.Check(health_pb2.HealthCheckRequest()), n)
        out["search"] = search
        out["trivial_rpc"] = floor
        out["search_p50_over_trivial"] = ratio(search["p50_ms"], floor["p50_ms"])
        out["search_p99_over_trivial"] = ratio(search["p99_ms"], floor["p99_ms"])
        diverse = eval_queries()
        samples = []
        for query in diverse:
            begun = time.perf_counter()
            stub.Search(pb.SearchRequest(query=query))
            samples.append((time.perf_counter() - begun) * 1000)
        out["search_eval_queries"] = summary(samples)
        log(f"x{scale}: search {search}, trivial {floor}")
        log(f"x{scale}: eval queries {out['search_eval_queries']}")

        def search_caller():
            s = pb_stub(client_channel(daemon.address))
            return lambda i: s.Search(pb.SearchRequest(query=QUERIES[i % 10]))

        def health_caller():
            h = health_pb2_grpc.HealthStub(client_channel(daemon.address))
            return lambda i: h.Check(health_pb2.HealthCheckRequest())

        out["throughput"] = {}
        for callers in (1, 4, 16, 64):
            failures: Counter[str] = Counter()
            s_rate = throughput(search_caller, callers, seconds, failures)
            h_rate = throughput(health_caller, callers, seconds, failures)
            out["throughput"][str(callers)] = {
                "search_per_s": s_rate,
                "trivial_per_s": h_rate,
                "ratio": ratio(s_rate, h_rate),
                # Calls that ended with a status (by code): none is expected up to the
                # daemon's max_concurrent_rpcs independent callers.
                "failed": dict(failures),
            }
        log(f"x{scale}: throughput {out['throughput']}")
        out.update(composing(stub, n))
        out["rss_mb_after_load"] = rss_mb(daemon.proc.pid)
    finally:
        daemon.terminate()
    return out


def composing(stub, n: int) -> dict:
    out: dict = {}
    first = stub.Search(pb.SearchRequest(query="dependencies with yield")).results
    if not first:
        return out
    ref = first[0].ref_id
    out["get_content"] = latency(
        lambda i: stub.GetContent(pb.GetContentRequest(ref_id=ref)), n // 4
    )
    # The first part of the whole page under a cap, and the page's outline.
    page = pb.GetContentRequest(ref_id=ref, mode=pb.CONTENT_MODE_FULL, max_chars=4000)
    out["get_content_part"] = latency(lambda i: stub.GetContent(page), n // 4)
    outline = pb.GetContentRequest(ref_id=ref, mode=pb.CONTENT_MODE_OUTLINE)
    out["outline"] = latency(lambda i: stub.GetContent(outline), n // 4)
    out.update(code_locations(stub, n))
    calls = {
        "expand_related": lambda i: stub.ExpandRelated(pb.ExpandRelatedRequest(ref_ids=[ref])),
        "summarize_flow": lambda i: stub.SummarizeFlow(pb.SummarizeFlowRequest(ref_ids=[ref])),
        "guide_implementation": lambda i: stub.GuideImplementation(
            pb.GuideImplementationRequest(topic="add OAuth2 password login", framework="fastapi")
        ),
    }
    for name, call in calls.items():
        try:
            out[name] = latency(call, max(10, n // 20), warmup=3)
        except grpc.RpcError as exc:
            out[name] = {"unavailable": exc.code().name}
    return out


# A method by name with its class line (DEFINITION), and exact lines, in the corpus's code.
CODE_LOCATIONS = {
    "get_definition": (
        "fastapi/routing.py#APIRouter.add_api_route",
        pb.CONTENT_MODE_DEFINITION,
    ),
    "get_lines": ("fastapi/routing.py#L100-L140", pb.CONTENT_MODE_SNIPPET),
}


def code_locations(stub, n: int) -> dict:
    """GetContent latency of the code location forms (a definition by name, exact lines)."""
    out: dict = {}
    for name, (location, mode) in CODE_LOCATIONS.items():
        request = pb.GetContentRequest(location=location, mode=mode)
        try:
            out[name] = latency(lambda i, r=request: stub.GetContent(r), n // 4)
        except grpc.RpcError as exc:
            out[name] = {"unavailable": exc.code().name}
    return out


def in_process(config: Path, state: Path, n: int) -> dict:
    """The same queries in this process: the tantivy query alone, then the whole local search."""
    from scriptorium.domain.outcomes import SearchParams
    from scriptorium.engine.local import LocalEngine
    from scriptorium.index.searcher import lexical_search
    from scriptorium.plugins import load_registry
    from scriptorium.settings.config import load_settings

    settings = load_settings(config, state_dir=str(state))
    engine = LocalEngine(settings, load_registry())
    engine.indexer.load_or_build()
    snapshot = engine.indexer.snapshot
    searching = engine.searching
    queries = [searching.make_query(SearchParams(query=q)) for q in QUERIES]
    weights = engine.ranking.weights
    limit = engine.ranking.candidate_limit(10)
    return {
        "engine_alone": latency(
            lambda i: lexical_search(snapshot, queries[i % 10].terms, weights, limit), n
        ),
        "local_search": latency(
            lambda i: searching.search_local(
                searching.make_query(SearchParams(query=QUERIES[i % 10]))
            ),
            n,
        ),
    }


def incremental_update(corpus: Path, state: Path, work: Path, scale: int, edits: int) -> dict:
    """Edit → searchable and idle CPU with the watcher on: file-system events (the default),
    and the listing on every tick (``watch_mode = "poll"``, ``watch_interval`` 0.3 s) as the
    baseline, one after the other on the same generation."""
    result: dict = {}
    for mode in ("events", "poll"):
        config = write_fastapi_config(
            work / f"x{scale}-{mode}.toml", corpus, watch=True, watch_mode=mode
        )
        daemon = Daemon(["--config", str(config)], state)
        daemon.start(timeout=900)
        try:
            # The start-up reconcile runs after SERVING: nothing is timed before it has landed,
            # then the watch's first full listing passes.
            daemon.wait_caught_up(900)
            time.sleep(2.0 + 3.0 * (scale >= 100))
            before = cpu_seconds(daemon.proc.pid)
            time.sleep(IDLE_SECONDS)
            idle = (cpu_seconds(daemon.proc.pid) - before) / IDLE_SECONDS
            measured = {**edit_latency(daemon.stub, corpus, edits), "idle_cpu": round(idle, 3)}
        finally:
            daemon.terminate()
        if mode == "events":
            result.update(measured, watch_mode="events")
        else:
            result["poll"] = {**measured, "watch_interval_s": 0.3}
    return result


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def _scales(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--quick", action="store_true", help="fewer samples (for smoke runs)")
    parser.add_argument("--scales", default="1,10", help="corpus scales, e.g. 1,10,100")
    parser.add_argument(
        "--tracing-scales", default="1", help="scales that also measure tracing overhead"
    )
    parser.add_argument(
        "--http-scales", default="1", help="scales that also measure HTTP against gRPC"
    )
    parser.add_argument(
        "--ranking-cost-scales",
        default="1,10",
        help="scales that also compare the shipped ranking with its recent levers off",
    )
    parser.add_argument(
        "--cache-scales", default="1,10", help="scales that compare text cache bounds"
    )
    parser.add_argument(
        "--semantic-scales",
        default="1,10",
        help="scales that also measure the semantic retriever against lexical ranking (its "
        "RSS target is at 10x, whose vectors take about 8 minutes here)",
    )
    parser.add_argument(
        "--markdown-build-max-scale",
        type=int,
        default=10,
        help="largest scale that also builds the Markdown alone",
    )
    parser.add_argument(
        "--cluster-scales",
        default="100",
        help="scales whose docs are also pushed to and searched through an OpenSearch cluster",
    )
    parser.add_argument("--edits", type=int, default=4, help="file edits timed per scale")
    parser.add_argument("--label", default="", help="free-form tag stored with the results")
    parser.add_argument(
        "--no-languages", action="store_true", help="skip the per-language build throughput"
    )
    parser.add_argument(
        "--formats-megabytes",
        type=float,
        default=2.0,
        help="MB indexed per documentation format (bench/formats.py); 0 skips it",
    )
    parser.add_argument(
        "--real-tree-mirror",
        type=Path,
        default=DEFAULT_MIRROR,
        help="folder of bare git mirrors holding tldr-pages+tldr/repo (bench/realtree.py)",
    )
    parser.add_argument("--no-real-tree", action="store_true", help="skip the real large tree")
    parser.add_argument(
        "--no-devdocs", action="store_true", help="skip the DevDocs build (bench/devdocs.py)"
    )
    parser.add_argument(
        "--benchmarks",
        type=Path,
        default=DEFAULT_BENCHMARKS,
        help="folder holding swebench-verified/instances.jsonl (bench/largecode.py)",
    )
    parser.add_argument(
        "--no-large-code", action="store_true", help="skip the large code tree (sympy)"
    )
    parser.add_argument(
        "--large-code-semantic",
        action="store_true",
        help="the large code tree's searches again with the semantic retriever on (its vectors"
        " take about six minutes on two cores)",
    )
    args = parser.parse_args(argv)
    args.tracing_scales = set(_scales(args.tracing_scales))
    args.http_scales = set(_scales(args.http_scales))
    args.ranking_cost_scales = set(_scales(args.ranking_cost_scales))
    args.cluster_scales = set(_scales(args.cluster_scales))
    args.cache_scales = set(_scales(args.cache_scales))
    args.semantic_scales = set(_scales(args.semantic_scales))
    work = Path(tempfile.mkdtemp(prefix="scriptorium-bench-"))
    results = {
        "label": args.label,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average_at_start": list(os.getloadavg()),
        "scales": [],
    }
    try:
        for scale in _scales(args.scales):
            results["scales"].append(bench_scale(scale, work, args))
            if scale != 1:  # 1x serves again beside every larger scale (bench/turns.py)
                shutil.rmtree(work / f"state-x{scale}", ignore_errors=True)
                shutil.rmtree(work / f"corpus-x{scale}", ignore_errors=True)
        if not args.no_languages:
            log("build throughput per language")
            results["languages"] = languages_bench(work, args.quick, build)
        if args.formats_megabytes > 0:
            results["formats"] = doc_formats(work, args.formats_megabytes)
        if not args.no_real_tree:
            log("real large tree")
            results["real_tree"] = real_tree(work / "real-tree", args.real_tree_mirror, build)
        if not args.no_devdocs:
            log("devdocs build")
            results["devdocs"] = devdocs(work / "devdocs", args.real_tree_mirror)
        if not args.no_large_code:
            log("large code tree")
            results["large_code"] = large_code(
                work / "large-code",
                args.real_tree_mirror,
                args.benchmarks,
                build,
                args.quick,
                semantic=args.large_code_semantic,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    across_scales(results["scales"])
    for r in results["scales"]:
        r["targets"] = check(r)  # again: some targets compare a scale with the 1x run
    results["load_average_at_end"] = list(os.getloadavg())
    print(render(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


# -- rendering -----------------------------------------------------------------------------------


def render(results: dict) -> str:
    lines = []
    for r in results["scales"]:
        lines += render_scale(r)
        lines.append("")
    lines += render_summary(results["scales"])
    lines += ["", *render_languages(results.get("languages", {}))]
    lines += render_formats(results.get("formats", {}))
    if "real_tree" in results:
        lines += ["", *render_real_tree(results["real_tree"])]
    if "devdocs" in results:
        lines += ["", *render_devdocs(results["devdocs"])]
    if "large_code" in results:
        lines += ["", *render_large_code(results["large_code"])]
    return "\n".join(lines)


def render_scale(r: dict) -> list[str]:
    b = r["build"]
    lines = [f"== corpus x{r['scale']}: {r['corpus_mb']} MB, {r['corpus_files']} files =="]
    lines.append(
        f"index build        {b['indexing_s']:>8} s   ({b['mb_per_s']} MB/s, {b['files_per_s']}"
        f" files/s; {b['wall_s']} s with interpreter start)"
    )
    if "build_markdown" in r:
        m = r["build_markdown"]
        lines.append(
            f"markdown build     {m['indexing_s']:>8} s   ({m['mb_per_s']} MB/s of"
            f" {r['markdown_mb']} MB Markdown)"
        )
    if "build_markdown_one_process" in r:
        m = r["build_markdown_one_process"]
        lines.append(
            f"  in one process   {m['indexing_s']:>8} s   ({m['mb_per_s']} MB/s; no build workers)"
        )
    if "build_code" in r:
        k = r["build_code"]
        lines.append(
            f"code build         {k['indexing_s']:>8} s   ({k['mb_per_s']} MB/s,"
            f" {k['files_per_s']} files/s of {r['code_mb']} MB code)"
        )
    lines.append(
        f"index on disk      {r['index_on_disk_mb']:>8} MB  ({r['index_per_corpus_mb']}x corpus)"
    )
    c = r["cold_start"]
    lines.append(
        f"cold start         {c['seconds']:>8} s   (engine load {c['engine_load_seconds']} s)"
    )
    s, f = r["search"], r["trivial_rpc"]
    lines.append(f"search p50/p99     {s['p50_ms']:>8} / {s['p99_ms']} ms")
    lines.append(f"trivial p50/p99    {f['p50_ms']:>8} / {f['p99_ms']} ms")
    lines.append(f"search/trivial p50 {r['search_p50_over_trivial']:>8} x   (target ≤ 2)")
    e = r["search_eval_queries"]
    lines.append(f"eval queries       {e['p50_ms']:>8} / {e['p99_ms']} ms (n={e['n']}, each once)")
    ip = r["in_process"]
    lines.append(
        f"in-process         engine {ip['engine_alone']['p50_ms']} ms, local search"
        f" {ip['local_search']['p50_ms']} ms (gRPC search is {r['search_p50_over_engine']}x engine)"
    )
    for callers, t in r["throughput"].items():
        lines.append(
            f"throughput @{callers:<3}    {t['search_per_s']:>8} search/s vs"
            f" {t['trivial_per_s']} trivial/s = {t['ratio']}"
            + (f" (failed: {t['failed']})" if t.get("failed") else "")
        )
    parts = ("get_content_part", "outline")
    composed = ("get_content", *parts, *CODE_LOCATIONS, "expand_related", "summarize_flow")
    for name in (*composed, "guide_implementation"):
        if name in r:
            v = r[name]
            text = f"{v['p50_ms']} / {v['p99_ms']} ms" if "p50_ms" in v else v["unavailable"]
            lines.append(f"{name:<18} {text}")
    lines.append(
        f"daemon RSS         {r['rss_mb']} MB (after load test {r['rss_mb_after_load']} MB;"
        f" {ratio(r['rss_mb_after_load'], r['corpus_mb'])} MB per MB of corpus)"
    )
    if "incremental_update" in r:
        u = r["incremental_update"]
        lines.append(
            f"edit → searchable  p50 {u['p50_seconds']} s, max {u['max_seconds']} s with events,"
            f" idle CPU {u['idle_cpu']} cores"
        )
        if "poll" in u:
            p = u["poll"]
            lines.append(
                f"  … listing every {p['watch_interval_s']} s: p50 {p['p50_seconds']} s,"
                f" max {p['max_seconds']} s, idle CPU {p['idle_cpu']} cores"
            )
    lines.extend(render_ranking_cost(r.get("ranking_cost", {})))
    lines.extend(render_semantic(r.get("semantic", {})))
    lines.extend(render_tracing(r.get("tracing_overhead", {})))
    lines.extend(render_http_cost(r.get("http_cost", {})))
    lines.extend(render_cluster(r.get("cluster", {})))
    for row in r["targets"]:
        verdict = "met" if row["met"] else "MISSED"
        lines.append(f"target {row['target']:<34} {row['value']:>8} {row['goal']:<6} {verdict}")
    return lines


def _per_bound(r: dict, key: str) -> str | None:
    """``key`` of each text cache bound's memory figures, as ``a/b/c`` (None: not measured)."""
    return "/".join(str(v.get(key)) for v in r.get("cache_bound", {}).values()) or None


def render_summary(scales: list[dict]) -> list[str]:
    if not scales:
        return []
    header = ["", *[f"x{r['scale']}" for r in scales]]
    rows = [
        ("corpus MB", lambda r: r["corpus_mb"]),
        ("search p50 ms", lambda r: r["search"]["p50_ms"]),
        ("search p99 ms", lambda r: r["search"]["p99_ms"]),
        ("trivial p50 ms", lambda r: r["trivial_rpc"]["p50_ms"]),
        ("search/trivial p50", lambda r: r["search_p50_over_trivial"]),
        ("eval queries p50 ms", lambda r: r["search_eval_queries"]["p50_ms"]),
        ("engine alone p50 ms", lambda r: r["in_process"]["engine_alone"]["p50_ms"]),
        ("throughput ratio @16", lambda r: r["throughput"]["16"]["ratio"]),
        (
            "search p50 shipped/levers off",
            lambda r: (
                r.get("ranking_cost", {}).get("ratios", {}).get("grpc p50 shipped/levers_off")
            ),
        ),
        (
            "search p50 HTTP/gRPC",
            lambda r: r.get("http_cost", {}).get("ratios", {}).get("search p50 http/grpc"),
        ),
        ("build MB/s", lambda r: r["build"]["mb_per_s"]),
        ("cold start s", lambda r: r["cold_start"]["seconds"]),
        ("RSS after start MB", lambda r: r["rss_mb"]),
        ("RSS after start / x1", lambda r: r.get("vs_x1", {}).get("rss_after_start")),
        ("search p50 / x1, in turns", lambda r: r.get("vs_x1", {}).get("search_p50_in_turns")),
        ("search p50 / x1, minutes apart", lambda r: r.get("vs_x1", {}).get("search_p50")),
        ("RSS MB", lambda r: r["rss_mb_after_load"]),
        ("RSS after queries, cache 4/64/512 MB", lambda r: _per_bound(r, "rss_mb_after_queries")),
        ("… of it anonymous (heaps)", lambda r: _per_bound(r, "rss_anon_mb_after_queries")),
        ("index / corpus", lambda r: r["index_per_corpus_mb"]),
        ("edit → searchable max s", lambda r: r.get("incremental_update", {}).get("max_seconds")),
        (
            "… by listing, max s",
            lambda r: r.get("incremental_update", {}).get("poll", {}).get("max_seconds"),
        ),
        ("idle CPU (cores)", lambda r: r.get("incremental_update", {}).get("idle_cpu")),
        ("… by listing", lambda r: r.get("incremental_update", {}).get("poll", {}).get("idle_cpu")),
    ]
    table = [header] + [[name, *[str(get(r)) for r in scales]] for name, get in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return ["== summary =="] + [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) for row in table
    ]


if __name__ == "__main__":
    raise SystemExit(main())
