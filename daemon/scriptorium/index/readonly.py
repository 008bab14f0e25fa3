"""Opening a generation's tantivy index from a directory this process cannot write.

tantivy creates a lock file (``.tantivy-meta.lock``) beside ``meta.json`` whenever a reader
loads the index's segments, even only to read them: in a read-only directory (a read-only
mount of a prebuilt state directory) that fails, and the generation would be refused. So a
read-only store opens each generation through a private directory of symbolic links to the
generation's files, made under the temporary directory, where tantivy can make its lock; the
generation's own files are only read.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path

import tantivy

# tantivy's own lock files: made afresh in the private directory, never linked.
_LOCK_FILES = frozenset({".tantivy-writer.lock", ".tantivy-meta.lock"})
_root: Path | None = None
_root_lock = threading.Lock()


def writable(path: Path) -> bool:
    """Whether this process may create files in ``path`` (False on a read-only mount, for
    root too: the kernel answers EROFS before it looks at permissions)."""
    return os.access(path, os.W_OK)


def _private_root() -> Path:
    """This process's directory of links, removed when it exits."""
    global _root
    with _root_lock:
        if _root is None:
            _root = Path(tempfile.mkdtemp(prefix="scriptorium-ro-"))
            atexit.register(shutil.rmtree, _root, True)
        return _root


def open_read_only(index_dir: Path) -> tantivy.Index:
    """Open the tantivy index in ``index_dir`` without creating anything there."""
    links = _private_root() / f"{index_dir.parent.name}-{uuid.uuid4().hex[:8]}"
    links.mkdir()
    for entry in os.scandir(index_dir):
        if entry.is_file() and entry.name not in _LOCK_FILES:
            os.symlink(entry.path, links / entry.name)
    return tantivy.Index.open(str(links))
