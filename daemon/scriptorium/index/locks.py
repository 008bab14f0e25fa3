"""One advisory ``flock`` helper for the state directory's lock files.

The generation writer lock and a state directory's in-use lock are the same mechanism: an
exclusive ``flock`` on a file, taken at once or waited for. Where the file cannot be made (a
read-only directory) nothing is locked: nothing can be written there either.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on the platforms this is tested on
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def exclusive_lock(path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold ``path``'s lock exclusively while inside; yields whether it is held.

    With ``wait=False`` it yields False at once when another process holds it.
    """
    if fcntl is None:
        yield True
        return
    try:
        handle = open(path, "a+b")  # noqa: SIM115 - closed below
    except OSError:
        yield True
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
