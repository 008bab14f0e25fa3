"""When an index reached through edits is written again from its roots, and why.

tantivy deletes the old blocks of a changed or removed file by marking them: they stay in
their segment, and BM25's statistics (how many blocks hold a term, how long a field is on
average) go on counting them until the segment is rewritten. An index reached through
updates then ranks differently from a fresh build of the same tree. A merge would not make
it exact either: tantivy estimates a merged segment's field lengths from its quantized
norms. So an index that holds deleted blocks is written again from nothing, as a fresh
build of the same tree writes it: the same blocks in the same order, hence the same scores
and the same ties.

A reconcile of every root (a first build, the start-up catch-up, ``index build``) does so
whenever the index holds a deleted block; one driven by the watch once the deleted blocks
reach ``rewrite_deleted_share`` of the index (0: after every edit that deletes blocks),
since a rewrite costs a full build.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Deleted:
    """Blocks an index holds: deleted (still counted by BM25) and in all."""

    deleted: int
    total: int

    @property
    def share(self) -> float:
        return self.deleted / self.total if self.total else 0.0


def deleted_blocks(index_dir: Path) -> Deleted:
    """The deleted blocks of the tantivy index in ``index_dir``, from its ``meta.json``
    (each segment names its documents and its deletes); none when it cannot be read."""
    try:
        meta = json.loads((index_dir / "meta.json").read_text("utf-8"))
        segments = meta.get("segments") or []
        total = sum(int(s.get("max_doc", 0)) for s in segments)
        deleted = sum(int((s.get("deletes") or {}).get("num_deleted_docs", 0)) for s in segments)
    except (OSError, ValueError, TypeError, AttributeError):
        return Deleted(0, 0)
    return Deleted(deleted, total)


def should_rewrite(held: Deleted, *, every_root: bool, bound: float) -> bool:
    """Whether an index holding ``held`` is written again from nothing: always after a
    reconcile of ``every_root`` when it holds a deleted block, else past ``bound``."""
    if held.deleted == 0:
        return False
    return every_root or held.share >= bound
