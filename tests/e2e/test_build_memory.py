"""``[server] build_memory_mb`` through the real ``index build`` command and real daemons: a
small bound reaches the writer (its arena fills, and the generation is written as several
segments), and the index it writes answers exactly as one written under the default bound."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import markdown_config, write_tree

# Words drawn from a vocabulary large enough that the postings of a few MB of pages fill
# tantivy's smallest arena (15 MB) more than once.
VOCABULARY = 40_000
PAGES = 360
QUERIES = ["zq0117 zq2044", "configure zq0450 retries", "zq3990", "zq0001 zq0002 zq0003"]


def _pages() -> dict[str, str]:
    """A deterministic tree of Markdown pages, 7.6 MB, with a few headings each (three
    segments under the smallest arena)."""
    draw = random.Random(43)
    pages = {}
    for i in range(PAGES):
        sections = []
        for s in range(3):
            words = [f"zq{draw.randrange(VOCABULARY):04d}" for _ in range(900)]
            sections.append(f"## Section {s} of {i}\n\nconfigure retries " + " ".join(words))
        pages[f"p{i:03d}.md"] = f"# Page {i}\n\n" + "\n\n".join(sections) + "\n"
    return pages


def _build(config: Path, state: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "scriptorium", "index", "build"),
            *("--config", str(config), "--state-dir", str(state)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr


def _segments(state: Path) -> int:
    (generation,) = sorted((state / "generations").glob("gen-*"))
    return len(json.loads((generation / "index" / "meta.json").read_text())["segments"])


def _answers(config: Path, state: Path) -> dict[str, list[tuple[str, float, str]]]:
    with running(["--config", str(config)], state) as daemon:
        out = {}
        for query in QUERIES:
            response = daemon.stub.Search(pb.SearchRequest(query=query, top_k=20), timeout=30)
            out[query] = [(r.ref_id, round(r.score, 6), r.preview) for r in response.results]
    return out


def test_a_small_build_memory_bound_writes_segments_that_answer_as_the_default(tmp_path):
    docs = write_tree(tmp_path / "docs", _pages())
    small = markdown_config(
        tmp_path / "small.toml", {"docs": docs}, "watch = false\nbuild_memory_mb = 16"
    )
    default = markdown_config(tmp_path / "default.toml", {"docs": docs})
    _build(small, tmp_path / "small")
    _build(default, tmp_path / "default")

    # The bound reached the writer: its arena filled and flushed a segment more than once,
    # where the default bound's arena held the whole tree.
    assert _segments(tmp_path / "default") == 1
    assert _segments(tmp_path / "small") > 1

    bounded = _answers(small, tmp_path / "small")
    assert bounded == _answers(default, tmp_path / "default")
    assert all(bounded.values())
