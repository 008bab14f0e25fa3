"""The scaled corpus's documentation through an OpenSearch cluster, beside the local index.

    python bench/cluster.py [--scale 1] [--quick]      (or: bench/run.py --cluster-scales 100)
    python bench/cluster.py --scale 100 --corpus DIR --local-state DIR --heap 1g

``--corpus`` names a scaled corpus made before (``bench/corpus.py``'s layout) instead of making
one; ``--local-state`` a state directory for the local index that is kept between runs (a
second run loads the generation the first built instead of building it again: its build
figure is then the first run's, stored beside it).

Same run, same machine, same documents (the English, Japanese and Chinese docs): a local
Markdown index against a three-node cluster (``tests/support/opensearch_cluster.py``) holding
them as ``opensearch`` sources. Reported: the push's MB/s next to the local build's, Search
p50/p99 with the daemon's re-rank over the cluster's window next to the local daemon's, and
Search throughput with 16 callers spread over one, then three daemons reading one alias (the
local figure is one daemon). Every figure is given with its ratio to the local baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.corpus import make_scaled_corpus  # noqa: E402
from bench.measure import client_channel, latency, ratio, throughput  # noqa: E402
from bench.queries import QUERIES  # noqa: E402
from scriptorium.v1 import retrieval_pb2 as pb  # noqa: E402
from scriptorium.v1 import retrieval_pb2_grpc  # noqa: E402
from tests.support.daemon import CORPUS, Daemon  # noqa: E402
from tests.support.opensearch_cluster import Cluster  # noqa: E402

LANGS = ("en", "ja", "zh")


def _tables(corpus: Path, kind: str, hosts: list[str]) -> str:
    out = "[server]\nwatch = false\n"
    for name in LANGS:
        out += f'\n[[sources]]\nname = "{name}"\nkind = "{kind}"\n'
        out += f'root = "{corpus / "docs" / name / "docs"}"\n'
        if kind == "opensearch":
            hosts_list = json.dumps(hosts)
            out += f'hosts = {hosts_list}\nalias = "bench-{name}"\ntimeout_seconds = 60\n'
            out += "replicas = 1\n"
    return out


def _timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=6 * 3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:5])} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started, done.stdout


def _cluster_cpu(cluster: Cluster) -> float:
    """CPU seconds the cluster's JVMs have used so far (every process under its folder)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if str(cluster.folder).encode() not in (proc / "cmdline").read_bytes():
                continue
            fields = (proc / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _search_figures(daemons: list[Daemon], n: int, seconds: float) -> dict:
    stub = daemons[0].stub
    measured = latency(
        lambda i: stub.Search(pb.SearchRequest(query=QUERIES[i % len(QUERIES)]), timeout=120), n
    )
    turn = {"next": 0}

    def caller():
        daemon = daemons[turn["next"] % len(daemons)]
        turn["next"] += 1
        s = retrieval_pb2_grpc.RetrievalServiceStub(client_channel(daemon.address))
        return lambda i: s.Search(pb.SearchRequest(query=QUERIES[i % len(QUERIES)]), timeout=120)

    measured["search_per_s_16"] = throughput(caller, 16, seconds)
    return measured


def cluster_bench(
    scale: int,
    work: Path,
    quick: bool,
    corpus: Path | None = None,
    local_state: Path | None = None,
    heap: str = "512m",
) -> dict:
    """Push, search and throughput figures for one scale, beside the local index's."""
    n, seconds = (50, 2.0) if quick else (300, 6.0)
    made = corpus is None
    if corpus is None:
        corpus = make_scaled_corpus(CORPUS, work / f"cluster-corpus-x{scale}", scale)
    markdown_bytes = sum(
        p.stat().st_size for name in LANGS for p in (corpus / "docs" / name / "docs").rglob("*.md")
    )
    mb = markdown_bytes / 1e6
    scriptorium = [sys.executable, "-m", "scriptorium"]
    out: dict = {"scale": scale, "markdown_mb": round(mb, 2)}
    local_cfg = work / "cluster-local.toml"
    local_cfg.write_text(_tables(corpus, "markdown", []), "utf-8")
    state = local_state or work / "cluster-local-state"
    built = state / "bench-build.json"
    if built.exists():
        out["local_build"] = json.loads(built.read_text("utf-8"))
    else:
        before = _children_cpu()
        build_s, _ = _timed(
            [*scriptorium, "index", "build", "--config", str(local_cfg), "--state-dir", str(state)]
        )
        out["local_build"] = {
            "seconds": round(build_s, 2),
            "mb_per_s": round(mb / build_s, 3),
            "cpu_s_per_mb": round((_children_cpu() - before) / mb, 2),
        }
        built.write_text(json.dumps(out["local_build"]), "utf-8")
    cluster = Cluster(size=3, heap=f"-Xms{heap} -Xmx{heap}").start()
    daemons: list[Daemon] = []
    try:
        remote_cfg = work / "cluster-remote.toml"
        remote_cfg.write_text(_tables(corpus, "opensearch", cluster.hosts), "utf-8")
        cluster_cpu, client_cpu = _cluster_cpu(cluster), _children_cpu()
        push_s, pushed = _timed(
            [*scriptorium, "index", "push", "--config", str(remote_cfg), "--format", "json"]
        )
        summaries = json.loads(pushed)
        # CPU seconds per MB beside the wall clock: on a shared machine the wall clock measures
        # the share of the cores the push got as much as the push.
        out["push"] = {
            "seconds": round(push_s, 2),
            "mb_per_s": round(mb / push_s, 3),
            "blocks": sum(s["blocks"] for s in summaries.values()),
            "client_cpu_s_per_mb": round((_children_cpu() - client_cpu) / mb, 2),
            "cluster_cpu_s_per_mb": round((_cluster_cpu(cluster) - cluster_cpu) / mb, 2),
        }
        out["push_over_local_build"] = ratio(
            out["push"]["mb_per_s"], out["local_build"]["mb_per_s"]
        )
        local = Daemon(["--config", str(local_cfg)], state).start()
        daemons.append(local)
        out["local_search"] = _search_figures([local], n, seconds)
        local.terminate()
        daemons.remove(local)
        for i in range(3):
            daemons.append(
                Daemon(["--config", str(remote_cfg)], work / f"cluster-state-{i}").start()
            )
        out["cluster_search"] = _search_figures(daemons[:1], n, seconds)
        out["cluster_search_3_daemons_per_s_16"] = _search_figures(daemons, 20, seconds)[
            "search_per_s_16"
        ]
        local_s = out["local_search"]
        cluster_s = out["cluster_search"]
        out["cluster_p50_over_local"] = ratio(cluster_s["p50_ms"], local_s["p50_ms"])
        out["cluster_p99_over_local"] = ratio(cluster_s["p99_ms"], local_s["p99_ms"])
        out["three_daemons_over_one"] = ratio(
            out["cluster_search_3_daemons_per_s_16"], cluster_s["search_per_s_16"]
        )
    finally:
        for daemon in daemons:
            daemon.terminate()
        cluster.stop()
        if made:
            shutil.rmtree(corpus, ignore_errors=True)
    return out


def render_cluster(c: dict) -> list[str]:
    if "push" not in c:
        return []
    local, remote = c["local_search"], c["cluster_search"]
    return [
        f"cluster x{c['scale']} ({c['markdown_mb']} MB of docs, 3 nodes, 1 replica)",
        f"  push             {c['push']['seconds']} s ({c['push']['mb_per_s']} MB/s, "
        f"{c['push']['blocks']} blocks); local build {c['local_build']['mb_per_s']} MB/s "
        f"({c['push_over_local_build']}x); CPU s/MB {c['push'].get('client_cpu_s_per_mb')} "
        f"client, {c['push'].get('cluster_cpu_s_per_mb')} cluster",
        f"  search p50/p99   {remote['p50_ms']} / {remote['p99_ms']} ms with the re-rank; local "
        f"{local['p50_ms']} / {local['p99_ms']} ms ({c['cluster_p50_over_local']}x p50)",
        f"  16 callers       {remote['search_per_s_16']}/s one daemon, "
        f"{c['cluster_search_3_daemons_per_s_16']}/s three ({c['three_daemons_over_one']}x); "
        f"local {local['search_per_s_16']}/s",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--corpus", type=Path, help="a scaled corpus made before")
    parser.add_argument("--local-state", type=Path, help="the local index's state, kept")
    parser.add_argument("--heap", default="512m", help="each node's JVM heap")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="scriptorium-cluster-bench-"))
    try:
        result = cluster_bench(
            args.scale, work, args.quick, args.corpus, args.local_state, args.heap
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["load_average"] = list(os.getloadavg())
    print("\n".join(render_cluster(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
