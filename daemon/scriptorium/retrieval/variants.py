"""Marks the candidates that are variants of one page (``ranking/variants.py``) from what the
served generation lists: each source's sorted paths, and which sibling folders hold the same
pages, remembered for the generation."""

from __future__ import annotations

from collections.abc import Sequence

from scriptorium.domain.model import Candidate
from scriptorium.index.catalog import Snapshot
from scriptorium.ranking.variants import SourcePaths, same_pages, variant_families


def mark_variants(
    candidates: Sequence[Candidate], snapshot: Snapshot, *, code: bool = False
) -> None:
    """Give each candidate with a variant among ``candidates`` its family's key (definitions
    too, with ``code``)."""
    memo = snapshot.memo

    def confirm(source: str, prefix: str, one: str, other: str) -> bool:
        key = ("variant-folders", source, prefix, *sorted((one, other)))
        held = memo.get(key)
        if held is None:
            held = memo[key] = same_pages(_paths(snapshot, source), prefix, one, other)
        return bool(held)

    families = variant_families(candidates, confirm, code=code)
    for cand in candidates:
        cand.variant = families.get(id(cand), "")


def _paths(snapshot: Snapshot, source: str) -> SourcePaths:
    key = ("source-paths", source)
    held = snapshot.memo.get(key)
    if held is None:
        held = snapshot.memo[key] = SourcePaths(p for s, p in snapshot.docs if s == source)
    return held  # type: ignore[return-value]
