"""When an index reached through edits is written again (``index/compaction.py``)."""

from __future__ import annotations

import json
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
