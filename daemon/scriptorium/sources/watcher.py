"""Watching source roots for changes: file-system events, or a listing on every tick.

Listing a tree costs time in proportion to its size (about 1 s for 90,000 files here), so a
daemon that lists on every tick spends a core on an idle tree and sees an edit late. With
events (inotify on Linux, FSEvents, ReadDirectoryChangesW, through ``watchfiles``) the OS names
the paths that changed and only those are looked at. Only the directories the listing walks
are watched, each on its own, so skipped trees cost nothing. Events are a hint, never the only
truth: the first batch after the watch is set up and every ``rescan_interval`` run a full
listing, and a change that only a listing can judge (a new directory, an ignore file) asks
for one. Where events cannot be had (no inotify, watch limit reached), the daemon lists on
every tick as before.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from stat import S_ISDIR

log = logging.getLogger(__name__)

# How long the OS must stay quiet before a batch of events is handed over (ms): an editor's
# save is several events within a few milliseconds; a checkout is thousands within a second.
QUIET_MS = 30
# The longest a batch may keep growing while events keep coming (ms).
MAX_BATCH_MS = 1_000
# How often the watch hands over an empty batch when nothing happens (ms): the loop's tick
# for periodic listings and for noticing roots that appeared or vanished.
TICK_MS = 1_000


class EventsUnavailable(RuntimeError):
    """File-system events cannot be had here; the caller lists the roots instead."""


class WatchedPathGone(RuntimeError):
    """A directory to watch vanished before its watch was in place; list, then watch again."""


@dataclass(frozen=True, slots=True)
class WatchedRoot:
    source: str
    root: str
    # The directory's identity (device, inode) when the watch was set up: a root replaced by
    # another directory of the same name (a checkout, a ``mv``) has lost its watch.
    identity: tuple[int, int] = (0, 0)


def root_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of the directory at ``path``; None when it is not a directory."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino) if S_ISDIR(stat.st_mode) else None


class RootMap:
    """Maps the absolute paths the OS reports to the sources (and relative paths) they touch.

    Sources may nest (a code source over a whole repository, a Markdown source over its docs):
    one path can belong to several.
    """

    def __init__(self, roots: Iterable[WatchedRoot]) -> None:
        self.roots = sorted(roots, key=lambda r: (r.root, r.source))

    def changes(self, paths: Iterable[str]) -> dict[str, set[str]]:
        """Source name to the relative (posix) paths of ``paths`` under its root."""
        out: dict[str, set[str]] = {}
        for path in paths:
            for root in self.roots:
                prefix = root.root + os.sep
                if path.startswith(prefix):
                    rel = path[len(prefix) :]
                    if os.sep != "/":
                        rel = rel.replace(os.sep, "/")
                    out.setdefault(root.source, set()).add(rel)
        return out


async def event_batches(directories: list[str]) -> AsyncIterator[set[str]]:
    """Sets of changed absolute paths directly inside ``directories``; an empty set every tick.

    Each directory is watched on its own, not recursively: the caller names the directories its
    listing walks, so trees it skips (``node_modules``, ``.venv``, ignored output) cost no watch
    and raise no events. The first batch arrives once the watch is in place. Raises
    :class:`WatchedPathGone` when a directory vanished before its watch was set up (list again
    and retry), :class:`EventsUnavailable` when no watch can be had; errors after the first
    batch propagate as they are.
    """
    try:
        from watchfiles import awatch
    except ImportError as exc:  # pragma: no cover - a pinned dependency
        raise EventsUnavailable(f"watchfiles is not importable: {exc}") from None
    batches = awatch(
        *directories,
        watch_filter=None,
        debounce=MAX_BATCH_MS,
        step=QUIET_MS,
        rust_timeout=TICK_MS,
        yield_on_timeout=True,
        force_polling=False,
        recursive=False,
        ignore_permission_denied=True,
    )
    started = False
    try:
        while True:
            try:
                changes = await anext(batches)
            except StopAsyncIteration:
                return
            except FileNotFoundError as exc:
                if started:
                    raise
                raise WatchedPathGone(str(exc)) from None
            except Exception as exc:
                if started:
                    raise
                raise EventsUnavailable(f"{type(exc).__name__}: {exc}") from None
            started = True
            yield {path for _change, path in changes}
    finally:
        await batches.aclose()
