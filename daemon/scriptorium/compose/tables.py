"""Lookup tables over one generation that composed calls share (built once, kept per generation).

They are made from the document table's keys and pack records and hold (source, path) keys,
not documents: a table over every code file or page would otherwise make every document of
the corpus and keep it for the generation's life. A lookup makes the documents it returns.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Generic, TypeVar

from cachetools import LRUCache

from scriptorium.domain.model import Corpus, SourceDocument
from scriptorium.index.catalog import Snapshot
from scriptorium.index.doctable import DocTable
from scriptorium.index.suffixes import PathSuffixes
from scriptorium.index.texts import record_symbols

K = TypeVar("K")
Key = tuple[str, str]
_CODE, _DOCS = str(Corpus.CODE), str(Corpus.DOCS)


@lru_cache(maxsize=65_536)
def folder_of(path: str) -> str:
    """The folder of a path as ``PurePosixPath`` spells it (``.`` at the top), remembered:
    proximity asks it of every code file for every code seed."""
    return str(PurePosixPath(path).parent)


class DocLists(Mapping[K, list[SourceDocument]], Generic[K]):
    """name -> documents, held as their keys; each list is made when looked up."""

    __slots__ = ("_docs", "_entries")

    def __init__(self, entries: dict[K, list[Key]], docs: DocTable) -> None:
        self._entries, self._docs = entries, docs

    def __getitem__(self, name: K) -> list[SourceDocument]:
        return [self._docs[key] for key in self._entries[name]]

    def __iter__(self) -> Iterator[K]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


class SuffixLists(Mapping[str, list[SourceDocument]]):
    """Lower-cased trailing run of path segments -> the code files whose path ends so, in
    snapshot order: one sorted position per file (``index/suffixes.py``), not an entry per
    suffix of every path."""

    __slots__ = ("_docs", "_positions", "_table")

    def __init__(self, positions: array, docs: DocTable) -> None:
        self._positions, self._docs = positions, docs
        self._table = PathSuffixes(len(positions), lambda at: docs.key_at(positions[at])[1])

    def _found(self, suffix: str) -> list[int]:
        return sorted(self._positions[at] for at in self._table.positions(suffix))

    def __getitem__(self, suffix: str) -> list[SourceDocument]:
        found = self._found(suffix) if suffix == suffix.lower() else []
        if not found:
            raise KeyError(suffix)
        return [self._docs.at(at) for at in found]

    def __contains__(self, suffix: object) -> bool:
        return isinstance(suffix, str) and suffix == suffix.lower() and bool(self._found(suffix))

    def __iter__(self) -> Iterator[str]:
        """Every suffix once (made from the paths: for tests and tools, not requests)."""
        seen: set[str] = set()
        for at in self._positions:
            parts = self._docs.key_at(at)[1].lower().split("/")
            for i in range(len(parts)):
                suffix = "/".join(parts[i:])
                if suffix not in seen:
                    seen.add(suffix)
                    yield suffix

    def __len__(self) -> int:
        return sum(1 for _ in self)


class BlockLists(Mapping[str, list[tuple[SourceDocument, int]]]):
    """name -> (document, block index) of the blocks defining it, held as keys."""

    __slots__ = ("_docs", "_entries")

    def __init__(self, entries: dict[str, list[tuple[Key, int]]], docs: DocTable) -> None:
        self._entries, self._docs = entries, docs

    def __getitem__(self, name: str) -> list[tuple[SourceDocument, int]]:
        return [(self._docs[key], index) for key, index in self._entries[name]]

    def count(self, name: str) -> int:
        """How many blocks define ``name``, without making their documents."""
        return len(self._entries.get(name, ()))

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(slots=True)
class _Tables:
    symbols: BlockLists
    code_by_suffix: SuffixLists
    code_by_folder: DocLists[tuple[str, str]]
    includers: DocLists[str]


class CorpusTables:
    """Symbols, code files by path suffix and by folder, and includers, per generation.

    The four are made together, in one pass over the generation's records (a composed call
    asks for most of them; each pass reads every record of the pack again).
    """

    def __init__(self) -> None:
        # The tables of the served generation and the one before it.
        self._derived: LRUCache = LRUCache(maxsize=2)
        # (source, path, content hash) of a page -> the code files it includes.
        self._includes: dict[tuple[str, str, str], tuple[str, ...]] = {}

    def symbols(self, snapshot: Snapshot) -> Mapping[str, list[tuple[SourceDocument, int]]]:
        """Definition name → blocks defining it, for import resolution (cached per generation)."""
        return self._tables(snapshot).symbols

    def symbol_count(self, snapshot: Snapshot, name: str) -> int:
        """How many blocks define ``name`` (their documents are not made)."""
        return self._tables(snapshot).symbols.count(name)

    def code_by_suffix(self, snapshot: Snapshot) -> Mapping[str, list[SourceDocument]]:
        """A trailing run of path segments, lower-cased → the code files whose path ends so
        (in snapshot order), found by binary search in one sorted table (cached)."""
        return self._tables(snapshot).code_by_suffix

    def code_by_folder(self, snapshot: Snapshot) -> Mapping[tuple[str, str], list[SourceDocument]]:
        """(source, folder) → the code files directly in it, in snapshot order (cached)."""
        return self._tables(snapshot).code_by_folder

    def includers(self, snapshot: Snapshot) -> Mapping[str, list[SourceDocument]]:
        """Code path → documents that include it with an include directive (cached)."""
        return self._tables(snapshot).includers

    def _tables(self, snapshot: Snapshot) -> _Tables:
        cached = self._derived.get(snapshot.generation)
        if cached is None:
            cached = self._make(snapshot.docs)
            self._derived[snapshot.generation] = cached
        return cached

    def _make(self, docs: DocTable) -> _Tables:
        symbols: dict[str, list[tuple[Key, int]]] = defaultdict(list)
        code = array("q")
        folders: dict[tuple[str, str], list[Key]] = defaultdict(list)
        # Every trailing run of path segments of every code file: an include written as
        # "../../docs_src/app/main.py" (normalised to "docs_src/app/main.py") finds
        # "docs_src/app/main.py" and "examples/docs_src/app/main.py" in one lookup.
        by_suffix: dict[str, list[str]] = defaultdict(list)
        pages: list[tuple[Key, str, tuple[str, ...]]] = []
        for at, (key, record) in enumerate(docs.records()):
            if record[2] == _CODE:
                code.append(at)
                for index, symbol in record_symbols(record):
                    symbols[symbol].append((key, index))
                path = key[1]
                parts = path.split("/")
                for i in range(len(parts)):
                    by_suffix["/".join(parts[i:])].append(path)
                folders[(key[0], folder_of(path))].append(key)
            elif record[2] == _DOCS:
                # Served documents carry what they include (read when they were cut): the
                # table never reads every page's text.
                pages.append((key, record[3], record[9]))
        # What each page includes is kept across generations (keyed by its content), so a
        # page's includes are shared with the previous generation's table.
        includers: dict[str, list[Key]] = defaultdict(list)
        previous, seen = self._includes, {}
        for key, content_hash, includes in pages:
            remembered = (key[0], key[1], content_hash)
            tails = previous.get(remembered, includes)
            seen[remembered] = tails
            for tail in tails:
                for path in by_suffix.get(tail, ()):
                    includers[path].append(key)
        self._includes = seen
        return _Tables(
            BlockLists(dict(symbols), docs),
            SuffixLists(code, docs),
            DocLists(dict(folders), docs),
            DocLists(dict(includers), docs),
        )
