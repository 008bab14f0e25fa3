"""Served documents without their text: compact metadata in memory, text read on demand.

A served generation keeps, per document and per block, only what every search needs (ids,
paths, line ranges, headings, kinds, versions, front matter). A document's text, its blocks'
bodies and its line table are read from its blob when a request needs them, and kept in a
``TextCache`` whose size is bounded in bytes (``[index] cache_bytes``): memory follows the
bound, not the corpus. ``StoredDocument`` and ``StoredBlock`` answer every attribute a
``SourceDocument`` and a ``Block`` have, so the services read them alike.
"""

from __future__ import annotations

import marshal
import sys
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable

from scriptorium.domain.model import Block, Corpus, DocMeta, RefKind, SourceDocument
from scriptorium.domain.outcomes import Unavailable
from scriptorium.index.store import CorruptBlobError
from scriptorium.text.normalize import split_lines

DEFAULT_CACHE_BYTES = 64 * 1024 * 1024
# Documents that keep their blocks decoded at a time (a few hundred bytes per block each).
DECODED_DOCUMENTS = 4_096


class DamagedText(Unavailable):
    """A served document's blob could not be read back (missing, undecodable, mismatched).

    The generation is then refused as a corrupt one is at start-up (see ``Indexer``); the
    caller gets UNAVAILABLE and may ask again once the previous generation serves.
    """

    def __init__(self, source: str, path: str, blob: str, why: str) -> None:
        super().__init__(f"the stored text of {source}/{path} is damaged ({why}); reloading")
        self.source, self.path, self.blob, self.why = source, path, blob, why


def _size(value: str) -> int:
    return sys.getsizeof(value)


_ASCII_HEADER = sys.getsizeof("")  # an ASCII str object is this and one byte a character


def _lines_size(text: str, lines: list[str]) -> int:
    """What the line table of ``text`` holds, summed in C: asking each line its size from a
    generator cost 5 % of a search whose result documents were not cached. Lines of ASCII
    text (``isascii`` reads a flag) are ASCII strings, whose size their length gives."""
    if text.isascii():
        return sys.getsizeof(lines) + _ASCII_HEADER * len(lines) + sum(map(len, lines))
    return sys.getsizeof(lines) + sum(map(sys.getsizeof, lines))


class _Entry:
    __slots__ = ("bodies", "lines", "size", "text")

    def __init__(self, text: str, bodies: tuple[str, ...]) -> None:
        self.text = text
        self.bodies = bodies
        self.lines: list[str] | None = None
        self.size = _size(text) + sum(_size(b) for b in bodies) + 64 * (len(bodies) + 1)


class TextCache:
    """Texts, bodies and line tables by blob, least recently used first out, bounded in bytes.

    ``read(blob)`` returns a blob's text and block bodies (the text is checked against its
    content hash on every read). One lock guards the table: request threads share it, and
    each step under the lock is a dict operation; reading a blob happens outside it.
    """

    def __init__(self, read: Callable[[str], tuple[str, tuple[str, ...]]], limit: int) -> None:
        self._read = read
        self.limit = max(0, int(limit))
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.reads = 0  # blobs read (cache misses), for the benchmarks and tests
        # Documents whose blocks are decoded, oldest first: their block objects are dropped
        # past DECODED_DOCUMENTS, so decoded metadata too stays bounded however long it runs.
        self._decoded: OrderedDict[int, StoredDocument] = OrderedDict()
        # Called with a ``DamagedText`` before it is raised (the indexer refuses the generation).
        self.on_damage: Callable[[DamagedText], None] | None = None

    @property
    def bytes(self) -> int:
        return self._bytes

    def _entry(self, blob: str, source: str, path: str) -> _Entry:
        with self._lock:
            entry = self._entries.get(blob)
            if entry is not None:
                self._entries.move_to_end(blob)
                return entry
        try:
            text, bodies = self._read(blob)
        except (CorruptBlobError, OSError) as exc:
            damage = DamagedText(source, path, blob, str(exc))
            if self.on_damage is not None:
                self.on_damage(damage)
            raise damage from None
        self.reads += 1
        entry = _Entry(text, bodies)
        self._put(blob, entry)
        return entry

    def _put(self, blob: str, entry: _Entry) -> None:
        with self._lock:
            old = self._entries.pop(blob, None)
            if old is not None:
                self._bytes -= old.size
            self._entries[blob] = entry
            self._bytes += entry.size
            self._shrink()

    def _shrink(self) -> None:
        """Drop the least recently used entries until the bound holds (call under the lock);
        the newest entry stays even when it alone is over the bound."""
        while self._bytes > self.limit and len(self._entries) > 1:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.size

    def prime(self, blob: str, doc: SourceDocument) -> None:
        """Keep the text of a document just written (an edited file is read again soon)."""
        if self.limit:
            self._put(blob, _Entry(doc.text, tuple(b.body for b in doc.blocks)))

    def decoded(self, doc: StoredDocument) -> None:
        """Note that ``doc`` holds decoded blocks; the oldest such document lets go of its."""
        with self._lock:
            self._decoded[id(doc)] = doc
            while len(self._decoded) > DECODED_DOCUMENTS:
                _, old = self._decoded.popitem(last=False)
                old._blocks = None

    def text(self, blob: str, source: str, path: str) -> str:
        return self._entry(blob, source, path).text

    def body(self, blob: str, source: str, path: str, index: int) -> str:
        return self._entry(blob, source, path).bodies[index]

    def lines(self, blob: str, source: str, path: str) -> list[str]:
        entry = self._entry(blob, source, path)
        lines = entry.lines
        if lines is None:
            lines = split_lines(entry.text)
            entry.lines = lines
            with self._lock:
                grown = _lines_size(entry.text, lines)
                if self._entries.get(blob) is entry:
                    entry.size += grown
                    self._bytes += grown
                    self._entries.move_to_end(blob)
                    self._shrink()
        return lines


class StoredBlock:
    """A block's metadata; its ``body`` is read through the text cache."""

    __slots__ = (
        "_blob",
        "_path",
        "_source",
        "_texts",
        "aliases",
        "anchor",
        "end_line",
        "index",
        "kind",
        "level",
        "section_path",
        "start_line",
        "symbol",
        "symbol_kind",
        "title",
    )

    def __init__(self, texts: TextCache, blob: str, source: str, path: str, index: int, record):
        self._texts, self._blob, self._source, self._path, self.index = (
            texts,
            blob,
            source,
            path,
            index,
        )
        (
            self.kind,
            self.start_line,
            self.end_line,
            self.title,
            self.section_path,
            self.anchor,
            self.level,
            self.symbol,
            self.symbol_kind,
            self.aliases,
        ) = record
        self.kind = KINDS[self.kind]

    @property
    def body(self) -> str:
        return self._texts.body(self._blob, self._source, self._path, self.index)

    fragment = Block.fragment  # the same rule as a Block's, over the same fields

    def __repr__(self) -> str:
        return f"StoredBlock({self._path!r}, {self.start_line}-{self.end_line}, {self.title!r})"


class StoredDocument:
    """A served document's metadata; ``text`` and ``lines`` are read through the text cache.

    ``record`` is the document's pack record (``index/pack.py``): its blocks' metadata and ids
    stay encoded in it until first used, so start-up makes one object per document and none
    per block.
    """

    __slots__ = (
        "_blocks",
        "_texts",
        "blob",
        "content_hash",
        "corpus",
        "front_matter_lines",
        "includes",
        "language",
        "meta",
        "path",
        "preview_from_body",
        "record",
        "source",
    )

    def __init__(
        self,
        texts: TextCache,
        record: tuple,
        corpus: Corpus,
        meta: DocMeta,
    ) -> None:
        self._texts, self.record, self.corpus, self.meta = texts, record, corpus, meta
        (
            self.source,
            self.path,
            _,
            self.content_hash,
            self.blob,
            self.language,
            self.front_matter_lines,
            self.preview_from_body,
            _,
            self.includes,
            _,
            _,
        ) = record
        self._blocks: tuple[StoredBlock, ...] | None = None

    @property
    def blocks(self) -> tuple[StoredBlock, ...]:
        blocks = self._blocks
        if blocks is None:
            texts, blob, source, path = self._texts, self.blob, self.source, self.path
            blocks = tuple(
                StoredBlock(texts, blob, source, path, i, record)
                for i, record in enumerate(marshal.loads(self.record[10]))
            )
            self._blocks = blocks
            texts.decoded(self)
        return blocks

    @property
    def bids(self) -> array:
        """The 63-bit ids of the blocks, in block order (as the tantivy index holds them)."""
        return array("q", self.record[11])

    @property
    def text(self) -> str:
        return self._texts.text(self.blob, self.source, self.path)

    @property
    def lines(self) -> list[str]:
        return self._texts.lines(self.blob, self.source, self.path)

    def __repr__(self) -> str:
        return f"StoredDocument({self.source!r}, {self.path!r})"


def block_symbols(doc: SourceDocument | StoredDocument) -> list[tuple[int, str]]:
    """(index, symbol) of every block that defines a name, without making block objects: a
    table over every code file then keeps no decoded block of the corpus alive."""
    if isinstance(doc, StoredDocument) and doc._blocks is None:
        return record_symbols(doc.record)
    return [(i, b.symbol) for i, b in enumerate(doc.blocks) if b.symbol]


def record_symbols(record: tuple) -> list[tuple[int, str]]:
    """``block_symbols`` of a document's pack record (no document made)."""
    return [(i, r[7]) for i, r in enumerate(marshal.loads(record[10])) if r[7]]


def block_record(block: Block) -> tuple:
    """The compact form of a block's metadata (what ``StoredBlock`` is made from)."""
    return (
        block.kind,
        block.start_line,
        block.end_line,
        block.title,
        block.section_path,
        block.anchor,
        block.level,
        block.symbol,
        block.symbol_kind,
        block.aliases,
    )


KINDS = {str(kind): kind for kind in RefKind}
