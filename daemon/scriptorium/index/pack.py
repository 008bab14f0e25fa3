"""The document pack: every served document's compact metadata in one file per generation.

A generation's ``index/documents.pack`` holds one record per document (paths, hashes, blob
names, front matter, block ids and block metadata, never text) in manifest order, encoded
with ``marshal``: cold start reads and checks one file (its size and sha256 are in the
manifest with the tantivy files) and decodes it in one C call, instead of reading and
decoding one blob per document. An update writes the next generation's pack from the records
the served documents keep, so it costs one ``marshal.dumps``, not an encoding per document.

A record is ``(source, path, corpus, hash, blob, language, front_matter_lines,
preview_from_body, meta, includes, blocks, bids)``: ``meta`` is None for default front matter,
``blocks`` the marshalled tuple of block records (``texts.block_record``, kind as a string),
decoded when the document's blocks are first used, ``bids`` the blocks' 63-bit ids as int64
bytes. Kept encoded, the metadata of a block costs a few dozen bytes, not a few hundred.
"""

from __future__ import annotations

import marshal
from array import array
from datetime import datetime

from scriptorium.domain.model import Corpus, DocMeta, SourceDocument
from scriptorium.index.texts import StoredDocument, TextCache, block_record

PACK_FILE = "documents.pack"
MAGIC = b"scriptorium-pack-2\n"
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
) -> StoredDocument:
    """The served form of a document just cut: its text goes to the cache, not the object."""
    texts.prime(blob, doc)
    return from_record(document_record(doc, blob, includes, bids), texts)


def encode_pack(records: list[tuple]) -> bytes:
    return MAGIC + marshal.dumps(records, _MARSHAL_VERSION)


def decode_pack(data: bytes) -> list[tuple]:
    if not data.startswith(MAGIC):
        raise CorruptPackError("not a document pack")
    try:
        records = marshal.loads(memoryview(data)[len(MAGIC) :])
    except (EOFError, ValueError, TypeError) as exc:
        raise CorruptPackError(f"undecodable document pack: {exc}") from None
    if not isinstance(records, list):
        raise CorruptPackError("document pack holds no record list")
    return records
