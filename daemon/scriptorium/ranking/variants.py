"""Variants of one page: the same guide kept once per framework, platform or version.

Documentation for several frameworks (``docs/framework/react/guides/caching.md`` beside
``docs/framework/vue/guides/caching.md``), platforms or versions (``versioned_docs/
version-2/…``) keeps one page per variant under sibling folders. A question matches every
copy alike, and its first results would be one page several times. Two documentation pages
are variants of one page when their paths differ in one folder only and the two sibling
folders hold the same pages: of the first ``SAMPLED`` pages under the one, at least half, and
``MIN_SHARED``, have a page at the same place under the other. Pages that merely share a name
(``tutorial/middleware.md``, ``reference/middleware.md``) are not: their folders hold
different pages, and a few names every folder has (``index.md``) are not enough.

The retrieval stage gives each candidate that has a variant among the candidates a family
key (:func:`variant_families`); the window shows one of a family and holds the others back
(``ranking/window.py``): the first, or a later one whose folder names a newer version
(``pytorch~2`` over ``pytorch``, ``v2`` over ``v1``). Language folders are the translations'
business (``ranking/paths.py``) and are left out here.

With ``hold_back_code_variants``, code is read the same way, one definition at a time: a
library ported to each framework keeps a package per framework (``packages/solid-query/src/
useQuery.ts`` beside ``packages/preact-query/src/useQuery.ts``), and the same name defined at
the same place under both is one definition shown once.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from scriptorium.domain.model import Candidate, RefKind
from scriptorium.ranking.paths import translated

# Pages under a variant's folder that are looked up under its sibling, and how many of them
# must be there for the two folders to hold the same pages.
SAMPLED = 20
SHARED = 0.5
MIN_SHARED = 3


class SourcePaths:
    """The sorted paths of one source's documents, to list a folder's pages by bisection."""

    __slots__ = ("_paths",)

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = sorted(paths)

    def under(self, folder: str, limit: int) -> list[str]:
        """At most ``limit`` paths under ``folder`` (a path prefix ending with "/")."""
        at = bisect.bisect_left(self._paths, folder)
        found = []
        for path in self._paths[at : at + limit]:
            if not path.startswith(folder):
                break
            found.append(path)
        return found

    def __contains__(self, path: object) -> bool:
        at = bisect.bisect_left(self._paths, path)  # type: ignore[arg-type]
        return at < len(self._paths) and self._paths[at] == path


def same_pages(paths: SourcePaths, prefix: str, one: str, other: str) -> bool:
    """Whether the sibling folders ``prefix/one`` and ``prefix/other`` hold the same pages."""
    first = f"{prefix}{one}/"
    sampled = paths.under(first, SAMPLED)
    needed = max(MIN_SHARED, math.ceil(SHARED * len(sampled)))
    shared = 0
    for path in sampled:
        if f"{prefix}{other}/{path[len(first) :]}" in paths:
            shared += 1
            if shared >= needed:
                return True
    return False


def differing_folder(one: str, other: str) -> int | None:
    """The position of the one folder two paths differ in (same depth, same file name), or
    None."""
    a, b = one.split("/"), other.split("/")
    if len(a) != len(b) or len(a) < 2 or a[-1] != b[-1]:
        return None
    differ = [i for i in range(len(a) - 1) if a[i] != b[i]]
    return differ[0] if len(differ) == 1 else None


def variant_families(
    candidates: Sequence[Candidate],
    confirm: Callable[[str, str, str, str], bool],
    *,
    code: bool = False,
) -> dict[int, str]:
    """Each documentation candidate that has a variant among ``candidates`` (by ``id``) with
    its family's key; ``confirm(source, prefix, one, other)`` says whether two sibling
    folders hold the same pages (:func:`same_pages`, remembered by the caller).

    With ``code``, a definition is a variant of one in a file at the same place under the
    sibling folder only when the two define the same name (``useQuery`` in each package's
    ``src/useQuery.ts``): sibling packages share module names (``utils.py``) whose
    definitions are different code, and those are not held back.
    """
    by_name: dict[tuple[str, str, int, str], list[Candidate]] = defaultdict(list)
    for cand in candidates:
        path = cand.document.path
        if "/" not in path:
            continue
        kind = cand.block.kind
        if kind is RefKind.DOC and not translated(path):
            anchor = ""
        elif kind is RefKind.CODE and code and cand.block.anchor:
            anchor = "#" + cand.block.anchor
        else:
            continue
        by_name[(cand.source, path.rpartition("/")[2], path.count("/"), anchor)].append(cand)
    families: dict[int, str] = {}
    for (source, _, _, anchor), group in by_name.items():
        if len(group) < 2:
            continue  # most names are one candidate's: no variant to look for
        paths = sorted({c.document.path for c in group})
        if len(paths) < 2:
            continue
        keys: dict[str, str] = {}
        for i, one in enumerate(paths):
            for other in paths[i + 1 :]:
                at = differing_folder(one, other)
                if at is None:
                    continue
                parts = one.split("/")
                prefix = "".join(f"{part}/" for part in parts[:at])
                if not confirm(source, prefix, parts[at], other.split("/")[at]):
                    continue
                key = f"{source}:{prefix}*/{'/'.join(parts[at + 1 :])}{anchor}"
                keys.setdefault(one, key)
                keys.setdefault(other, keys[one])
        for cand in group:
            key = keys.get(cand.document.path)
            if key is not None:
                families[id(cand)] = key
    return families


def variant_name(path: str, key: str) -> str:
    """The folder that makes ``path`` its family's variant (``vue``), for explain."""
    prefix = key.partition(":")[2].partition("*/")[0]
    return path[len(prefix) :].partition("/")[0]


_NUMBER = re.compile(r"\d+")


def version_of(name: str) -> tuple[int, ...]:
    """The version a variant's folder names (``pytorch~2`` → (2,), ``version-1.10`` →
    (1, 10)); () when it names none."""
    return tuple(int(n) for n in _NUMBER.findall(name))
