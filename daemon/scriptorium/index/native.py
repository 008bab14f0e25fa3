"""Giving the native heap back to the operating system after an index write.

Each generation write opens a tantivy writer whose threads allocate tens of MB and free them
when it closes. glibc keeps freed memory in its per-thread arenas rather than returning it, so
a watching daemon's resident size climbed from ~60 MB to ~200 MB over its first updates of the
FastAPI corpus and stayed there. ``malloc_trim`` returns those free pages; elsewhere (musl,
macOS) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


def _find_malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_malloc_trim = _find_malloc_trim()


def release_free_memory() -> bool:
    """Return the native heap's free pages to the OS; True when the C library could."""
    if _malloc_trim is None:
        return False
    return bool(_malloc_trim(0))
