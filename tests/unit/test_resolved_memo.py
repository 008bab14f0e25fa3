"""The lexical hits' memo of resolved blocks (``index/searcher.py``): the same blocks as the
served block table gives, and never a block of an older generation after a swap."""

from __future__ import annotations

import pytest

from scriptorium.engine.local import LocalEngine
from scriptorium.index.searcher import FieldWeights, LexicalHit, lexical_search
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from tests.support.trees import markdown_config, write_tree

OTTERS = "## Otters\n\nOtters hold hands while they sleep on the river.\n"


@pytest.fixture()
def engine(tmp_path) -> LocalEngine:
    docs = write_tree(
        tmp_path / "docs",
        {
            "rivers.md": f"# Rivers\n\n{OTTERS}\n## Beavers\n\nBeavers build dams.\n",
            "seas.md": "# Seas\n\nSea otters float on kelp.\n",
        },
    )
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    built = LocalEngine(load_settings(config, state_dir=str(tmp_path / "state")), load_registry())
    built.indexer.load_or_build()
    return built


def _hits(engine: LocalEngine) -> list[LexicalHit]:
    return lexical_search(engine.indexer.snapshot, ["otter"], FieldWeights(), 10)


def _as_served(engine: LocalEngine, hits: list[LexicalHit]) -> None:
    """Every hit names the document and block the served block table gives for its id."""
    blocks = engine.indexer.snapshot.blocks
    assert hits
    for hit in hits:
        doc, index = blocks.get(hit.bid)
        assert (hit.doc, hit.block_index) == (doc, index)
        assert "otter" in hit.block.body.casefold()


def test_hits_resolve_as_the_block_table_does_and_again_from_the_memo(engine):
    first = _hits(engine)
    _as_served(engine, first)
    again = _hits(engine)
    _as_served(engine, again)
    assert [(h.bid, h.score) for h in again] == [(h.bid, h.score) for h in first]
    # The second search took each block from the memo: the same features object, decoded once.
    assert [h.features for h in again] == [h.features for h in first]
    assert all(a.features is b.features for a, b in zip(again, first, strict=True))


def test_after_a_swap_no_hit_names_a_block_of_the_older_generation(engine, tmp_path):
    before = _hits(engine)
    river = next(h for h in before if h.doc.path == "rivers.md")
    assert river.block.start_line == 3
    # Two sections before the otters: the same block text, at another index and other lines.
    page = tmp_path / "docs/rivers.md"
    page.write_text(
        "# Rivers\n\n## Banks\n\nMud and reeds.\n\n## Fords\n\nShallow crossings.\n\n"
        f"{OTTERS}\n## Beavers\n\nBeavers build dams.\n"
    )
    engine.indexer.reconcile({"docs": ["rivers.md"]})
    after = _hits(engine)
    _as_served(engine, after)
    moved = next(h for h in after if h.doc.path == "rivers.md")
    assert moved.block.start_line == 11
    assert moved.block_index == river.block_index + 2
    assert moved.doc is not river.doc
    assert all(a.features is not b.features for a in after for b in before)
