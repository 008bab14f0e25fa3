"""Leases: which generations the processes reading a state directory serve right now.

A writer prunes generations past the newest few and the blobs only they name. A reader on
the same directory (a replica with ``watch = false``, started before the writer's last
updates) still serves an older generation, reading its texts from those blobs on demand: pruned
under it, it would answer UNAVAILABLE and rebuild. So every serving process keeps a lease file,
``leases/<host>-<pid>-<id>.lease``, naming the generation it serves, and holds a shared
``flock`` on it while it lives; the writer's pruning (under the writer lock) keeps every
generation a live lease names, with its blobs, and removes leases whose lock it can take (their
process is gone). A lease is replaced whole (written under a temporary name, locked, renamed
over the old one), so a pruner reads either the old or the new one, never a part.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX: no leases, pruning as before
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

LEASES = "leases"
_SUFFIX = ".lease"


class Lease:
    """This process's lease in one state directory (nothing where it cannot be written)."""

    def __init__(self, state_dir: Path) -> None:
        self.dir = state_dir / LEASES
        self._name = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}{_SUFFIX}"
        self._handle: IO[bytes] | None = None
        self._lock = threading.Lock()

    def hold(self, generations: Iterable[int]) -> None:
        """Name ``generations`` as served by this process from now on."""
        if fcntl is None:
            return
        text = " ".join(str(g) for g in sorted(set(generations))) + "\n"
        with self._lock:
            temp = self.dir / f".{self._name}.tmp"
            try:
                self.dir.mkdir(exist_ok=True)
                handle = open(temp, "w+b")  # noqa: SIM115 - held until replaced or released
            except OSError as exc:  # a read-only directory: no writer prunes there either
                log.debug("no lease in %s: %s", self.dir, exc)
                return
            try:
                fcntl.flock(handle, fcntl.LOCK_SH)
                handle.write(text.encode("ascii"))
                handle.flush()
                os.replace(temp, self.dir / self._name)
            except OSError as exc:
                handle.close()
                log.warning("could not write this process's lease in %s: %s", self.dir, exc)
                return
            previous, self._handle = self._handle, handle
            if previous is not None:
                previous.close()

    def release(self) -> None:
        """Drop the lease (a clean shutdown; a killed process's lease is dropped by a pruner)."""
        with self._lock:
            if self._handle is None:
                return
            with contextlib.suppress(OSError):
                (self.dir / self._name).unlink()
            self._handle.close()
            self._handle = None


def leased(state_dir: Path) -> set[int]:
    """Every generation a live lease names; dead leases are removed. Call under the writer
    lock (a lease is taken before its generation is opened, so nothing opens one unnamed)."""
    found: set[int] = set()
    if fcntl is None:
        return found
    try:
        paths = [p for p in (state_dir / LEASES).iterdir() if p.name.endswith(_SUFFIX)]
    except OSError:
        return found
    for path in paths:
        found |= _read_lease(path)
    return found


def _read_lease(path: Path, tries: int = 3) -> set[int]:
    for _ in range(tries):
        try:
            handle = open(path, "rb")  # noqa: SIM115 - closed below
        except OSError:
            return set()
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # its process holds it: alive
                return _generations(handle.read())
            try:
                replaced = os.stat(path).st_ino != os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                return set()
            if not replaced:  # nobody holds it: its process has ended
                with contextlib.suppress(OSError):
                    path.unlink()
                return set()
        # Replaced while we looked: read the new one.
    return set()


def _generations(data: bytes) -> set[int]:
    return {int(word) for word in data.split() if word.isdigit()}
