"""The file-level steps of writing and verifying a generation: durable writes, checksums,
directory fsyncs, and the checksum a hard-linked index file inherits from the generation it
was linked from."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scriptorium.index.manifest import Manifest


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes (read in chunks by the standard library)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def write_durable(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` and fsync it: on disk before anything that names it is
    written (the caller fsyncs the directory once its files are all there)."""
    with path.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    """Make a rename or a new file in ``path`` durable (best effort where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def linked_digest(
    stat: os.stat_result, rel: str, parent: Manifest | None, parent_dir: Path | None
) -> str | None:
    """The parent's recorded checksum of ``rel`` when this file is a hard link of the parent's.

    Tantivy never rewrites a segment file in place, so a linked file holds what the parent's
    manifest recorded; most of an incremental update's files are such links. Should the shared
    file have been damaged since, the recorded checksum still exposes it at the next load.
    """
    if parent is None or parent_dir is None:
        return None
    recorded = parent.index_files.get(rel)
    if not recorded or recorded[0] != stat.st_size:
        return None
    try:
        linked = os.stat(parent_dir / rel)
    except OSError:
        return None
    if (linked.st_ino, linked.st_dev) != (stat.st_ino, stat.st_dev):
        return None
    return recorded[1]
