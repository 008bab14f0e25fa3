"""The manifest of an index generation: its sources, their file tables, the checksums.

Apart from the store that writes and verifies generations: this is the data and its canonical
encoding (the checksum covers it byte for byte), the store is the file-system work around it.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import threading
from array import array
from collections.abc import Callable
from dataclasses import dataclass

from scriptorium.index import schema as S

# 2: the file tables moved out of the JSON into ``FILES.table`` (columns per source, read
# when the reconcile first needs them). A generation of format 1 is not served: it is skipped
# like one of another schema, and the sources are built again (its file tables are still
# parsed for pruning, which only needs their blob names).
FORMAT_VERSION = 2
FILES_TABLE = "FILES.table"
TABLE_MAGIC = b"scriptorium-files-1\n"
_MARSHAL_VERSION = 4


@dataclass(slots=True)
class FileEntry:
    hash: str
    size: int
    mtime_ns: int
    blob: str
    blocks: int


_DECODING = threading.Lock()


class SourceEntry:
    """One source's part of a manifest: what it is, and its file table (path -> entry).

    A table read from a manifest is not decoded until ``files`` is first asked for: a cold
    start serves without it (the start-up reconcile decodes it after), and its counts come
    from the manifest (``counts``). Tables are never changed once a generation holds them.
    """

    __slots__ = ("_files", "_load", "_raw", "_totals", "count", "fingerprint", "kind", "root")

    def __init__(
        self,
        kind: str,
        root: str,
        fingerprint: str,
        files: dict[str, FileEntry] | None = None,
        *,
        raw: dict[str, dict] | None = None,
        load: Callable[[], dict[str, FileEntry]] | None = None,
        counts: tuple[int, int, int] | None = None,
    ) -> None:
        self.kind, self.root, self.fingerprint = kind, root, fingerprint
        lazy = raw is not None or load is not None
        self._files = files if files is not None or lazy else {}
        self._raw = raw if files is None else None
        self._load = load if files is None else None
        self.count: int | None = counts[0] if counts and files is None else None
        self._totals: tuple[int, int] | None = counts[1:] if counts and files is None else None

    @property
    def files(self) -> dict[str, FileEntry]:
        files = self._files
        if files is None:
            with _DECODING:  # one decoded table, the same object for every thread
                files = self._files
                if files is None:
                    if self._load is not None:
                        files = self._load()
                    else:
                        raw = self._raw or {}
                        files = {p: FileEntry(**f) for p, f in raw.items()}
                    self._files, self._raw, self._load = files, None, None
        return files

    @files.setter
    def files(self, files: dict[str, FileEntry]) -> None:
        self._files, self._raw, self._load, self._totals, self.count = files, None, None, None, None

    def __len__(self) -> int:
        """How many files the table holds (without decoding it)."""
        if self.count is not None:
            return self.count
        raw = self._raw
        return len(raw) if raw is not None else len(self.files)

    def totals(self) -> tuple[int, int]:
        """(blocks, bytes) over every file, without decoding a table read from a manifest."""
        totals = self._totals
        if totals is None:
            raw = self._raw
            if raw is not None:
                values = raw.values()
                totals = (sum(f["blocks"] for f in values), sum(f["size"] for f in values))
            else:
                files = self.files.values()
                totals = (sum(f.blocks for f in files), sum(f.size for f in files))
            self._totals = totals
        return totals


def encode_table(files: dict[str, FileEntry]) -> bytes:
    """One source's file table as columns (paths, hashes, blobs, sizes, mtimes, blocks)."""
    entries = files.values()
    return marshal.dumps(
        (
            tuple(files),
            tuple(f.hash for f in entries),
            tuple(f.blob for f in entries),
            array("q", [f.size for f in entries]).tobytes(),
            array("q", [f.mtime_ns for f in entries]).tobytes(),
            array("q", [f.blocks for f in entries]).tobytes(),
        ),
        _MARSHAL_VERSION,
    )


def decode_table(data: bytes) -> dict[str, FileEntry]:
    """The file table ``encode_table`` wrote (ValueError when it does not decode)."""
    try:
        paths, hashes, blobs, *numbers = marshal.loads(data)
        sizes, mtimes, blocks = (array("q", column) for column in numbers)
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError(f"undecodable file table: {exc}") from None
    if not len(paths) == len(hashes) == len(blobs) == len(sizes) == len(mtimes) == len(blocks):
        raise ValueError("a file table of uneven columns")
    return dict(zip(paths, map(FileEntry, hashes, sizes, mtimes, blobs, blocks), strict=True))


class TableFragments:
    """The encoded file table of each source, kept while the table stays the same.

    A table is recognised by identity: tables are never changed once a generation holds them,
    and an update passes on the previous generation's table object for a source it did not
    touch, so an edit encodes one source's table again, not every source's.
    """

    def __init__(self) -> None:
        self._cache: dict[str, tuple[dict[str, FileEntry], bytes, str]] = {}

    def encode(self, name: str, source: SourceEntry) -> tuple[bytes, str]:
        """The source's encoded table and its sha256."""
        files = source.files
        cached = self._cache.get(name)
        if cached is not None and cached[0] is files:
            return cached[1], cached[2]
        data = encode_table(files)
        digest = hashlib.sha256(data).hexdigest()
        self._cache[name] = (files, data, digest)
        return data, digest


# The order of a manifest's fields in its file.
_FIELD_ORDER = (
    "generation",
    "created_at",
    "parent",
    "extractors",
    "sources",
    "index_files",
    "format_version",
    "schema_version",
)


@dataclass(slots=True)
class Manifest:
    generation: int
    created_at: float
    parent: int
    extractors: str
    sources: dict[str, SourceEntry]
    index_files: dict[str, list]  # relative path -> [size, sha256]
    format_version: int = FORMAT_VERSION
    schema_version: int = S.SCHEMA_VERSION
    checksum: str = ""  # the sha256 of the manifest file's bytes

    @property
    def document_count(self) -> int:
        return sum(len(s) for s in self.sources.values())

    @property
    def block_count(self) -> int:
        return sum(s.totals()[0] for s in self.sources.values())

    def serialize(self, fragments: TableFragments) -> tuple[str, bytes]:
        """The manifest file's text and its file tables' file (``FILES.table``).

        Each source's entry names its table's range of that file and the range's sha256, and
        carries its counts, so serving needs no table; the manifest's own integrity is the
        sha256 of its bytes (``MANIFEST.sha256``).
        """
        chunks = [TABLE_MAGIC]
        at = len(TABLE_MAGIC)
        sources = {}
        for name, source in self.sources.items():
            data, digest = fragments.encode(name, source)
            blocks, size = source.totals()
            sources[name] = {
                "kind": source.kind,
                "root": source.root,
                "fingerprint": source.fingerprint,
                "documents": len(source),
                "blocks": blocks,
                "bytes": size,
                "table": [at, len(data), digest],
            }
            chunks.append(data)
            at += len(data)
        fields = {
            "generation": self.generation,
            "created_at": self.created_at,
            "parent": self.parent,
            "extractors": self.extractors,
            "sources": sources,
            "index_files": {rel: list(value) for rel, value in self.index_files.items()},
            "format_version": self.format_version,
            "schema_version": self.schema_version,
        }
        text = json.dumps({key: fields[key] for key in _FIELD_ORDER}, separators=(",", ":"))
        return text, b"".join(chunks)

    @classmethod
    def from_json(
        cls, data: dict, tables: Callable[[str, list], dict[str, FileEntry]] | None = None
    ) -> Manifest:
        """The manifest ``data`` holds; ``tables(name, [offset, length, sha256])`` reads a
        source's file table when first asked for (format 2; format 1 carries them inline)."""
        sources = {}
        for name, s in data["sources"].items():
            if "files" in s:  # format 1
                entry = SourceEntry(s["kind"], s["root"], s["fingerprint"], raw=s["files"])
            else:
                where = list(s["table"])
                entry = SourceEntry(
                    s["kind"],
                    s["root"],
                    s["fingerprint"],
                    load=(lambda n=name, w=where: tables(n, w))
                    if tables is not None
                    else (lambda: {}),
                    counts=(int(s["documents"]), int(s["blocks"]), int(s["bytes"])),
                )
            sources[name] = entry
        return cls(
            generation=data["generation"],
            created_at=data["created_at"],
            parent=data["parent"],
            extractors=data["extractors"],
            sources=sources,
            index_files=data["index_files"],
            format_version=data["format_version"],
            schema_version=data["schema_version"],
            checksum=data.get("checksum", ""),
        )
