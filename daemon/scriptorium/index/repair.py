"""Damage found while serving: reported, contained, and repaired from the roots, boundedly.

A damaged stored text (a blob missing from a damaged bundle table, or undecodable), a pack
record that does not decode, or a search index that fails underneath a call (a tantivy panic)
refuses the served generation, says so in each touched source's state (``ListSources``,
``scriptorium health``) and repairs it in a thread of its own: texts are read again from the
roots (older generations name the same blobs, so serving one of them alone would find the
same damage), a search index is built again from nothing (older generations may link the same
segment files). :class:`Repairing` is that part of the ``Indexer``.

Should the repair not hold (the disk keeps damaging what is written, a root that cannot be
read), a rebuild per failing call would fill the state directory with refused generations; so
only ``MAX_REPAIRS`` repairs run within ``WINDOW_SECONDS``, each after a wait that doubles, and
then none until a restart (or until the window has passed).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scriptorium import faults
from scriptorium.cancel import BuildCancelled
from scriptorium.index.failures import GenerationWriteError
from scriptorium.index.guard import DamagedIndex
from scriptorium.index.texts import DamagedText

if TYPE_CHECKING:
    from scriptorium.index.catalog import Snapshot
    from scriptorium.index.generation import GenerationStore, Manifest

log = logging.getLogger(__name__)

MAX_REPAIRS = 3
WINDOW_SECONDS = 600.0
FIRST_BACKOFF_SECONDS = 0.5


@dataclass(slots=True)
class RepairBudget:
    """Hands out repairs: the wait before the next one, or None once the bound is reached."""

    limit: int = MAX_REPAIRS
    window: float = WINDOW_SECONDS
    first_backoff: float = FIRST_BACKOFF_SECONDS
    clock: Callable[[], float] = time.monotonic  # injected by tests
    _started: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> float | None:
        """Seconds to wait before the next repair (0 for the first), or None: no more."""
        now = self.clock()
        with self._lock:
            self._started = [t for t in self._started if now - t < self.window]
            done = len(self._started)
            if done >= self.limit:
                return None
            self._started.append(now)
        return 0.0 if done == 0 else self.first_backoff * 2 ** (done - 1)

    @property
    def used(self) -> int:
        """Repairs started within the window."""
        with self._lock:
            return len(self._started)


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused generation and how to repair it."""

    generation: int
    blob: str | None  # the damaged blob, removed from the store first
    fresh: bool  # build the search index again from nothing
    delay: float  # seconds to wait first (the backoff)
    # An index file found damaged (its path and recorded [size, sha256]): no generation
    # holding it serves instead.
    avoid: tuple[str, list] | None = None


class Repairing:
    """The ``Indexer``'s handling of damage found while serving (see the module's docstring).

    Uses the indexer's served snapshot, states, store, write lock and reconcile.
    """

    _snapshot: Snapshot | None
    _resolver: Any
    states: dict[str, Any]
    store: GenerationStore
    _write_lock: threading.Lock
    _build_stop: threading.Event
    _build_stopped: Callable[[], bool]
    _serve_newest: Callable[..., bool]
    reconcile: Callable[..., Any]

    def _init_repairs(self) -> None:
        self._refusing = threading.Lock()
        self._refused: set[str] = set()  # manifests refused while served
        self._repairs = RepairBudget()  # how many repairs of damage may run, and when
        # Set while a repair runs: the damage calls find meanwhile is what it repairs.
        self._repairing = False

    def _damaged(self, damage: DamagedText) -> None:
        """A served document's text fails to read back: refuse the served generation.

        Texts are verified when read (each against its content hash), not all at start-up;
        a damaged one refuses the generation as a corrupt one is refused at start-up (its
        directory goes, the damaged blob too), the previous valid one serves, and the roots
        are reconciled with every file whose blob is damaged or missing read again (an older
        generation names the same blobs). Runs in the reading thread: the repair has its own.
        """
        snapshot = self._snapshot
        if snapshot is not None:
            self._refuse(snapshot, str(damage), damage.blob, sources=(damage.source,))

    def _refuse_served(self, served: weakref.ref[Snapshot], damage: Exception) -> None:
        snapshot = served()
        if snapshot is not None:
            self._refuse(snapshot, str(damage))

    def _index_damaged(self, served: weakref.ref[Snapshot], damage: DamagedIndex) -> None:
        """The served search index failed underneath a call (a panic, a read error): build
        the index again from the roots. Older generations may hold the same segment files
        (an update links its parent's), so none of them is served instead."""
        snapshot = served()
        if snapshot is not None:
            self._refuse(snapshot, str(damage), fresh=True)

    def _refuse(
        self,
        snapshot: Snapshot,
        why: str,
        blob: str | None = None,
        *,
        sources: tuple[str, ...] = (),
        fresh: bool = False,
        avoid: tuple[str, list] | None = None,
    ) -> None:
        """Refuse the served ``snapshot`` (once) and repair it in a thread of its own, within
        the ``RepairBudget``: past it, the damage is only reported."""
        if self._snapshot is not snapshot:
            return
        with self._refusing:
            if self._repairing or snapshot.manifest.checksum in self._refused:
                return
            self._refused.add(snapshot.manifest.checksum)
            delay = self._repairs.take()
            self._repairing = delay is not None
        touched = sources or tuple(snapshot.manifest.sources)
        if delay is None:
            log.error(
                "index generation %d is damaged again after %d repairs; not repairing it "
                "again until a restart: %s",
                snapshot.generation,
                self._repairs.used,
                why,
            )
            self._report_damage(
                touched,
                f"{why}; not repaired after {self._repairs.used} "
                "repairs: check the disk, then restart the daemon",
            )
            return
        log.error("refusing index generation %d: %s", snapshot.generation, why)
        self._report_damage(touched, f"{why}; repairing it from the source root")
        threading.Thread(
            target=self._fall_back,
            args=(Refusal(snapshot.generation, blob, fresh, delay, avoid),),
            name="scriptorium-fallback",
            daemon=True,
        ).start()

    def _report_damage(self, sources: Iterable[str], why: str) -> None:
        """Say in ``ListSources`` (and so in ``scriptorium health``) what damage was found."""
        for name in sources:
            state = self.states.get(name)
            if state is not None:
                state.state, state.last_error = "stale", f"damaged index: {why}"

    def _fall_back(self, refusal: Refusal) -> None:
        """Set the refused generation aside and repair from the roots (after ``delay``).

        Holdable by the ``repair.start`` pause (``faults.py``). A damaged text: the previous
        valid generation (one without the damaged index file, if one was found) serves and the
        roots are reconciled, every file whose blob is damaged or missing read again. A
        damaged search index (``fresh``), or no valid previous generation: the refused
        generation keeps answering what it can until a new index, built from the roots
        without its files, has landed.
        """
        try:
            self._repair(refusal)
        finally:
            with self._refusing:
                self._repairing = False

    def _repair(self, refusal: Refusal) -> None:
        faults.pause("repair.start", self._build_stopped)
        if refusal.delay and self._build_stop.wait(refusal.delay):
            return
        refused, blob, fresh = refusal.generation, refusal.blob, refusal.fresh
        with self._write_lock:
            if self._build_stopped():
                return
            current = self._snapshot
            if current is None or current.generation != refused:
                return  # a newer generation has landed meanwhile
            if self.store.read_only:  # a reader sets nothing aside and builds nothing
                if not self._serve_newest(below=refused, avoid=refusal.avoid):
                    log.error("no earlier index generation is valid; a reader cannot rebuild")
                return
            with self.store.writing():
                if blob is not None:
                    self.store.blobs.remove([blob])
                self.store.discard(refused)
            if not fresh and not self._serve_newest(below=refused, avoid=refusal.avoid):
                # The refused generation answers what it can until the rebuild lands.
                log.error("no earlier index generation is valid; rebuilding from the roots")
                fresh = True
        try:
            self.reconcile(repair=True, fresh=fresh)
        except (BuildCancelled, GenerationWriteError) as exc:
            log.error("catching up after a refused generation failed: %s", exc)

    def _missing_blobs(self, base: Manifest) -> frozenset[str]:
        """The blobs ``base`` names that the blob store cannot find (a damaged bundle table
        loses all of its bundle's blobs at once): their files are read again."""
        blobs = self.store.blobs
        blobs.refresh()
        named = {f.blob for entry in base.sources.values() for f in entry.files.values()}
        missing = frozenset(name for name in named if not blobs.exists(name))
        if missing:
            log.warning(
                "%d stored texts are missing or damaged: reading their files again", len(missing)
            )
        return missing
