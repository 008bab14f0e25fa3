"""The document pack: every served document's compact metadata in one file per generation.

A generation's ``index/documents.pack`` holds one record per document (paths, hashes, blob
names, front matter, block ids and block metadata, never text) in manifest order, each
encoded with ``marshal`` on its own, after the documents' keys and the records' offsets: a
cold start reads those two (``PackRecords``), and a document is decoded from
its record when first used (``index/doctable.py``). An update writes the next generation's
pack from the parent's record bytes for every document it keeps.

A record is ``(source, path, corpus, hash, blob, language, front_matter_lines,
preview_from_body, meta, includes, blocks, bids)``: ``meta`` is None for default front matter,
``blocks`` the marshalled tuple of block records (``texts.block_record``, kind as a string),
decoded when the document's blocks are first used, ``bids`` the blocks' 63-bit ids as int64
bytes. Kept encoded, the metadata of a block costs a few dozen bytes, not a few hundred.
"""

from __future__ import annotations

import marshal
import os
import struct
from array import array
from collections.abc import Callable, Iterable
from datetime import datetime
from itertools import accumulate

from scriptorium.domain.model import Corpus, DocMeta, SourceDocument
from scriptorium.index.texts import StoredDocument, TextCache, block_record

PACK_FILE = "documents.pack"
MAGIC = b"scriptorium-pack-3\n"
_HEADER = "<QQ"  # record count, length of the marshalled keys
_CORPORA = {str(c): c for c in Corpus}
_DEFAULT_META = DocMeta()
# The marshal format version: fixed, so a pack reads the same under every Python 3.11+.
_MARSHAL_VERSION = 4


class CorruptPackError(RuntimeError):
    """A pack does not decode into document records."""


def _dt(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def meta_record(meta: DocMeta) -> tuple | None:
    if meta == _DEFAULT_META:
        return None
    return (
        meta.title,
        meta.boost,
        meta.superseded_by,
        _dt(meta.effective_from),
        _dt(meta.effective_to),
        tuple(meta.moved_from),
        meta.source_class,
        meta.canonical_key,
        meta.parse_confidence,
    )


def _meta(record: tuple | None) -> DocMeta:
    if record is None:
        return _DEFAULT_META
    title, boost, superseded, start, end, moved, cls, key, confidence = record
    return DocMeta(
        title, boost, superseded, _parse_dt(start), _parse_dt(end), moved, cls, key, confidence
    )


def document_record(
    doc: SourceDocument, blob: str, includes: tuple[str, ...], bids: tuple[int, ...]
) -> tuple:
    """The pack record of a document just cut."""
    blocks = tuple((str(b[0]), *b[1:]) for b in map(block_record, doc.blocks))
    return (
        doc.source,
        doc.path,
        str(doc.corpus),
        doc.content_hash,
        blob,
        doc.language,
        doc.front_matter_lines,
        doc.preview_from_body,
        meta_record(doc.meta),
        includes,
        marshal.dumps(blocks, _MARSHAL_VERSION),
        array("q", bids).tobytes(),
    )


def from_record(record: tuple, texts: TextCache) -> StoredDocument:
    """The served document a record describes (its blocks are decoded on first use)."""
    return StoredDocument(texts, record, _CORPORA[record[2]], _meta(record[8]))


def stored(
    doc: SourceDocument,
    blob: str,
    texts: TextCache,
    includes: tuple[str, ...],
    bids: tuple[int, ...],
    prime: bool = True,
) -> StoredDocument:
    """The served form of a document just cut: its text goes to the cache (unless not
    ``prime``), not the object."""
    if prime:
        texts.prime(blob, doc)
    return from_record(document_record(doc, blob, includes, bids), texts)


def encode_record(record: tuple) -> bytes:
    return marshal.dumps(record, _MARSHAL_VERSION)


def encode_pack(keys: list[tuple[str, str]], records: Iterable[bytes]) -> bytes:
    """A pack of ``records`` (each ``encode_record``'s bytes), of the documents ``keys``."""
    chunks = list(records)
    if len(chunks) != len(keys):
        raise ValueError("a pack needs one record per document")
    head = marshal.dumps(list(keys), _MARSHAL_VERSION)
    offsets = array("Q", [0])
    offsets.extend(accumulate(map(len, chunks)))
    return b"".join(
        (MAGIC, struct.pack(_HEADER, len(chunks), len(head)), head, offsets.tobytes(), *chunks)
    )


class PackRecords:
    """A pack's documents, read one record at a time from the file (``os.pread``).

    Opening reads the keys and the offsets only; ``record(i)`` reads and decodes one record.
    Read, not memory-mapped: a table over every document (the resolver's) would otherwise
    keep the whole pack resident.
    """

    __slots__ = ("_base", "_handle", "_offsets", "_read", "keys")

    def __init__(self, read: Callable[[int, int], bytes], size: int, handle=None) -> None:
        self._read, self._handle = read, handle  # the open file, kept as long as the table
        try:
            at = len(MAGIC)
            head = read(0, at + struct.calcsize(_HEADER))
            if head[:at] != MAGIC:
                raise CorruptPackError("not a document pack of this format")
            count, length = struct.unpack_from(_HEADER, head, at)
            at += struct.calcsize(_HEADER)
            keys = marshal.loads(read(at, length))
            at += length
            offsets = array("Q")
            offsets.frombytes(read(at, 8 * (count + 1)))
        except (EOFError, ValueError, TypeError, struct.error, OverflowError) as exc:
            raise CorruptPackError(f"undecodable document pack: {exc}") from None
        if not isinstance(keys, list) or len(keys) != count or len(offsets) != count + 1:
            raise CorruptPackError("document pack header does not match its records")
        self._base = at + 8 * (count + 1)
        if self._base + offsets[-1] != size:
            raise CorruptPackError("document pack of a partial size")
        self.keys: list[tuple[str, str]] = keys
        self._offsets = offsets

    @classmethod
    def of_bytes(cls, data: bytes) -> PackRecords:
        view = memoryview(data)
        return cls(lambda at, length: bytes(view[at : at + length]), len(data))

    @classmethod
    def of_file(cls, handle) -> PackRecords:
        """Over an open binary file (kept open by the table)."""
        fd = handle.fileno()
        return cls(lambda at, length: os.pread(fd, length, at), os.fstat(fd).st_size, handle=handle)

    def close(self) -> None:
        """Close the file now (else it closes with the last table reading from it)."""
        if self._handle is not None:
            self._handle.close()

    def raw(self, at: int) -> bytes:
        start, end = self._offsets[at], self._offsets[at + 1]
        return self._read(self._base + start, end - start)

    def record(self, at: int) -> tuple:
        try:
            record = marshal.loads(self.raw(at))
        except (EOFError, ValueError, TypeError, OSError) as exc:
            raise CorruptPackError(f"undecodable document record: {exc}") from None
        if not isinstance(record, tuple) or len(record) != 12:
            raise CorruptPackError("a document record of the wrong shape")
        return record
