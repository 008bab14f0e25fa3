"""Content-addressed storage of cut documents, shared by all generations.

Each blob holds one document's text, metadata and blocks, compressed, in a bundle of many
(``index/bundles.py``) or in a file of its own. Its name is the hash of
the document content plus the extractor fingerprint, so an unchanged document is never written
twice and a changed extractor never reuses stale blocks. Integrity is checked on read: the text
must hash to the content hash recorded inside.

How a blob lays out its bytes (the text and the blocks' bodies apart from a JSON record of the
rest, so reading the texts parses no JSON) is ``index/blob_layout.py``'s; what the record holds
of a document, and the document made again from it, are here.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from scriptorium.domain.model import Block, Corpus, DocMeta, RefKind, SourceDocument
from scriptorium.index.blob_layout import (
    DAMAGE,
    CorruptBlobError,
    decode_texts,
    encode_blob,
    read_blob,
)
from scriptorium.index.bundles import (
    BUNDLE_SUFFIX,
    BUNDLES,
    TABLE_SUFFIX,
    BundleTable,
    BundleWriter,
    copy_live,
    decode_table,
    remove_bundle,
    write_table,
)

log = logging.getLogger(__name__)

# Cold start decodes every blob: a dict lookup is several times cheaper than ``RefKind(value)``.
_KINDS = {str(kind): kind for kind in RefKind}


def blob_name(doc: SourceDocument, extractor_fingerprint: str) -> str:
    key = f"{doc.content_hash}\x1f{doc.corpus}\x1f{doc.path}\x1f{extractor_fingerprint}"
    return hashlib.sha256(key.encode()).hexdigest()


def _dt(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _parse_dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _record(doc: SourceDocument) -> dict[str, object]:
    """What a blob records but the text, the content hash and the blocks' bodies."""
    meta = doc.meta
    return {
        "path": doc.path,
        "corpus": str(doc.corpus),
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
                b.level,
                b.symbol,
                b.symbol_kind,
                *([list(b.aliases)] if b.aliases else []),
            ]
            for b in doc.blocks
        ],
    }


def encode_document(doc: SourceDocument) -> bytes:
    """The blob of ``doc`` (see ``index/blob_layout.py``)."""
    return encode_blob(_record(doc), doc.text, doc.content_hash, [b.body for b in doc.blocks])


def decode_document(data: bytes, source: str) -> SourceDocument:
    record, text, bodies = read_blob(data)
    try:
        meta = record["meta"]
        return SourceDocument(
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
                    body,
                    b[6],
                    b[7],
                    b[8],
                    tuple(b[9]) if len(b) > 9 else (),
                )
                for b, body in zip(record["blocks"], bodies, strict=True)
            ),
        )
    except DAMAGE as exc:
        raise CorruptBlobError(f"undecodable blob: {exc}") from None


class BlobStore:
    """Blobs in bundles (``bundles/``, see ``index/bundles.py``) or loose under
    ``root/ab/abcdef...``: a write of many documents fills a bundle, a small one (an edit)
    writes loose files. Every write is atomic: a loose blob through a temp file and a rename,
    a bundle's blobs by the table written once they are all on disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bundles = root / BUNDLES
        # The bundles' tables, read when first needed and again when their files change.
        self._tables: tuple[BundleTable, ...] | None = None
        self._seen: dict[str, tuple[int, int, BundleTable]] = {}
        self._lock = threading.Lock()
        self._damaged: set[tuple[str, int]] = set()

    def path(self, name: str) -> Path:
        """Where the loose blob ``name`` is (or would be)."""
        return self.root / name[:2] / name

    # -- the bundles' tables --------------------------------------------------------------

    def _bundle_tables(self) -> tuple[BundleTable, ...]:
        tables = self._tables
        return self.refresh() if tables is None else tables

    def refresh(self) -> tuple[BundleTable, ...]:
        """Read the bundles' tables again where their files changed (another process wrote,
        removed or compacted a bundle); unchanged tables are kept as read."""
        with self._lock:
            seen: dict[str, tuple[int, int, BundleTable]] = {}
            try:
                entries = sorted(os.scandir(self.bundles), key=lambda entry: entry.name)
            except OSError:
                entries = []
            for entry in entries:
                if not entry.name.endswith(TABLE_SUFFIX):
                    continue
                ident = entry.name[: -len(TABLE_SUFFIX)]
                try:
                    stat = entry.stat()
                    known = self._seen.get(ident)
                    if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
                        seen[ident] = known
                        continue
                    bundle = self.bundles / f"{ident}{BUNDLE_SUFFIX}"
                    with open(entry.path, "rb") as handle:
                        data = handle.read()
                    table = decode_table(ident, bundle, data, os.stat(bundle).st_size)
                except OSError:
                    continue  # removed meanwhile
                if table is None:
                    if (ident, stat.st_mtime_ns) not in self._damaged:  # said once
                        self._damaged.add((ident, stat.st_mtime_ns))
                        log.warning("blob bundle table %s is damaged; its blobs are missing", ident)
                    continue
                seen[ident] = (stat.st_mtime_ns, stat.st_size, table)
            self._seen = seen
            self._tables = tuple(table for _, _, table in seen.values())
            return self._tables

    def _locate(self, name: str) -> tuple[BundleTable, int] | None:
        key = _key(name)
        if key is None:
            return None
        for table in self._bundle_tables():
            at = table.find(key)
            if at is not None:
                return table, at
        return None

    def _read(self, name: str) -> bytes:
        """A blob's bytes: from its bundle, else its loose file, else (another process may
        have bundled or compacted it) from the tables read again."""
        for again in (False, True):
            found = self._locate(name)
            if found is not None:
                table, at = found
                # Opened for each read, like a loose blob: a bundle pruning removes must not
                # stay open (its space would stay taken), and a read may race the removal.
                try:
                    fd = os.open(table.bundle, os.O_RDONLY)
                    try:
                        data = os.pread(fd, table.lengths[at], table.offsets[at])
                    finally:
                        os.close(fd)
                    if len(data) == table.lengths[at]:
                        return data
                except OSError:
                    pass
            try:
                with open(os.path.join(self.root, name[:2], name), "rb") as handle:
                    return handle.read()
            except OSError as exc:
                if again:
                    raise CorruptBlobError(f"missing blob {name[:12]}: {exc.strerror}") from None
            self.refresh()
        raise AssertionError("unreachable")

    def where(self, name: str) -> tuple[Path, int, int] | None:
        """The file holding blob ``name``, and its offset and length there; None if absent."""
        found = self._locate(name)
        if found is not None:
            table, at = found
            return table.bundle, table.offsets[at], table.lengths[at]
        path = self.path(name)
        try:
            return path, 0, path.stat().st_size
        except OSError:
            return None

    # -- reading and writing --------------------------------------------------------------

    def exists(self, name: str) -> bool:
        return self._locate(name) is not None or os.path.isfile(
            os.path.join(self.root, name[:2], name)
        )

    def put(self, name: str, data: bytes) -> bool:
        """Write a loose blob atomically; True when it was written, False when it was there.

        Durability is the caller's: the generation writer flushes every blob to disk once,
        before its manifest makes them reachable. A failed write (a full disk) leaves no
        temporary file behind.
        """
        # Plain ``os`` calls, and the shard directory is created only when missing.
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

    def new_bundle(self) -> BundleWriter:
        return BundleWriter(self.bundles)

    def get(self, name: str, source: str) -> SourceDocument:
        return decode_document(self._read(name), source)

    def texts(self, name: str) -> tuple[str, tuple[str, ...]]:
        """A blob's text and block bodies (see ``decode_texts``)."""
        return decode_texts(self._read(name))

    # -- removing -------------------------------------------------------------------------

    def remove(self, names: Iterable[str]) -> None:
        """Delete these blobs (those an abandoned generation wrote, or a damaged one): a
        loose file goes, a bundled blob leaves its bundle's table (the whole bundle when
        none of its blobs is left)."""
        drop: set[bytes] = set()
        for name in names:
            with contextlib.suppress(OSError):
                os.unlink(self.path(name))
            key = _key(name)
            if key is not None:
                drop.add(key)
        if drop:
            for table in self.refresh():
                self._rewrite(table, {key for key in table.blob_keys() if key not in drop})
            self.refresh()

    def _rewrite(self, table: BundleTable, keep: set[bytes]) -> None:
        """Keep only ``keep`` of a bundle's blobs (the whole bundle goes when none is kept)."""
        if len(keep) == len(table):
            return
        if not keep:
            remove_bundle(self.bundles, table.ident)
        else:
            entries = [
                (key, table.offsets[i], table.lengths[i])
                for i, key in enumerate(table.blob_keys())
                if key in keep
            ]
            write_table(self.bundles / f"{table.ident}{TABLE_SUFFIX}", entries)

    def prune(self, keep: set[str]) -> int:
        """Delete blobs no retained generation references; returns how many were removed.

        A bundle none of whose blobs is referenced goes; one with less than half of its
        bytes referenced is copied to a new bundle of those, then goes. Bundles without a
        table (a write cut short) go too: pruning runs under the writer lock, so none is
        being written.
        """
        removed = 0
        try:
            shards = [e for e in os.scandir(self.root) if e.is_dir() and len(e.name) == 2]
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
        keys = {key for key in map(_key, keep) if key is not None}
        for table in self.refresh():
            live = {key for key in table.blob_keys() if key in keys}
            removed += len(table) - len(live)
            if live and table.live_bytes(live) * 2 < _size(table.bundle):
                copy_live(self.bundles, table, live)
                remove_bundle(self.bundles, table.ident)
            else:
                self._rewrite(table, live)
        tables = {f"{t.ident}{BUNDLE_SUFFIX}" for t in self.refresh()}
        self._unlink_in_bundles(lambda name: name.endswith(BUNDLE_SUFFIX) and name not in tables)
        # Then the tables left without their bundle (a damaged table's bundle went above).
        self._unlink_in_bundles(
            lambda name: (
                name.endswith(TABLE_SUFFIX)
                and not os.path.exists(self.bundles / (name[: -len(TABLE_SUFFIX)] + BUNDLE_SUFFIX))
            )
        )
        return removed

    def _unlink_in_bundles(self, doomed: Callable[[str], bool]) -> None:
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.bundles):
                if doomed(entry.name):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _key(name: str) -> bytes | None:
    """A blob name's 32 bytes, or None for a name no bundle can hold."""
    if len(name) != 64:
        return None
    try:
        return bytes.fromhex(name)
    except ValueError:
        return None
