"""Watching the source roots: every change the OS reports (or a listing finds) is reconciled.

File-system events when they are available, a listing of every root on every tick otherwise
(and for ``watch_mode = "poll"``); either way the indexer lands the change as a new generation.
It lives beside the composition root because it drives the indexer: ``sources/`` only says
which paths changed (``sources/watcher``) and never reaches up into ``index/``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from scriptorium.cancel import BuildCancelled
from scriptorium.index.failures import GenerationWriteError
from scriptorium.index.progress import SourceState
from scriptorium.sources.base import LocalTreeSource, Source
from scriptorium.sources.watcher import (
    EventsUnavailable,
    RootMap,
    WatchedPathGone,
    WatchedRoot,
    event_batches,
    root_identity,
)

# The engine's logger: the watch's log lines keep the name they always had.
log = logging.getLogger("scriptorium.engine.local")

# A batch of at least this many changed paths is followed by a full listing instead.
LIST_AFTER_EVENTS = 2_000


if TYPE_CHECKING:
    from scriptorium.engine.upkeep import Upkeep
    from scriptorium.settings.config import Settings


class Reconciler(Protocol):
    """What the watch drives (the ``Indexer``): land a change, and each source's state."""

    states: Mapping[str, SourceState]

    def reconcile(self, changed: dict[str, set[str]] | None) -> object: ...


class Watch:
    """Keeps the index in line with the local roots until ``stopping`` is set."""

    def __init__(
        self,
        sources: list[Source],
        indexer: Reconciler,
        settings: Settings,
        stopping: asyncio.Event,
        upkeep: Upkeep,
    ) -> None:
        self.sources = sources
        self.indexer = indexer
        self.upkeep = upkeep
        self.settings = settings
        self.stopping = stopping
        self._walked_cache: tuple[tuple[frozenset[str], ...], frozenset[str]] | None = None

    async def run(self) -> None:
        if self.settings.watch_mode == "events":
            try:
                await self._watch_events()
                return
            except EventsUnavailable as exc:
                log.warning(
                    "file-system events unavailable (%s); listing the roots every %.1fs instead",
                    exc,
                    self._interval(),
                )
        await self._poll_loop()

    def _interval(self) -> float:
        return float(self.settings.watch_interval or 0.5)

    async def _poll_loop(self) -> None:
        """List every root on every tick (the fallback, and ``watch_mode = "poll"``)."""
        interval = self._interval()
        while not self.stopping.is_set():
            await asyncio.sleep(interval)
            await self._refresh(None)

    async def _refresh(self, changed: dict[str, set[str]] | None) -> None:
        try:
            await self.upkeep.run(self.indexer.reconcile, changed)
        except BuildCancelled:
            pass  # a shutdown; reconcile has said so
        except GenerationWriteError as exc:
            # Reported per source too (ListSources); the previous generation keeps serving.
            log.error("index update failed, the previous generation keeps serving: %s", exc)
        except Exception:  # the watcher must never die; the error is reported per source
            log.exception("index refresh failed")

    def _watched_roots(self) -> list[WatchedRoot]:
        """The roots events can cover: local trees that exist and are not served as snapshots."""
        roots = []
        for source in self.sources:
            if isinstance(source, LocalTreeSource) and not source.config.options.get("snapshot"):
                identity = root_identity(str(source.root))
                if identity is not None:
                    roots.append(WatchedRoot(source.name, str(source.root), identity))
        return roots

    async def _watch_events(self) -> None:
        """Reconcile only what the OS says changed; list everything when that cannot tell.

        The watch covers the directories the last listing walked. It is set up again whenever
        that set changes (a directory came or went) or a root came, went or was replaced, each
        time followed by a full listing, which also covers anything that changed while no
        watch was in place.
        """
        rescan = float(self.settings.rescan_interval)
        first_watch = True
        while not self.stopping.is_set():
            roots = self._watched_roots()
            if not roots:
                await asyncio.sleep(self._interval())
                await self._refresh(None)
                continue
            walked = self._walked_dirs(roots)
            mapping = RootMap(roots)
            batches = event_batches(sorted(walked))
            listed_at = 0.0
            try:
                async for paths in batches:
                    now = time.monotonic()
                    if not listed_at:
                        # The first batch: the watch is in place; a listing covers the time
                        # before it. Said once it is done, so a test can wait for it.
                        await self._refresh(None)
                        listed_at = now
                        log.debug("watch in place: %d directories", len(walked))
                    elif rescan and now - listed_at >= rescan:
                        await self._refresh(None)
                        listed_at = now
                    elif len(paths) >= LIST_AFTER_EVENTS:
                        # A checkout-sized burst: the kernel's event queue may have overflowed
                        # and dropped some, so list everything rather than trust the batch.
                        await self._refresh(None)
                        listed_at = now
                    elif paths:
                        await self._refresh(mapping.changes(paths))
                    self._mark_watched(roots)
                    if self._watched_roots() != roots:  # a root came, went or was replaced
                        break
                    now_walked = self._walked_dirs(roots)
                    if now_walked is not walked and now_walked != walked:
                        break  # directories came or went
            except WatchedPathGone:
                # Listed, then removed before the watch was set up: list again, then retry.
                await asyncio.sleep(self._interval())
                await self._refresh(None)
                continue
            except EventsUnavailable:
                if first_watch:
                    raise
                log.warning("could not watch the roots again; retrying", exc_info=True)
                await asyncio.sleep(self._interval())
            except Exception:
                log.warning("file-system watch failed; watching again", exc_info=True)
                await asyncio.sleep(self._interval())
            finally:
                await batches.aclose()
            first_watch = False

    def _walked_dirs(self, roots: list[WatchedRoot]) -> frozenset[str]:
        """The directories to watch: those the sources' last listings walked (each root at
        least, for a source not listed yet). Asked every tick, so the union is kept until a
        listing replaces one of the sets."""
        names = {root.source for root in roots}
        parts = tuple(
            source.listed_dirs or frozenset({str(source.root)})
            for source in self.sources
            if source.name in names and isinstance(source, LocalTreeSource)
        )
        cached = self._walked_cache
        if (
            cached is not None
            and len(cached[0]) == len(parts)
            and all(a is b for a, b in zip(cached[0], parts, strict=True))
        ):
            return cached[1]
        walked = frozenset().union(*parts)
        self._walked_cache = (parts, walked)
        return walked

    def _mark_watched(self, roots: list[WatchedRoot]) -> None:
        """A live watch has seen everything up to now: watched, ready sources are current."""
        now = time.time()
        for root in roots:
            state = self.indexer.states.get(root.source)
            if state is not None and state.state == "ready":
                state.last_scan_ok = now
