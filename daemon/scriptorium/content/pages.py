"""One source's lookup tables for location resolution, over page paths, never documents.

The tables map a lower-cased name (canonical page, last segment, ``moved_from`` record,
Python module's last name) to the paths naming it. Holding paths rather than documents is
what keeps a daemon's memory flat after start-up: the tables are made for every page (from
the document table's keys and the pack's records, ``DocTable.page_entries``), and only the
one document a lookup resolves to is made, when the resolver asks for it. A name that one
path holds (most of them) is kept as that path, not a list.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from scriptorium.domain.libraries import inside_library
from scriptorium.sources.base import Source

_VARIANT_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".html", ".htm")
_PYTHON_SUFFIXES = (".py", ".pyi")
TABLES = ("exact", "leaf", "moved", "module")

# A page as the tables see it: its path and its ``moved_from`` front matter.
PageEntry = tuple[str, Sequence[str]]
Paths = str | tuple[str, ...]


@dataclass(slots=True)
class Outcome:
    reason: str  # resolved or ambiguous
    rule: str
    path: str | None = None
    candidates: list[str] = field(default_factory=list)


def paths_of(value: Paths | None) -> tuple[str, ...]:
    """The paths a table entry holds (one path is stored bare)."""
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else value


def _packed(paths: list[str]) -> Paths:
    return paths[0] if len(paths) == 1 else tuple(paths)


class SourcePages:
    """Lookup tables of one source's canonical pages, built once per generation.

    Every entry holds its paths in path order, as a build from the whole source gives;
    :meth:`changed` derives the next generation's tables from these in proportion to what
    changed, without walking every page again.
    """

    __slots__ = ("exact", "leaf", "module", "moved", "source", "top_dirs")

    def __init__(self, source: Source, pages: Iterable[PageEntry]) -> None:
        self.source = source
        tables: dict[str, dict[str, list[str]]] = {t: defaultdict(list) for t in TABLES}
        self.top_dirs: Counter[str] = Counter()
        for path, moved_from in pages:
            for table, key in self._keys(path, moved_from):
                tables[table][key].append(path)
            if "/" in path:
                self.top_dirs[path.split("/", 1)[0].lower()] += 1
        self._set({t: {k: _packed(v) for k, v in entries.items()} for t, entries in tables.items()})

    def _set(self, tables: dict[str, dict[str, Paths]]) -> None:
        self.exact, self.leaf = tables["exact"], tables["leaf"]
        self.moved, self.module = tables["moved"], tables["module"]

    def _keys(self, path: str, moved_from: Sequence[str]) -> Iterator[tuple[str, str]]:
        page = self.source.page_location(path).lower()
        yield "exact", page
        yield "leaf", page.rsplit("/", 1)[-1]
        for old in moved_from:
            yield "moved", strip_variant(old.strip().strip("/").lower())
        module = module_name(path)
        if module:
            yield "module", module.rsplit(".", 1)[-1].lower()

    def paths(self, table: str, key: str) -> tuple[str, ...]:
        return paths_of(getattr(self, table).get(key))

    def changed(self, removed: list[PageEntry], added: list[PageEntry]) -> SourcePages:
        """These tables with ``removed`` pages taken out and ``added`` ones put in."""
        new = object.__new__(SourcePages)
        new.source = self.source
        tables = {t: dict(getattr(self, t)) for t in TABLES}
        new.top_dirs = Counter(self.top_dirs)
        touched: dict[tuple[str, str], list[str]] = {}
        for (path, moved_from), sign in [(p, -1) for p in removed] + [(p, 1) for p in added]:
            for table, key in self._keys(path, moved_from):
                entry = touched.get((table, key))
                if entry is None:
                    entry = touched[(table, key)] = list(paths_of(tables[table].get(key)))
                if sign < 0:
                    entry[:] = [p for p in entry if p != path]
                else:
                    entry.append(path)
            if "/" in path:
                new.top_dirs[path.split("/", 1)[0].lower()] += sign
        for (table, key), entry in touched.items():
            if entry:
                tables[table][key] = _packed(sorted(entry))
            else:
                tables[table].pop(key, None)
        new.top_dirs = +new.top_dirs  # drops directories no page is in any more
        new._set(tables)
        return new

    def resolve(self, path: str) -> Outcome | None:
        key = path.lower()
        hit = self.paths("exact", key)
        if hit:
            return _outcome(hit, "exact")
        variant = strip_variant(key)
        if variant != key:
            hit = self.paths("exact", variant)
            if hit:
                return _outcome(hit, "variant")
        # An explicit moved_from record beats a guess from the last segment.
        hit = self.paths("moved", variant)
        if hit:
            return _outcome(hit, "moved")
        leaf = variant.rsplit("/", 1)[-1]
        hit = self.paths("leaf", leaf)
        if len(hit) == 1:
            return Outcome("resolved", "canonical-leaf", hit[0])
        return None

    def python_module(self, module: str) -> tuple[list[str], str]:
        """The Python files a dotted module name names, and by which rule: ``exact`` (the
        file's path from the source root), else ``canonical-leaf`` (the path's trailing
        packages, as a ``src/`` layout imports them). A ``.py`` file hides its ``.pyi`` stub."""
        paths = self.paths("module", module.rsplit(".", 1)[-1].lower())
        exact = [p for p in paths if module_name(p) == module]
        if exact:
            return _without_stubs(exact), "exact"
        tail = [p for p in paths if module_name(p).endswith("." + module)]
        return _without_stubs(tail), "canonical-leaf"

    def leaf_pages(self, path: str) -> list[str]:
        """The pages whose last segment is the path's, when several share it (a leaf miss).

        They are what a caller can choose from: the leaf rule refuses to guess among them.
        """
        leaf = strip_variant(path.lower()).rsplit("/", 1)[-1]
        hit = self.paths("leaf", leaf)
        return list(hit) if len(hit) > 1 else []


def _outcome(paths: tuple[str, ...], rule: str) -> Outcome:
    if len(paths) == 1:
        return Outcome("resolved", rule, paths[0])
    return Outcome("ambiguous", rule, None, sorted(paths))


def strip_variant(path: str) -> str:
    for suffix in _VARIANT_SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if path.endswith("/index"):
        path = path[: -len("/index")]
    return path


def _without_stubs(paths: list[str]) -> list[str]:
    """``paths`` less the ``.pyi`` stubs whose ``.py`` file is among them."""
    modules = {p.removesuffix(".py") for p in paths if p.endswith(".py")}
    return [p for p in paths if not p.endswith(".pyi") or p[:-4] not in modules]


def module_name(path: str) -> str:
    """``pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py`` -> ``pkg``; "" for other files. An
    installed library's file (``httpx@0.28.1:httpx/_client.py``) is named as it is imported."""
    path = inside_library(path)
    stem = next((path[: -len(s)] for s in _PYTHON_SUFFIXES if path.endswith(s)), "")
    stem = stem.removesuffix("/__init__")
    parts = stem.split("/")
    return ".".join(parts) if stem and all(p.isidentifier() for p in parts) else ""
