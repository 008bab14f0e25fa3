"""When an index reached through edits is written again (``index/compaction.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from scriptorium.index.compaction import Deleted, deleted_blocks, should_rewrite


def _meta(index_dir: Path, segments: list[dict]) -> Path:
    index_dir.mkdir(parents=True, exist_ok=True)
    (index_dir / "meta.json").write_text(json.dumps({"segments": segments}), "utf-8")
    return index_dir


def test_deleted_blocks_are_read_from_every_segment(tmp_path: Path) -> None:
    index_dir = _meta(
        tmp_path / "index",
        [
            {"segment_id": "a", "max_doc": 100, "deletes": None},
            {"segment_id": "b", "max_doc": 40, "deletes": {"num_deleted_docs": 7, "opstamp": 3}},
            {"segment_id": "c", "max_doc": 10, "deletes": {"num_deleted_docs": 3, "opstamp": 5}},
        ],
    )
    held = deleted_blocks(index_dir)
    assert held == Deleted(10, 150)
    assert round(held.share, 4) == round(10 / 150, 4)


def test_an_index_without_a_readable_meta_holds_nothing_deleted(tmp_path: Path) -> None:
    assert deleted_blocks(tmp_path / "absent") == Deleted(0, 0)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text("{not json", "utf-8")
    assert deleted_blocks(broken) == Deleted(0, 0)
    assert Deleted(0, 0).share == 0.0


def test_every_root_rewrites_at_any_share_and_the_watch_past_its_bound() -> None:
    none, few, many = Deleted(0, 1000), Deleted(5, 1000), Deleted(50, 1000)
    assert not should_rewrite(none, every_root=True, bound=0.0)
    assert should_rewrite(few, every_root=True, bound=0.5)
    assert not should_rewrite(few, every_root=False, bound=0.01)
    assert should_rewrite(many, every_root=False, bound=0.01)
    assert should_rewrite(few, every_root=False, bound=0.0)


def _engine(tmp_path: Path, corpus: Path):
    from scriptorium.engine.local import LocalEngine
    from scriptorium.plugins import load_registry
    from scriptorium.settings.config import load_settings
    from tests.support.daemon import write_fastapi_config

    config = write_fastapi_config(tmp_path / "c.toml", corpus)
    return LocalEngine(load_settings(config, state_dir=str(tmp_path / "state")), load_registry())


def _documents(indexer) -> dict[str, int]:
    return {s: len(e.files) for s, e in indexer.snapshot.manifest.sources.items()}


def test_a_catch_up_that_deleted_blocks_rewrites_the_index_as_a_fresh_build(tmp_path: Path) -> None:
    from tests.support.daemon import copy_tutorial_slice

    corpus = copy_tutorial_slice(tmp_path / "corpus")
    indexer = _engine(tmp_path, corpus).indexer
    indexer.load_or_build()
    page = corpus / "docs/en/docs/tutorial/first-steps.md"
    page.write_text(page.read_text("utf-8") + "\n\n## Zqmarker\n\nzqmarker text\n", "utf-8")
    before = indexer.snapshot.generation
    assert indexer.reconcile() is not None
    served = indexer.store.generation_dir(indexer.snapshot.generation) / "index"
    assert indexer.snapshot.generation == before + 2  # the edit, then the rewrite
    assert deleted_blocks(served).deleted == 0
    assert indexer.snapshot.manifest.parent == 0  # written from nothing, as a fresh build


def test_a_source_served_as_it_was_is_never_dropped_by_a_rewrite(tmp_path: Path) -> None:
    """A source whose root has gone is served from the generation (stale); a write from the
    roots would drop it, so the index keeps its deleted blocks instead."""
    from tests.support.daemon import copy_tutorial_slice

    corpus = copy_tutorial_slice(tmp_path / "corpus")
    indexer = _engine(tmp_path, corpus).indexer
    indexer.load_or_build()
    held = _documents(indexer)
    assert held["ja"] > 0
    shutil.rmtree(corpus / "docs/ja/docs")
    page = corpus / "docs/en/docs/tutorial/first-steps.md"
    page.write_text(page.read_text("utf-8") + "\n\n## Zqmarker\n\nzqmarker text\n", "utf-8")
    before = indexer.snapshot.generation
    assert indexer.reconcile() is not None
    assert indexer.snapshot.generation == before + 1  # the edit only: no rewrite
    assert _documents(indexer)["ja"] == held["ja"]
    assert indexer.states["ja"].state == "stale"
    served = indexer.store.generation_dir(indexer.snapshot.generation) / "index"
    assert deleted_blocks(served).deleted > 0
