"""What checking a generation costs at open, and what waits until it serves.

A cold start at 90,000 files spent seconds hashing every index file before it served. Opening
now checks what is cheap and what is read whole at once: every index file's size, and the
sha256 of the small ones, tantivy's ``meta.json`` and the block table. The large files
(tantivy's segments, the document pack) and the file tables are hashed by :func:`rest` once
the generation serves; a mismatch then refuses it as a damaged text does (``Indexer``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from scriptorium.index.blocktable import BLOCK_TABLE_FILE
from scriptorium.index.failures import CorruptGenerationError
from scriptorium.index.files import sha256_file
from scriptorium.index.manifest import FILES_TABLE, FileEntry, Manifest, decode_table

# Index files up to this size are hashed when a generation is opened.
EAGER_VERIFY_BYTES = 1 << 20
_MANIFEST = "MANIFEST.json"


def at_open(rel: str, size: int) -> bool:
    """Whether opening a generation hashes this index file (else :func:`rest` does)."""
    return size <= EAGER_VERIFY_BYTES or rel in ("meta.json", BLOCK_TABLE_FILE)


def opened(gen_dir: Path, manifest: Manifest) -> None:
    """Every index file's size, and the checksums of those :func:`at_open` names."""
    generation = manifest.generation
    for rel, (size, digest) in manifest.index_files.items():
        path = gen_dir / "index" / rel
        try:
            if path.stat().st_size != size or (at_open(rel, size) and sha256_file(path) != digest):
                raise CorruptGenerationError(
                    f"generation {generation}: index file {rel} fails its checksum"
                )
        except FileNotFoundError:
            raise CorruptGenerationError(
                f"generation {generation}: index file {rel} is missing"
            ) from None


def rest(
    gen_dir: Path, manifest: Manifest, stop: Callable[[], bool] | None = None
) -> tuple[str, str] | None:
    """Check what opening did not: the large index files and the file tables. Returns (what
    failed, why) at the first mismatch (an index file's relative path, or ``FILES.table``),
    None when all match or once ``stop()`` turns true."""
    generation = manifest.generation
    for rel, (size, digest) in sorted(manifest.index_files.items()):
        if stop is not None and stop():
            return None
        if at_open(rel, size):
            continue
        try:
            ok = sha256_file(gen_dir / "index" / rel) == digest
        except OSError:
            ok = False
        if not ok:
            return rel, f"generation {generation}: index file {rel} fails its checksum"
    try:
        data = (gen_dir / FILES_TABLE).read_bytes()
        ranges = {
            name: source["table"]
            for name, source in json.loads((gen_dir / _MANIFEST).read_bytes())["sources"].items()
        }
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return FILES_TABLE, f"generation {generation}: file tables unreadable ({exc})"
    for name, (start, length, digest) in ranges.items():
        if hashlib.sha256(data[start : start + length]).hexdigest() != digest:
            return (
                FILES_TABLE,
                f"generation {generation}: the file table of {name!r} fails its checksum",
            )
    return None


def read_table(gen_dir: Path, generation: int, name: str, where: list) -> dict[str, FileEntry]:
    """One source's file table, checked against the sha256 the manifest records for it."""
    start, length, digest = where
    try:
        with (gen_dir / FILES_TABLE).open("rb") as handle:
            handle.seek(start)
            data = handle.read(length)
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError("checksum mismatch")
        return decode_table(data)
    except (OSError, ValueError) as exc:
        raise CorruptGenerationError(
            f"generation {generation}: the file table of {name!r} is damaged ({exc})"
        ) from None
