"""Memory against the text cache's bound, and the figures compared across scales.

``cache_bound`` serves one generation under several ``[server] text_cache_bytes`` bounds and
reports, for each, the daemon's resident memory right after start and after every evaluation
query was asked once and its first result fetched whole (so texts are read through the cache),
the latter also split into anonymous memory (the heaps) and mapped file pages (the index the
searches touched, which the kernel can drop).
Memory that grows with the bound and not with the corpus is what this shows.

``across_scales`` puts each scale's RSS after start, cold start and Search p50 next to the
1x figures of the same run (the targets in ``bench/targets.py`` read these ratios).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import grpc

from bench.measure import ratio, rss_mb, rss_parts_mb
from bench.queries import eval_queries
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon

MB = 1024 * 1024
# The bounds compared: a small one, the default, and one that holds a 10x corpus's text whole.
BOUNDS_MB = (4, 64, 512)


def with_cache_bound(config: Path, target: Path, bound_bytes: int) -> Path:
    """A copy of ``config`` with ``text_cache_bytes`` set in its [server] table."""
    text = config.read_text("utf-8")
    line = f"text_cache_bytes = {bound_bytes}"
    if "[server]" in text:
        text = text.replace("[server]", f"[server]\n{line}", 1)
    else:
        text = f"[server]\n{line}\n\n{text}"
    target.write_text(text, "utf-8")
    return target


def cache_bound(config: Path, state: Path, work: Path, bounds_mb=BOUNDS_MB) -> dict:
    out: dict = {}
    queries = eval_queries()
    for bound in bounds_mb:
        bounded = with_cache_bound(config, work / f"{config.stem}-cache{bound}.toml", bound * MB)
        daemon = Daemon(["--config", str(bounded)], state)
        daemon.start(timeout=900)
        try:
            stub = daemon.stub
            daemon.wait_caught_up(900)  # the start-up reconcile lands after SERVING
            started = rss_mb(daemon.proc.pid)
            for query in queries:
                reply = stub.Search(pb.SearchRequest(query=query))
                if reply.results:
                    with contextlib.suppress(grpc.RpcError):
                        stub.GetContent(
                            pb.GetContentRequest(
                                ref_id=reply.results[0].ref_id, mode=pb.CONTENT_MODE_FULL
                            )
                        )
            parts = rss_parts_mb(daemon.proc.pid)
            out[f"{bound}MB"] = {
                "rss_mb_after_start": started,
                "rss_mb_after_queries": rss_mb(daemon.proc.pid),
                # The heaps apart from the mapped index pages the searches touched.
                "rss_anon_mb_after_queries": parts["anon"],
                "rss_file_mb_after_queries": parts["file"],
                "queries": len(queries),
            }
        finally:
            daemon.terminate()
    return out


def across_scales(scales: list[dict]) -> None:
    """Add ``vs_x1`` ratios to every scale's results (the 1x run of the same bench)."""
    base = next((r for r in scales if r["scale"] == 1), None)
    if base is None:
        return
    for r in scales:
        r["vs_x1"] = {
            "rss_after_start": ratio(r.get("rss_mb"), base.get("rss_mb")),
            "cold_start": ratio(r["cold_start"]["seconds"], base["cold_start"]["seconds"]),
            "search_p50": ratio(r["search"]["p50_ms"], base["search"]["p50_ms"]),
            # Both daemons serving at once, in alternating rounds (bench/turns.py).
            "search_p50_in_turns": r.get("search_in_turns", {}).get("ratio"),
            "eval_queries_p50": ratio(
                r["search_eval_queries"]["p50_ms"], base["search_eval_queries"]["p50_ms"]
            ),
        }
