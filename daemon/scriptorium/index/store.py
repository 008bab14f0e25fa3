"""Content-addressed storage of cut documents, shared by all generations.

Each blob holds one document's text, metadata and blocks, compressed. Its name is the hash of
the document content plus the extractor fingerprint, so an unchanged document is never written
twice and a changed extractor never reuses stale blocks. Integrity is checked on read: the text
must hash to the content hash recorded inside.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
import zlib
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from scriptorium.domain.model import Block, Corpus, DocMeta, RefKind, SourceDocument
from scriptorium.sources.base import content_hash

# Cold start decodes every blob: a dict lookup is several times cheaper than ``RefKind(value)``.
_KINDS = {str(kind): kind for kind in RefKind}
# Level 3 writes twice as fast as 6 for blobs about 8 % larger; reading costs the same.
COMPRESS_LEVEL = 3


class CorruptBlobError(RuntimeError):
    """A blob is missing, undecodable or does not match its recorded hash."""


def blob_name(doc: SourceDocument, extractor_fingerprint: str) -> str:
    key = f"{doc.content_hash}\x1f{doc.corpus}\x1f{doc.path}\x1f{extractor_fingerprint}"
    return hashlib.sha256(key.encode()).hexdigest()


def _dt(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _body_span(text: str, body: str, start: int) -> tuple[str | list[int], int]:
    """A block's body as ``[begin, end]`` into the document's text when it is a slice of it
    (every block of the FastAPI pages is: three in four exactly their line range, the rest a
    slice of it), else the body itself; and where to look for the next one. Stored as a
    span, the text is not written twice: the blob's JSON is about half as long, the blob
    about 12 % smaller, and encoding it about 10 % cheaper (zlib had already found most of
    the repetition), decoding its texts about 20 % cheaper."""
    at = text.find(body, start)
    if at < 0:  # before the previous block's end: a block nested in the one before
        at = text.find(body)
    if at < 0:
        return body, start
    return [at, at + len(body)], at + len(body)


def _body(text: str, field: object) -> str:
    """A stored body: the string itself (as every blob held before spans) or its span."""
    if isinstance(field, str):
        return field
    begin, end = field  # a malformed span raises TypeError or ValueError: a corrupt blob
    if not (isinstance(begin, int) and isinstance(end, int) and 0 <= begin <= end <= len(text)):
        raise ValueError("a block's span lies outside the text")
    return text[begin:end]


def _bodies(doc: SourceDocument) -> list[str | list[int]]:
    fields, start = [], 0
    for block in doc.blocks:
        field, start = _body_span(doc.text, block.body, start)
        fields.append(field)
    return fields


def encode_document(doc: SourceDocument) -> bytes:
    meta = doc.meta
    bodies = _bodies(doc)
    record = {
        "path": doc.path,
        "text": doc.text,
        "corpus": str(doc.corpus),
        "hash": doc.content_hash,
        "language": doc.language,
        "fm": doc.front_matter_lines,
        **({"pb": True} if doc.preview_from_body else {}),
        "meta": {
            "title": meta.title,
            "boost": meta.boost,
            "superseded_by": meta.superseded_by,
            "effective_from": _dt(meta.effective_from),
            "effective_to": _dt(meta.effective_to),
            "moved_from": list(meta.moved_from),
            "source_class": meta.source_class,
            "canonical_key": meta.canonical_key,
            "parse_confidence": meta.parse_confidence,
        },
        "blocks": [
            [
                str(b.kind),
                b.start_line,
                b.end_line,
                b.title,
                list(b.section_path),
                b.anchor,
                body,
                b.level,
                b.symbol,
                b.symbol_kind,
                *([list(b.aliases)] if b.aliases else []),
            ]
            for b, body in zip(doc.blocks, bodies, strict=True)
        ],
    }
    return zlib.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), COMPRESS_LEVEL)


def decode_document(data: bytes, source: str) -> SourceDocument:
    try:
        record = json.loads(zlib.decompress(data))  # bytes: json detects UTF-8 itself
        meta = record["meta"]
        text = record["text"]
        doc = SourceDocument(
            source=source,
            path=record["path"],
            text=text,
            corpus=Corpus(record["corpus"]),
            content_hash=record["hash"],
            language=record["language"],
            front_matter_lines=record["fm"],
            preview_from_body=bool(record.get("pb", False)),
            meta=DocMeta(
                title=meta["title"],
                boost=meta["boost"],
                superseded_by=meta["superseded_by"],
                effective_from=_parse_dt(meta["effective_from"]),
                effective_to=_parse_dt(meta["effective_to"]),
                moved_from=tuple(meta["moved_from"]),
                source_class=meta["source_class"],
                canonical_key=meta["canonical_key"],
                parse_confidence=meta["parse_confidence"],
            ),
            blocks=tuple(
                Block(
                    _KINDS[b[0]],
                    b[1],
                    b[2],
                    b[3],
                    tuple(b[4]),
                    b[5],
                    _body(text, b[6]),
                    b[7],
                    b[8],
                    b[9],
                    tuple(b[10]) if len(b) > 10 else (),
                )
                for b in record["blocks"]
            ),
        )
    except (zlib.error, ValueError, KeyError, TypeError, IndexError) as exc:
        raise CorruptBlobError(f"undecodable blob: {exc}") from None
    if content_hash(doc.text) != doc.content_hash:
        raise CorruptBlobError("blob text does not match its content hash")
    return doc


def decode_texts(data: bytes) -> tuple[str, tuple[str, ...]]:
    """Only a blob's text and block bodies (what the served index reads on demand), checked
    against the content hash recorded inside, without making the document's objects."""
    try:
        record = json.loads(zlib.decompress(data))
        text = record["text"]
        bodies = tuple(_body(text, b[6]) for b in record["blocks"])
        digest = record["hash"]
    except (zlib.error, ValueError, KeyError, TypeError, IndexError) as exc:
        raise CorruptBlobError(f"undecodable blob: {exc}") from None
    if not isinstance(text, str) or content_hash(text) != digest:
        raise CorruptBlobError("blob text does not match its content hash")
    return text, bodies


class BlobStore:
    """Blobs under ``root/ab/abcdef...``; writes are atomic (temp file, fsync, rename)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / name[:2] / name

    def exists(self, name: str) -> bool:
        return os.path.isfile(os.path.join(self.root, name[:2], name))

    def put(self, name: str, data: bytes) -> bool:
        """Write a blob atomically; True when it was written, False when it was there.

        Durability is the caller's: the generation writer flushes every blob to disk once,
        before its manifest makes them reachable. A failed write (a full disk) leaves no
        temporary file behind.
        """
        # Plain ``os`` calls, and the shard directory is created only when missing: a build
        # writes one blob per document.
        shard = os.path.join(self.root, name[:2])
        target = os.path.join(shard, name)
        if os.path.isfile(target):
            return False
        # Unique to the thread: two documents of one build can share a blob (the same page
        # at the same path in two sources), and two writer threads may write it at once.
        tmp = os.path.join(shard, f".{name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            handle = open(tmp, "wb")  # noqa: SIM115 - closed below, on every path
        except FileNotFoundError:
            os.makedirs(shard, exist_ok=True)
            handle = open(tmp, "wb")  # noqa: SIM115
        try:
            with handle:
                handle.write(data)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return True

    def remove(self, names: Iterable[str]) -> None:
        """Delete these blobs (those an abandoned generation wrote, which nothing references)."""
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(self.path(name))

    def get(self, name: str, source: str) -> SourceDocument:
        # Plain ``os`` paths: loading a generation reads one blob per document.
        try:
            with open(os.path.join(self.root, name[:2], name), "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise CorruptBlobError(f"missing blob {name[:12]}: {exc.strerror}") from None
        return decode_document(data, source)

    def texts(self, name: str) -> tuple[str, tuple[str, ...]]:
        """A blob's text and block bodies (see ``decode_texts``)."""
        try:
            with open(os.path.join(self.root, name[:2], name), "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise CorruptBlobError(f"missing blob {name[:12]}: {exc.strerror}") from None
        return decode_texts(data)

    def prune(self, keep: set[str]) -> int:
        """Delete blobs no retained generation references; returns how many were removed."""
        removed = 0
        try:
            shards = [entry for entry in os.scandir(self.root) if entry.is_dir()]
        except OSError:
            return 0
        for shard in shards:
            for blob in os.scandir(shard.path):
                if blob.name not in keep:
                    try:
                        os.unlink(blob.path)
                        removed += 1
                    except OSError:
                        pass
        return removed


# Blob-writing threads. Encoding a blob holds the GIL while compressing it and creating its
# file do not, so a second thread encodes while the first compresses or waits on the file
# system. One thread was the write phase's longest wait (2.7-3.0 s of a 10x Markdown build);
# two cut the write from 4.6-5.1 to 3.4-3.7 s, and three gave nothing more on two cores.
WRITER_THREADS = 2
# Blobs waiting at most (the caller waits for the oldest beyond that): a writer that falls
# behind holds documents and leaves its encoding to compete with the caller for the
# interpreter at the end of the write. Bounded, a 10x Markdown build left 10-20 % fewer
# core-seconds idle (four interleaved pairs, together with four chunks queued per helper).
WRITER_QUEUE = 32


class BlobWriter:
    """Writes blobs in background threads while the caller indexes.

    Creating a file costs a fraction of a millisecond on many file systems and compressing
    releases the GIL, so a build overlaps both with tokenizing. Leaving the ``with`` block
    waits for every write and raises the first failure.
    """

    def __init__(self, blobs: BlobStore) -> None:
        self._blobs = blobs
        self._pool = ThreadPoolExecutor(
            max_workers=WRITER_THREADS, thread_name_prefix="scriptorium-blobs"
        )
        self._pending: list[Future] = []
        # Blobs this writer created (not those already there): an abandoned generation's.
        self.created: list[str] = []

    def put(self, name: str, doc: SourceDocument) -> None:
        # At most a few blobs wait: a writer that fell behind would hold the documents and
        # compete with the caller for the interpreter at the end of the write instead.
        if len(self._pending) >= WRITER_QUEUE:
            self._pending[-WRITER_QUEUE].result()
        self._pending.append(self._pool.submit(self._write, name, doc))

    def _write(self, name: str, doc: SourceDocument) -> None:
        # Checked here rather than by the caller: a stat call is cheap in this thread.
        if not self._blobs.exists(name) and self._blobs.put(name, encode_document(doc)):
            self.created.append(name)

    def __enter__(self) -> BlobWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        # On failure the generation is abandoned: drop the queue, keep the original error.
        self._pool.shutdown(wait=True, cancel_futures=exc_type is not None)
        if exc_type is None:
            for future in self._pending:
                future.result()
