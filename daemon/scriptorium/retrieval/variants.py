"""Marks the candidates that are variants of one page (``ranking/variants.py``) from what the
served generation lists: each source's sorted paths, and which sibling folders hold the same
pages, remembered for the generation."""

from __future__ import annotations

from collections import defaultdict
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

    placed = _placed_twice(snapshot)
    among = [c for c in candidates if (c.source, c.document.path) in placed]
    families = variant_families(among, confirm, code=code) if len(among) > 1 else {}
    for cand in candidates:
        cand.variant = families.get(id(cand), "")


def _placed_twice(snapshot: Snapshot) -> frozenset[tuple[str, str]]:
    """The served files with a file of the same name at the same place under a sibling
    folder (``a/react/x.md`` and ``a/vue/x.md``), found once per generation: only they can
    be variants, and most candidates of a search (every one, in most trees) are not."""
    key = ("variant-places",)
    held = snapshot.memo.get(key)
    if held is None:
        places: dict[tuple[str, str], list[str]] = defaultdict(list)
        for source, path in snapshot.docs:
            parts = path.split("/")
            for at in range(len(parts) - 1):
                around = "/".join((*parts[:at], "*", *parts[at + 1 :]))
                places[(source, around)].append(path)
        held = frozenset(
            (source, path)
            for (source, _), paths in places.items()
            if len(paths) > 1
            for path in paths
        )
        snapshot.memo[key] = held
    return held  # type: ignore[return-value]


def _paths(snapshot: Snapshot, source: str) -> SourcePaths:
    key = ("source-paths", source)
    held = snapshot.memo.get(key)
    if held is None:
        held = snapshot.memo[key] = SourcePaths(p for s, p in snapshot.docs if s == source)
    return held  # type: ignore[return-value]
