"""Which blocks a lexical pool passes on to the ranking: blocks tied at the pool's cut are
chosen by their place, not by how the index was reached, and a question's pool passes on at
most ``question_blocks_per_document`` blocks of one page (docs/ranking.md, *Retrieve*)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.index.searcher import FieldWeights, LexicalHit, lexical_search
from scriptorium.plugins import load_registry
from scriptorium.retrieval.local import at_most_per_document
from scriptorium.settings.config import load_settings
from scriptorium.sources.remote import SearchBatch

QUESTION = "how do I tune a widget"
PASTED = "Traceback (most recent call last):\n  File 'app.py', line 3\nWidgetError: tune widget\n"


def _engine(root: Path, docs: Path, state: str) -> LocalEngine:
    config = root / f"{state}.toml"
    config.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
        f'root = "{docs}"\n\n[ranking]\nsemantic = false\n',
        encoding="utf-8",
    )
    engine = LocalEngine(load_settings(config, state_dir=str(root / state)), load_registry())
    engine.indexer.load_or_build()
    return engine


def _tied_page(i: int) -> str:
    # Every page one block of the same length with the word once: all score alike.
    return f"# Gadget {i:03d}\n\nOne gadget here.\n"


def _pool(engine: LocalEngine, limit: int = 50) -> list[str]:
    hits = lexical_search(engine.indexer.snapshot, ["gadget"], FieldWeights(), limit)
    assert len({round(h.score, 6) for h in hits}) == 1  # one tie, wider than the pool
    return sorted(h.doc.path for h in hits)


def test_a_tie_across_the_cut_keeps_the_same_blocks_however_the_index_was_reached(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(1, 120, 2):  # the odd pages first: their blocks come first in the index
        (docs / f"p{i:03d}.md").write_text(_tied_page(i), encoding="utf-8")
    caught_up = _engine(tmp_path, docs, "caught-up")
    for i in range(0, 120, 2):
        (docs / f"p{i:03d}.md").write_text(_tied_page(i), encoding="utf-8")
    caught_up.indexer.reconcile()
    fresh = _engine(tmp_path, docs, "fresh")
    assert caught_up.indexer.snapshot.searcher.num_docs == fresh.indexer.snapshot.searcher.num_docs
    # The first 50 pages by place, whichever order the index holds their blocks in.
    expected = [f"p{i:03d}.md" for i in range(50)]
    assert _pool(fresh) == expected
    assert _pool(caught_up) == expected


@pytest.fixture(scope="module")
def widgets(tmp_path_factory) -> LocalEngine:
    root = tmp_path_factory.mktemp("pool-per-document")
    docs = root / "docs"
    docs.mkdir()
    # 8 pages of 10 sections that all match: more than a pool holds.
    for page in range(8):
        sections = [f"# Widgets, part {page}\n"]
        sections += [
            f"## Widget setting {page}-{n}\n\nTune the widget's setting {n} for case {page}.\n"
            for n in range(10)
        ]
        (docs / f"widgets-{page}.md").write_text("\n".join(sections), encoding="utf-8")
    return _engine(root, docs, "state")


def _batch(engine: LocalEngine, text: str, most: int, explain: bool = False) -> SearchBatch:
    """What the local provider passes on to the ranking for ``text``."""
    searching = engine.searching
    saved = searching.local.ranking
    searching.local.ranking = dataclasses.replace(saved, question_blocks_per_document=most)
    try:
        query = searching.make_query(SearchParams(query=text, top_k=10, explain=explain))
        return searching.local.batch(query)
    finally:
        searching.local.ranking = saved


def _pages(batch: SearchBatch) -> list[str]:
    return [cand.document.path for cand in batch.candidates]


def test_a_question_passes_on_at_most_three_blocks_of_a_page(widgets):
    assert widgets.ranking.question_blocks_per_document == 3  # the shipped default
    question = _pages(_batch(widgets, QUESTION, 3))
    # Every page the whole pool reaches still has its three best blocks.
    whole = _pages(_batch(widgets, QUESTION, 0))
    assert len(whole) == 50
    assert sorted(question) == sorted(p for p in set(whole) for _ in range(3))
    # A pasted text's pool is passed on whole.
    assert len(_pages(_batch(widgets, PASTED, 3))) == 50


def test_explain_says_which_blocks_the_cap_left_out(widgets):
    batch = _batch(widgets, QUESTION, 3, explain=True)
    assert len(batch.candidates) + len(batch.held_back) == 50
    assert {d.why for d in batch.held_back} == {
        "more than 3 blocks of one document in a question's pool"
    }
    assert all(d.ref_id and d.location.startswith("widgets-") for d in batch.held_back)
    # Through a search: the retrieve stage reports them as its drops.
    searching = widgets.searching
    outcome = searching.search_local(
        searching.make_query(SearchParams(query=QUESTION, top_k=10, explain=True))
    )
    (retrieve,) = [s for s in outcome.stages if s.stage == "retrieve"]
    assert (retrieve.kept, retrieve.dropped) == (len(batch.candidates), len(batch.held_back))
    assert retrieve.drops and retrieve.drops[0].why == batch.held_back[0].why
    # Unexplained, nothing is made for them.
    assert _batch(widgets, QUESTION, 3).held_back == []


def _hit(path: str, score: float, pooled: bool = True) -> LexicalHit:
    doc = type("Doc", (), {"source": "docs", "path": path})()
    return LexicalHit(score, doc, 0, None, 0, pooled=pooled)  # type: ignore[arg-type]


def test_the_cap_keeps_a_page_best_blocks_and_every_block_that_joined_otherwise():
    hits = [
        _hit("a.md", 1.0),
        _hit("a.md", 3.0),
        _hit("b.md", 2.0),
        _hit("a.md", 2.0),
        _hit("a.md", 0.5, pooled=False),  # a definition or a block only the meaning found
    ]
    kept, left = at_most_per_document(hits, 2)
    assert [(h.doc.path, h.score, h.pooled) for h in kept] == [
        ("a.md", 3.0, True),
        ("b.md", 2.0, True),
        ("a.md", 2.0, True),
        ("a.md", 0.5, False),
    ]
    assert [(h.doc.path, h.score) for h in left] == [("a.md", 1.0)]
    assert at_most_per_document(hits, 4) == (hits, [])
