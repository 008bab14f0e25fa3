"""The ``Indexer``'s start: serve the newest valid generation on disk at once, check its large
files in the background, then catch up with the roots and say when that has landed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from scriptorium import faults
from scriptorium.index.catalog import Snapshot
from scriptorium.index.generation import CorruptGenerationError, GenerationStore, Manifest
from scriptorium.index.progress import BuildSummary
from scriptorium.index.store import CorruptBlobError
from scriptorium.index.texts import TextCache
from scriptorium.sources.base import LocalTreeSource, Source

# The indexer's logger: these lines are the daemon's start ("serving index generation N").
log = logging.getLogger("scriptorium.index.builder")

# How a source served before its start-up reconcile has landed says so (``last_error``).
CATCHING_UP = "catching up with disk"
ROOT_GONE = "root not on disk; serving the indexed snapshot"


class Opening:
    """Mixed into the ``Indexer``: it provides ``store``, ``cache``, ``sources``, ``states``,
    ``serves``, ``_snapshot``, ``_swap``, ``_refuse``, ``_compatible``, ``reconcile``,
    ``resolver`` and ``_build_stopped``."""

    store: GenerationStore
    cache: TextCache
    sources: list[Source]
    states: dict[str, Any]
    serves: bool
    caught_up: bool
    _snapshot: Snapshot | None
    _swap: Callable[[Snapshot], None]
    _refuse: Callable[..., Any]
    _compatible: Callable[[Manifest], bool]
    reconcile: Callable[[], BuildSummary | None]
    _build_stopped: Callable[[], bool]

    def open_newest(self) -> bool:
        """Serve the newest valid generation without looking at the roots; False if none.

        What a daemon does first: it serves this at once and catches up with disk after
        (:meth:`catch_up`). The sources the catch-up will list say so in their state until it
        lands; the others (snapshots, roots that are gone) are reported as the reconcile would.
        """
        self.store.cleanup_partials()
        if not self._serve_newest():
            return False
        generation = self._snapshot.generation if self._snapshot else 0
        for source in self.sources:
            state = self.states[source.name]
            if state.state != "loading":
                continue
            entry = self._snapshot.manifest.sources.get(source.name) if self._snapshot else None
            if entry is None or not len(entry):
                continue  # the catch-up builds it: loading until then
            if self._listed_at_start(source):
                state.state = "stale"
                state.last_error = f"{CATCHING_UP}: serving generation {generation} meanwhile"
            elif source.config.options.get("snapshot") or not isinstance(source, LocalTreeSource):
                state.state, state.last_error = "ready", ""
            else:
                state.state, state.last_error = "stale", ROOT_GONE
        return True

    def catch_up(self) -> BuildSummary | None:
        """The start-up reconcile, once a generation serves: says when it has landed.

        ``caught up with disk`` in the log (and every listed source's state no longer
        catching up) is what a caller waits on to know edits made while the daemon was down
        are served. Holdable by the ``start.catch_up`` pause (``faults.py``).
        """
        faults.pause("start.catch_up", self._build_stopped)
        if self.store.read_only:
            return self._served_as_built()
        try:
            summary = self.reconcile()
        except BaseException as exc:
            for state in self.states.values():
                if state.last_error.startswith(CATCHING_UP):
                    state.last_error = f"catching up with disk failed: {exc}"
            raise
        served = self._snapshot.generation if self._snapshot else 0
        log.info(
            "caught up with disk: %s",
            f"generation {served} ({summary.changed} changed, {summary.removed} removed)"
            if summary is not None
            else f"generation {served} matches the roots",
        )
        if self._snapshot is not None:
            self.resolver  # noqa: B018 (made now, so the first location asked for does not wait)
        return summary

    def _served_as_built(self) -> None:
        """A reader's catch-up: what it serves is all it will serve (it writes nothing), so
        its sources are ready as the generation holds them."""
        for state in self.states.values():
            if state.last_error.startswith(CATCHING_UP):
                state.state, state.last_error = "ready", ""
        self.caught_up = True
        served = self._snapshot.generation if self._snapshot else 0
        log.info(
            "caught up with disk: generation %d served as built (read-only state directory: "
            "the roots are not compared with it)",
            served,
        )

    @staticmethod
    def _listed_at_start(source: Source) -> bool:
        """Whether a reconcile lists ``source`` although a generation holds it."""
        if source.config.options.get("snapshot") or not isinstance(source, LocalTreeSource):
            return False
        return source.root.is_dir()

    def _serve_newest(
        self, below: int | None = None, avoid: tuple[str, list] | None = None
    ) -> bool:
        """Serve the newest generation (older than ``below``, not holding the index file
        ``avoid`` names) that verifies; False if none."""
        for generation in self.store.complete_generations():
            if below is not None and generation >= below:
                continue
            try:
                self.store.hold(generation)  # before it is opened: no writer prunes it now
                manifest = self.store.load_manifest(generation)
                if avoid is not None and manifest.index_files.get(avoid[0]) == avoid[1]:
                    log.info("generation %d holds the damaged %s; skipping", generation, avoid[0])
                    continue
                if not self._compatible(manifest):
                    log.info(
                        "generation %d was built by another index format; skipping", generation
                    )
                    continue
                snapshot = Snapshot.load(self.store, manifest, None, cache=self.cache)
                self._swap(snapshot)
                # A generation that needs no catching up keeps the time it was built.
                for name in manifest.sources:
                    if name in self.states:
                        self.states[name].indexed_at = manifest.created_at
                if self.serves:
                    log.info("serving index generation %d", generation)
                else:
                    log.info("found index generation %d; bringing it up to date", generation)
                threading.Thread(
                    target=self._verify_served,
                    args=(snapshot,),
                    name="scriptorium-verify",
                    daemon=True,
                ).start()
                return True
            except (CorruptGenerationError, CorruptBlobError, ValueError, OSError) as exc:
                log.error("refusing index generation %d: %s", generation, exc)
        return False

    def _verify_served(self, snapshot: Snapshot) -> None:
        """Check the large files of a generation opened from disk, once it serves.

        Opening checks the manifest, every index file's size and the small files' checksums;
        the rest (tantivy's segment files, the document pack, the file tables) are hashed here,
        in the background. A mismatch refuses the generation as a damaged text does: the
        previous valid one serves, or the sources are built again. Holdable by the
        ``start.verify`` pause (``faults.py``).
        """
        faults.pause("start.verify", self._build_stopped)
        failed = self.store.verify_rest(snapshot.manifest, self._build_stopped)
        if failed is None:
            if not self._build_stopped():
                log.info("index generation %d verified", snapshot.generation)
            return
        rel, why = failed
        current = self._snapshot
        if current is None:
            return
        recorded = snapshot.manifest.index_files.get(rel)
        # An update since may have landed: it holds this generation's index files as links.
        if current is snapshot or (recorded and current.manifest.index_files.get(rel) == recorded):
            self._refuse(current, why, avoid=(rel, recorded) if recorded else None)
