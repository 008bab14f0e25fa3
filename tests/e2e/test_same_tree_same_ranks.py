"""The same tree, the same ranks: an index reached through updates ranks as a fresh build.

Blocks of a file that changed or went are deleted from the index's segments, and tantivy
keeps counting deleted blocks in BM25's statistics (document frequencies, field lengths)
until their segment is rewritten. A daemon that caught up with a tree must answer every
query with the same ranked list and the same scores as a daemon that built that tree from
nothing, or its ranking drifts from what the evaluation measured with every edit.

Tree A is the FastAPI corpus with a quarter of its English pages and a sixth of its code
edited, a tenth of its pages missing and a few pages more; tree B is the corpus itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, REPO, running, write_fastapi_config
from tests.support.waiting import wait_for

# A paragraph that moves every statistic the edited files' words take part in.
EDIT = (
    "\n\nAn older note on routers, dependencies, request bodies and response models: "
    "the path operation decorator declares parameters, and the security scheme reads "
    "the token from the header before the handler runs.\n"
)
EXTRA = (
    "# Legacy {n}\n\nLegacy guide {n} to path parameters, query parameters, OAuth2 tokens, "
    "background tasks, middleware and the test client, kept for older releases.\n"
)
LONG_QUERY = (
    "When I declare a dependency with yield that opens a database session and raise an "
    "HTTPException inside the path operation, the code after the yield runs but the "
    "response is already sent, and my background task cannot use the session any more. "
    "How do I close the session after the background task finished?"
)


def _queries() -> list[str]:
    """Every distinct query of the FastAPI evaluation set, and one pasted paragraph."""
    queries: list[str] = []
    for line in (REPO / "eval" / "fastapi.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            query = json.loads(line).get("query")
            if query and query not in queries:
                queries.append(query)
    return [*queries, LONG_QUERY, "OAuth2PasswordBearer", "查询参数", "パスパラメータ"]


def _older_tree(corpus: Path) -> dict[Path, bytes | None]:
    """Turn ``corpus`` into tree A; returns what each touched path held in tree B (None:
    absent from B)."""
    pages = sorted((corpus / "docs/en/docs").rglob("*.md"))
    code = sorted((corpus / "fastapi").rglob("*.py"))
    held: dict[Path, bytes | None] = {}
    for path in pages[::4] + code[::6]:
        held[path] = path.read_bytes()
        path.write_bytes(held[path] + EDIT.encode())
    for path in pages[2::10]:
        held.setdefault(path, path.read_bytes())
        path.unlink()
    for n in range(8):
        extra = corpus / f"docs/en/docs/legacy-{n}.md"
        extra.write_text(EXTRA.format(n=n), encoding="utf-8")
        held[extra] = None
    return held


def _restore(held: dict[Path, bytes | None]) -> None:
    for path, content in held.items():
        if content is None:
            path.unlink()
        else:
            path.write_bytes(content)


def _ranked(stub, query: str) -> list[tuple]:
    """Everything that orders a query's results: ref, location, lines and exact scores."""
    response = stub.Search(pb.SearchRequest(query=query, top_k=25), timeout=60)
    return [
        (
            r.ref_id,
            r.location,
            r.start_line,
            r.end_line,
            r.score,
            r.scores.lexical,
            r.scores.fused,
            r.scores.rerank,
        )
        for r in response.results
    ]


def _answers(daemon, queries: list[str]) -> dict[str, list[tuple]]:
    return {query: _ranked(daemon.stub, query) for query in queries}


def _first_difference(a: list, b: list) -> int:
    """The first rank (from 1) where two ranked lists differ."""
    longest = max(len(a), len(b))
    padded = zip(a + [None] * (longest - len(a)), b + [None] * (longest - len(b)), strict=True)
    return next(rank for rank, (x, y) in enumerate(padded, 1) if x != y)


def _differences(updated: dict, fresh: dict) -> list[str]:
    """One line per query whose ranked lists differ: where, and the two entries there."""
    lines = []
    for query in fresh:
        a, b = updated[query], fresh[query]
        if a != b:
            rank = _first_difference(a, b)
            lines.append(
                f"{query[:60]!r}, rank {rank}: {a[rank - 1 : rank]} vs {b[rank - 1 : rank]}"
            )
    return lines


def test_a_tree_reached_by_a_catch_up_ranks_as_its_fresh_build(tmp_path: Path) -> None:
    corpus = tmp_path / "fastapi"
    shutil.copytree(CORPUS, corpus)
    config = write_fastapi_config(tmp_path / "scriptorium.toml", corpus)
    queries = _queries()
    held = _older_tree(corpus)
    state = tmp_path / "state"
    with running(["--config", str(config)], state) as older:  # a first build: ready once built
        assert older.stub.Search(pb.SearchRequest(query="legacy guide"), timeout=30).results
    _restore(held)  # tree B, while no daemon runs
    with running(["--config", str(config)], state) as updated:
        updated.wait_caught_up()
        caught_up = _answers(updated, queries)
        generation = updated.stub.ListSources(pb.ListSourcesRequest(), timeout=15).generation
        assert generation > 1, updated.log()  # the catch-up wrote a new generation
    with running(["--config", str(config)], tmp_path / "fresh-state") as fresh:
        built = _answers(fresh, queries)
    assert all(built[q] for q in queries[:5])  # the comparison is of real result lists
    assert not _differences(caught_up, built), "\n".join(_differences(caught_up, built))


def test_edits_served_while_running_rank_as_the_fresh_build(tmp_path: Path) -> None:
    corpus = tmp_path / "fastapi"
    shutil.copytree(CORPUS, corpus)
    config = write_fastapi_config(tmp_path / "scriptorium.toml", corpus, watch=True)
    # Every watched edit that deletes blocks rewrites the index (the default waits for 1 %).
    text = config.read_text("utf-8").replace("[server]\n", "[server]\nrewrite_deleted_share = 0\n")
    config.write_text(text, encoding="utf-8")
    queries = _queries()
    with running(["--config", str(config)], tmp_path / "fresh-state") as fresh:
        built = _answers(fresh, queries)
    held = _older_tree(corpus)
    with running(["--config", str(config), "--log-level", "debug"], tmp_path / "state") as daemon:
        assert wait_for(lambda: "watch in place" in daemon.full_log()), daemon.log()
        _restore(held)  # tree B, edited under the running daemon's watch
        # The watch lands the edits in one or more generations; each is compared in full.
        landed = wait_for(lambda: _answers(daemon, queries) == built)
        updated = _answers(daemon, queries)
        assert landed, "\n".join(_differences(updated, built)) + "\n" + daemon.log()
        assert "written again from the roots" in daemon.full_log()
