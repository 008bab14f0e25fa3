"""Lookup tables over one generation that composed calls share (built once, kept per generation)."""

from __future__ import annotations

from collections import defaultdict

from cachetools import LRUCache

from scriptorium.compose.related import folder_of, includes_in
from scriptorium.domain.model import Corpus, SourceDocument
from scriptorium.index.catalog import Snapshot
from scriptorium.index.texts import block_symbols


class CorpusTables:
    """Symbols, code files by path suffix and by folder, and includers, per generation."""

    def __init__(self) -> None:
        # Four tables per generation: room for the served generation and the one before it.
        self._derived: LRUCache = LRUCache(maxsize=8)
        # (source, path, content hash) of a page -> the code files it includes.
        self._includes: dict[tuple[str, str, str], tuple[str, ...]] = {}

    def symbols(self, snapshot: Snapshot) -> dict[str, list[tuple[SourceDocument, int]]]:
        """Definition name → blocks defining it, for import resolution (cached per generation)."""
        cached = self._derived.get(("symbols", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    for index, symbol in block_symbols(doc):
                        cached[symbol].append((doc, index))
            self._derived[("symbols", snapshot.generation)] = cached
        return cached

    def code_by_suffix(self, snapshot: Snapshot) -> dict[str, list[SourceDocument]]:
        """Every trailing run of path segments of every code file, lower-cased → the files
        (in snapshot order), so finding the files a path ends with is one lookup (cached)."""
        cached = self._derived.get(("code-suffixes", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    parts = doc.path.lower().split("/")
                    for i in range(len(parts)):
                        cached["/".join(parts[i:])].append(doc)
            self._derived[("code-suffixes", snapshot.generation)] = cached
        return cached

    def code_by_folder(self, snapshot: Snapshot) -> dict[tuple[str, str], list[SourceDocument]]:
        """(source, folder) → the code files directly in it, in snapshot order (cached)."""
        cached = self._derived.get(("code-folders", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    cached[(doc.source, folder_of(doc.path))].append(doc)
            self._derived[("code-folders", snapshot.generation)] = cached
        return cached

    def includers(self, snapshot: Snapshot) -> dict[str, list[SourceDocument]]:
        """Code path → documents that include it with an include directive (cached)."""
        cached = self._derived.get(("includers", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            # Every trailing run of path segments of every code file: an include written as
            # "../../docs_src/app/main.py" (normalised to "docs_src/app/main.py") finds
            # "docs_src/app/main.py" and "examples/docs_src/app/main.py" in one lookup.
            by_suffix: dict[str, list[str]] = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    parts = doc.path.split("/")
                    for i in range(len(parts)):
                        by_suffix["/".join(parts[i:])].append(doc.path)
            # What each page includes is kept across generations (keyed by its content), so
            # after an update only the changed pages are scanned again.
            previous, seen = self._includes, {}
            for doc in snapshot.docs.values():
                if doc.corpus is not Corpus.DOCS:
                    continue
                key = (doc.source, doc.path, doc.content_hash)
                tails = previous.get(key)
                if tails is None:
                    # Served documents carry what they include (read when they were cut):
                    # the table never reads every page's text.
                    tails = getattr(doc, "includes", None)
                    if tails is None:
                        tails = tuple(includes_in(doc.text))
                seen[key] = tails
                for tail in tails:
                    for path in by_suffix.get(tail, ()):
                        cached[path].append(doc)
            self._includes = seen
            self._derived[("includers", snapshot.generation)] = cached
        return cached
