"""What the semantic retriever costs: two daemons on copies of one generation, one with it on
and one with it off (the lexical baseline of the same run).

Measured: time to SERVING of each (the vectors are made after serving, so it should not
move), seconds from SERVING until every block has a vector and the blocks encoded a second,
Search p50/p90 of each in alternating rounds once the vectors exist (the ratio is the cost of
encoding the query and mixing the scores), RSS of each after the rounds, and what the model
adds to the install. Then both start again over their states, the vectors on disk, and after
the same rounds RSS is measured once more: the figure after a cold start (the target's) does
not carry what making the vectors left in the heap.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from bench.measure import dir_mb, ratio, rss_mb
from bench.queries import eval_queries
from bench.ranking_cost import alternating
from scriptorium.semantic.model import ModelMissing, find_model
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon

ON = {"SCRIPTORIUM_SEMANTIC": "on"}
OFF = {"SCRIPTORIUM_SEMANTIC": "off"}
VECTORS_TIMEOUT_S = 4 * 3600.0


def _ready_seconds(daemon: Daemon) -> float:
    began = time.perf_counter()
    daemon.start(timeout=900)
    return round(time.perf_counter() - began, 3)


def _vectors_done(daemon: Daemon) -> tuple[bool, int]:
    sources = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=30).sources
    settled = all(s.vectors_state in ("ready", "off", "failed") for s in sources)
    return settled, sum(s.vectors_total for s in sources)


def wait_for_vectors(daemon: Daemon, timeout: float = VECTORS_TIMEOUT_S) -> tuple[bool, int, float]:
    """Until every source's vectors are settled (ready, off or failed) or ``timeout``: whether
    they settled, how many blocks they cover, and the seconds waited."""
    began = time.perf_counter()
    settled, blocks = _vectors_done(daemon)
    while not settled and time.perf_counter() - began < timeout:
        time.sleep(0.5)
        settled, blocks = _vectors_done(daemon)
    return settled, blocks, time.perf_counter() - began


def semantic_cost(config: Path, state: Path, work: Path, quick: bool) -> dict:
    """Both daemons' figures and the ratios (semantic over lexical)."""
    try:
        model = find_model()
    except ModelMissing as exc:
        return {"skipped": str(exc)}
    lexical_state = work / f"{state.name}-lexical"
    semantic_state = work / f"{state.name}-semantic"
    for copy in (lexical_state, semantic_state):
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(state, copy)
        shutil.rmtree(copy / "vectors", ignore_errors=True)
    lexical = Daemon(["--config", str(config)], lexical_state, env=OFF)
    semantic = Daemon(["--config", str(config)], semantic_state, env=ON)
    try:
        out: dict = {"model": model.name, "model_mb": round(dir_mb(model.folder), 1)}
        out["serving_s"] = {
            "lexical": _ready_seconds(lexical),
            "semantic": _ready_seconds(semantic),
        }
        settled, blocks, seconds = wait_for_vectors(semantic)
        out["vectors"] = {
            "complete": settled,
            "blocks": blocks,
            "seconds": round(seconds, 1),
            "blocks_per_s": round(blocks / seconds, 1) if seconds else 0.0,
            "on_disk_mb": round(dir_mb(semantic_state / "vectors"), 1),
        }
        queries = eval_queries()

        def calls() -> dict:  # over the daemons' channels of the moment
            stubs = {"lexical": lexical.stub, "semantic": semantic.stub}
            return {
                name: (
                    lambda i, s=stub: s.Search(pb.SearchRequest(query=queries[i % len(queries)]))
                )
                for name, stub in stubs.items()
            }

        rounds, per_round = (4, 100) if quick else (8, 200)
        out["search"] = alternating(calls(), rounds, per_round)
        out["rss_mb_after_vectors"] = {
            "lexical": round(rss_mb(lexical.proc.pid), 1),
            "semantic": round(rss_mb(semantic.proc.pid), 1),
        }
        for daemon in (lexical, semantic):
            daemon.terminate()
        out["cold_serving_s"] = {
            "lexical": _ready_seconds(lexical),
            "semantic": _ready_seconds(semantic),
        }
        wait_for_vectors(semantic)  # read from disk
        alternating(calls(), rounds, per_round)
        out["rss_mb"] = {
            "lexical": round(rss_mb(lexical.proc.pid), 1),
            "semantic": round(rss_mb(semantic.proc.pid), 1),
        }
        out["ratios"] = {
            "serving semantic/lexical": ratio(
                out["serving_s"]["semantic"], out["serving_s"]["lexical"]
            ),
            "search p50 semantic/lexical": ratio(
                out["search"]["semantic"]["p50_ms"], out["search"]["lexical"]["p50_ms"]
            ),
            "rss semantic/lexical": ratio(out["rss_mb"]["semantic"], out["rss_mb"]["lexical"]),
            "rss after making the vectors semantic/lexical": ratio(
                out["rss_mb_after_vectors"]["semantic"], out["rss_mb_after_vectors"]["lexical"]
            ),
        }
        return out
    finally:
        lexical.terminate()
        semantic.terminate()
        shutil.rmtree(lexical_state, ignore_errors=True)
        shutil.rmtree(semantic_state, ignore_errors=True)


def render_semantic(figures: dict) -> list[str]:
    if not figures:
        return []
    if "skipped" in figures:
        return [f"semantic retriever: skipped ({figures['skipped']})"]
    vectors = figures["vectors"]
    lines = [
        f"semantic retriever ({figures['model']}, {figures['model_mb']} MB installed): "
        f"vectors for {vectors['blocks']} blocks in {vectors['seconds']} s "
        f"({vectors['blocks_per_s']} blocks/s, {vectors['on_disk_mb']} MB on disk)",
    ]
    for name, value in figures["ratios"].items():
        lines.append(f"  {name}: {value}")
    return lines
