"""Keeping the index in line with the sources: load, verify, reconcile, swap.

The ``Indexer`` owns the generation store, per-source state and the served snapshot. Kept
whole past 500 lines: a reconcile is one transaction over every source, kept in one place with
its helpers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cachetools import LRUCache

from scriptorium import faults, limits, telemetry
from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.cancel import BuildCancelled, build_checkpoint
from scriptorium.domain.model import Block, FileStat, SourceDocument
from scriptorium.domain.outcomes import Unavailable
from scriptorium.index.catalog import (
    Snapshot,
    document_bids,
    document_includes,
    next_tables,
)
from scriptorium.index.compaction import deleted_blocks, should_rewrite
from scriptorium.index.doctable import DocTable
from scriptorium.index.fields import Indexed, document_fields
from scriptorium.index.generation import (
    FORMAT_VERSION,
    Change,
    CorruptGenerationError,
    FileEntry,
    Finish,
    GenerationStore,
    GenerationWriteError,
    Manifest,
    SourceEntry,
    Step,
)
from scriptorium.index.native import release_free_memory
from scriptorium.index.pack import encode_pack, stored
from scriptorium.index.parallel import helper_count, load_in_order
from scriptorium.index.progress import BuildProgress
from scriptorium.index.repair import Repairing
from scriptorium.index.resume import ProgressKept
from scriptorium.index.resuming import Resuming
from scriptorium.index.schema import SCHEMA_VERSION
from scriptorium.index.served import PageResolver
from scriptorium.index.store import CorruptBlobError, blob_name
from scriptorium.index.texts import StoredDocument, TextCache
from scriptorium.sources.base import LocalTreeSource, PathEscapeError, Source
from scriptorium.text import TOKENIZER_VERSION, split_lines

if TYPE_CHECKING:
    from scriptorium.settings.config import Settings


log = logging.getLogger(__name__)

KEEP_GENERATIONS = limits.KEEP_GENERATIONS
# Unreferenced blobs are deleted after an update of at least this many files, or when this long
# has passed since the last time they were.
BLOB_PRUNE_FILES = 100
BLOB_PRUNE_SECONDS = 60.0
# How a source served before its start-up reconcile has landed says so (``last_error``).
CATCHING_UP = "catching up with disk"
ROOT_GONE = "root not on disk; serving the indexed snapshot"


# The text cache keeps the texts a write adds (an edited file is read again soon), but not
# those of a write of more documents than this: a build is not an edit, and its documents
# pushed each other out of the bound (priming 38,430 pages was 4 % of a build's main thread).
PRIME_AT_MOST = 1000


@dataclass(slots=True)
class SourceState:
    state: str = "loading"
    last_error: str = ""
    indexed_at: float | None = None
    last_scan_ok: float | None = None
    # The build under way: files of this source it has to read, and has read (for ListSources).
    build_files_total: int = 0
    build_files_done: int = 0
    # And their sizes in bytes, as listed (for a progress bar's MB and rate).
    build_bytes_total: int = 0
    build_bytes_done: int = 0


@dataclass(slots=True)
class BuildSummary:
    generation: int
    documents: int
    blocks: int
    bytes: int
    changed: int
    removed: int
    seconds: float
    files: dict[str, int] = field(default_factory=dict)
    # Files an interrupted build had read, continued from (``index/resume.py``).
    resumed: int = 0


# Options that change how a source is served, not what its index holds.
_SERVING_OPTIONS = frozenset({"snapshot"})


def source_fingerprint(source: Source) -> str:
    """What the index of a source depends on; a change re-indexes that source."""
    cfg = source.config
    options = sorted((k, v) for k, v in cfg.options.items() if k not in _SERVING_OPTIONS)
    payload = json.dumps([cfg.kind, str(cfg.root), options], default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(slots=True)
class _Prepared:
    """What the build helpers made beside the documents they loaded, by object identity:
    each block's fields and each document's encoded blob."""

    tokens: dict[int, Indexed] = field(default_factory=dict)
    blobs: dict[int, bytes | None] = field(default_factory=dict)
    # [files an interrupted build read before this reconcile continued it, files to read now]
    progress: list[int] = field(default_factory=lambda: [0, 0])

    def blob_for(self, doc: SourceDocument) -> bytes | None:
        return self.blobs.pop(id(doc), None)


@dataclass(slots=True)
class _Scan:
    """One scanned source of a reconcile: its new file table, its old one, what is on disk.

    ``stats`` covers the whole tree, or, when ``only`` is set, just those paths (the watcher
    named them; every other file is as the old table has it).
    """

    source: Source
    table: SourceEntry
    old_files: dict[str, FileEntry]
    stats: list[FileStat]
    only: frozenset[str] | None = None
    # Blobs found damaged or missing: their files are read again from the root even when
    # the listing says they are unchanged (a repair, see ``Indexer._refuse``).
    reread: frozenset[str] = frozenset()

    def unchanged(self, entry: FileEntry | None, stat: FileStat) -> bool:
        """Whether ``stat``'s file can keep ``entry`` as it is (not changed, not damaged)."""
        return _unchanged(entry, stat) and entry.blob not in self.reread


@dataclass(slots=True)
class _Listing:
    """What listing the sources found: each one's new file table (by name), the sources to
    scan, and the change begun (every file of a source whose fingerprint changed is removed)."""

    tables: dict[str, SourceEntry] = field(default_factory=dict)
    scans: list[_Scan] = field(default_factory=list)
    change: Change = field(default_factory=Change)


@dataclass(slots=True)
class _Tally:
    """What a reconcile's steps found besides the change itself."""

    metadata_changed: bool = False


def _unchanged(entry: FileEntry | None, stat: FileStat) -> bool:
    return entry is not None and entry.size == stat.size and entry.mtime_ns == stat.mtime_ns


class Indexer(Repairing, Resuming):
    """Loads the newest valid generation and lands every change as a new one."""

    def __init__(
        self,
        sources: list[Source],
        store: GenerationStore,
        settings: Settings,
        token_options: Mapping[str, bool],
        extractors: ExtractorChain,
        *,
        make_resolver: Callable[[list[Source], Snapshot], PageResolver],
        load_plugins: Callable[[], Any] | None = None,
        build_stop: threading.Event | None = None,
    ) -> None:
        self.sources = sources
        self.by_name = {s.name: s for s in sources}
        self.store = store
        self.settings = settings
        # The tokenizer's options ([ranking] stem, stopwords...): all the index needs of ranking.
        self.token_options = dict(token_options)
        self.extractors = extractors
        self.states = {s.name: SourceState() for s in sources}
        self._snapshot: Snapshot | None = None
        # The resolver and the snapshot it was made for; made on first use (its tables hold
        # an entry per page and module name: seconds at 90,000 files, off the start path).
        self._resolver: tuple[Snapshot, PageResolver] | None = None
        self._make_resolver = make_resolver
        # How a build helper process loads the plugins (None: no helper processes).
        self._load_plugins = load_plugins
        self._resolver_lock = threading.Lock()
        # Held by every build and update: one writer at a time.
        self._write_lock = threading.Lock()
        # Set once, to stop building for good (a shutdown): see cancel_builds.
        self._build_stop = build_stop or threading.Event()
        # Texts of the served documents, read from their blobs on demand, bounded in bytes.
        self.cache = TextCache(store.blobs.texts, settings.text_cache_bytes)
        self.cache.on_damage = self._damaged
        self._init_repairs()
        self._lines: LRUCache = LRUCache(maxsize=256)  # documents that are not served ones
        self._blobs_pruned_at = float("-inf")  # monotonic time of the last blob pruning
        # Called with each snapshot once it serves (the semantic retriever's vector thread).
        self.on_served: list[Callable[[Snapshot], None]] = []
        # Whether a reconcile of every root has landed (or a reader serves as built): from
        # then on answers reflect the roots, not only an older generation (health "current").
        self.caught_up = False
        # False for ``index build``, which writes generations and serves none.
        self.serves = True
        # Everything that changes what is indexed: extractors, tokenizer rules, stemming.
        self.index_fingerprint = (
            f"{extractors.fingerprint};tokenizer={TOKENIZER_VERSION};"
            + ",".join(f"{k}={v}" for k, v in sorted(self.token_options.items()))
        )

    @property
    def snapshot(self) -> Snapshot:
        """The served generation (``Unavailable`` while the first one loads)."""
        if self._snapshot is None:
            raise Unavailable("sources are still loading")
        return self._snapshot

    @property
    def current(self) -> Snapshot | None:
        """The served generation, or None while the first one loads."""
        return self._snapshot

    @property
    def resolver(self) -> PageResolver:
        """Locations to documents over the served generation (``Unavailable`` while loading)."""
        snapshot = self._snapshot
        if snapshot is None:
            raise Unavailable("sources are still loading")
        held = self._resolver
        if held is not None and held[0] is snapshot:
            return held[1]
        with self._resolver_lock:
            held = self._resolver
            if held is not None and held[0] is snapshot:
                return held[1]
            resolver = self._make_resolver(self.sources, snapshot)
            if self._snapshot is snapshot:
                self._resolver = (snapshot, resolver)
            return resolver

    def wait_for_writer(self) -> None:
        """Return once no build or update holds the write lock."""
        with self._write_lock:
            pass

    # -- index management ----------------------------------------------------------------------

    def load_or_build(self) -> BuildSummary | None:
        """Serve the newest valid generation (refusing corrupt ones), then catch up with disk."""
        self.open_newest()
        return self.reconcile()

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

    def _read_own_pack(self, docs: DocTable, generation: int) -> None:
        """Have ``docs`` read from the pack just written for them (``DocTable.read_from``)."""
        try:
            records = self.store.read_pack(generation)
        except CorruptGenerationError as exc:  # serves on from the parent's records
            log.warning("generation %d: reading its own pack: %s", generation, exc)
            return
        if records is not None and not docs.read_from(records, self.cache):
            records.close()

    def _fingerprints(self) -> dict[str, str]:
        return {source.name: source_fingerprint(source) for source in self.sources}

    def _compatible(self, manifest: Manifest) -> bool:
        return (
            manifest.format_version == FORMAT_VERSION
            and manifest.schema_version == SCHEMA_VERSION
            and manifest.extractors == self.index_fingerprint
        )

    def cancel_builds(self) -> None:
        """Stop the build under way at its next checkpoint (and any later one at its first).

        For a shutdown: the build ends with ``BuildCancelled`` between two files or before its
        commit, and what it had written is removed.
        """
        self._build_stop.set()

    def _build_stopped(self) -> bool:
        return self._build_stop.is_set()

    def reconcile(
        self,
        changed: Mapping[str, Iterable[str]] | None = None,
        *,
        repair: bool = False,
        fresh: bool = False,
    ) -> BuildSummary | None:
        """Bring the index in line with the source roots; a new generation only if needed.

        Without ``changed`` every root is listed. With it (from a file-system watcher: source
        name to the relative paths that changed), only those paths are looked at, and sources
        it does not name are taken as unchanged; a source the index does not hold yet, or a
        change only a listing can judge (a new directory, an ignore file), is listed whole.

        Raises ``BuildCancelled`` after :meth:`cancel_builds`, and ``GenerationWriteError``
        when the new generation cannot be written (the sources it carried say so in their
        state; whatever generation was served still is).

        ``repair`` reads again every file whose blob the served generation names but the blob
        store cannot find (or finds damaged: those were removed from it); ``fresh`` builds the
        index again from nothing rather than from the served generation's files.
        """
        if self.store.read_only:
            return self._read_only_reconcile()
        with self._write_lock:
            try:
                summary = self._reconcile(changed, repair, fresh)
                summary = self._rewrite_if_deleted(summary, every_root=changed is None)
                if changed is None:
                    self.caught_up = True
                return summary
            except ProgressKept as kept:
                log.warning(
                    "index build cancelled: its progress was kept as partial generation %d "
                    "(%d of %d files read), and a restart continues from there; no "
                    "generation was added",
                    kept.generation,
                    kept.record.files_done,
                    kept.record.files_total,
                )
                raise
            except BuildCancelled:
                log.warning(
                    "index build cancelled: its partial generation was removed and no "
                    "generation was added"
                )
                raise
            finally:
                # The build is over (landed, found nothing to do, or failed).
                for state in self.states.values():
                    state.build_files_total = state.build_files_done = 0
                    state.build_bytes_total = state.build_bytes_done = 0

    def _rewrite_if_deleted(
        self, summary: BuildSummary | None, *, every_root: bool
    ) -> BuildSummary | None:
        """Write the served index again from nothing when the blocks deleted from it would
        move BM25's statistics away from a fresh build's (``index/compaction.py``); the
        summary is the reconcile's, with the generation that now serves."""
        snapshot = self._snapshot
        if snapshot is None or not self._rewritable(snapshot):
            return summary
        held = deleted_blocks(self.store.generation_dir(snapshot.generation) / "index")
        if not should_rewrite(
            held, every_root=every_root, bound=self.settings.rewrite_deleted_share
        ):
            return summary
        started = time.perf_counter()
        states = {name: (s.state, s.last_error) for name, s in self.states.items()}
        try:
            rewritten = self._reconcile(None, False, True)
        except GenerationWriteError as exc:
            # The update itself landed and serves: only its statistics wait for a rewrite.
            for name, (state, error) in states.items():
                self.states[name].state, self.states[name].last_error = state, error
            log.warning(
                "index generation %d serves with %d deleted blocks counted in the ranking's "
                "statistics: writing it again from the roots failed: %s",
                snapshot.generation,
                held.deleted,
                exc,
            )
            return summary
        if rewritten is None:
            return summary
        log.info(
            "index generation %d: written again from the roots in %.2fs, so the %d blocks "
            "deleted from generation %d no longer count in the ranking's statistics",
            rewritten.generation,
            time.perf_counter() - started,
            held.deleted,
            snapshot.generation,
        )
        if summary is None:
            return rewritten
        return dataclasses.replace(
            summary,
            generation=rewritten.generation,
            documents=rewritten.documents,
            blocks=rewritten.blocks,
            bytes=rewritten.bytes,
            seconds=summary.seconds + rewritten.seconds,
            files=rewritten.files,
        )

    def _rewritable(self, snapshot: Snapshot) -> bool:
        """Whether a write from the roots gives back every document ``snapshot`` serves: not
        when a source it holds is served as it was (a snapshot source, a remote one, a root
        that is gone or could not be listed), which such a write would drop or read again."""
        for source in self.sources:
            entry = snapshot.manifest.sources.get(source.name)
            if entry is None or not len(entry):
                continue
            if (
                not isinstance(source, LocalTreeSource)
                or source.config.options.get("snapshot")
                or self.states[source.name].state != "ready"
                or not source.root.is_dir()
            ):
                return False
        return True

    def _read_only_reconcile(self) -> None:
        """A reader never writes: it serves a generation that is there, or fails to start."""
        if self._snapshot is not None:
            return
        names = tuple(s.name for s in self.sources)
        for name in names:
            self.states[name].state = "failed"
            self.states[name].last_error = "read-only state directory holds no usable generation"
        raise GenerationWriteError(
            f"the state directory {self.store.state_dir} is read only and holds no usable "
            "index generation: build one with `scriptorium index build` where it is writable",
            names,
        )

    def _reconcile(
        self, changed: Mapping[str, Iterable[str]] | None, repair: bool, fresh: bool
    ) -> BuildSummary | None:
        """Land what changed under the roots as a new generation and serve it: list the
        sources, write their changes as they load, serve the result, report it. None when
        nothing changed (the generation served stays)."""
        started = time.perf_counter()
        current = None if fresh else self._snapshot
        prepared = _Prepared()
        # A build listing every root may continue from the progress an interrupted one kept.
        resumable = changed is None and not repair and not fresh
        resumed = self._resumable(self._fingerprints()) if resumable else None
        if resumed is not None:
            current, record = resumed
            prepared.progress[0] = record.files_done
        base = current.manifest if current else None
        reread = self._missing_blobs(base) if repair and base is not None else frozenset()
        listing = self._list_sources(base, changed, reread)
        tables, scans, change = listing.tables, listing.scans, listing.change
        # The write starts with the first changed file: each is indexed as soon as it and
        # every file before it are loaded, while the build helpers load the next ones.
        tally = _Tally(metadata_changed=resumed is not None)  # a kept partial is never served
        made: dict[str, object] = {}
        try:
            manifest = self.store.write_streamed(
                parent=base,
                change=change,
                extractors=self.index_fingerprint,
                steps=self._steps(scans, tables, base, change, tally, prepared),
                tokens_for=self._tokens_from(prepared.tokens),
                finish=self._finisher(base, current, listing, tally, made),
                stop=self._build_stopped,
                encoded_for=prepared.blob_for,
                keep=self._keeper(base, current, tables, prepared.progress) if resumable else None,
            )
        except GenerationWriteError as exc:
            self._write_failed(exc, scans, base)
            raise
        if manifest is None:
            self._scanned_ok(scans)
            if resumable:
                self.store.drop_kept()
            return None
        changed_files = len(change.added)
        self._serve_written(manifest, made, current, listing, changed_files, resumable)
        return self._report(manifest, listing, changed_files, prepared.progress[0], started)

    def _list_sources(
        self,
        base: Manifest | None,
        changed: Mapping[str, Iterable[str]] | None,
        reread: frozenset[str],
    ) -> _Listing:
        """Each source's new file table and what to scan: a whole listing, the paths the
        watcher named, or (a snapshot, remote or vanished source) what the generation holds."""
        listing = _Listing()
        tables, scans, change = listing.tables, listing.scans, listing.change
        for source in self.sources:
            build_checkpoint(self._build_stopped)
            state = self.states[source.name]
            previous = base.sources.get(source.name) if base else None
            fingerprint = source_fingerprint(source)
            if previous is not None and previous.fingerprint != fingerprint:
                change.removed += [(source.name, p) for p in previous.files]
                previous = None
            old_files = previous.files if previous else {}
            table = SourceEntry(source.config.kind, str(source.config.root), fingerprint)
            snapshot = bool(source.config.options.get("snapshot"))
            local = isinstance(source, LocalTreeSource)
            if (snapshot and old_files) or not local or not source.root.is_dir():
                # Serve what the generation holds: a snapshot source on purpose (it is
                # scanned only while no generation holds it), any other local source
                # because its tree has gone (stale until it returns).
                table.files = dict(old_files)
                tables[source.name] = table
                if old_files:
                    state.state = "ready" if (snapshot or not local) else "stale"
                    state.last_error = "" if state.state == "ready" else ROOT_GONE
                else:
                    state.state = "failed"
                    state.last_error = "source root does not exist and no index holds it"
                continue
            if changed is not None and old_files and state.state == "ready":
                partial = self._partial_scan(source, old_files, changed.get(source.name, ()))
                if partial is not None:
                    tables[source.name] = table
                    if partial[1]:
                        scans.append(_Scan(source, table, old_files, *partial))
                    else:
                        table.files = old_files  # untouched: the same (immutable) table
                    continue
            try:
                stats = source.list_files()
            except OSError as exc:
                state.state, state.last_error = "stale", f"cannot list files: {exc.strerror}"
                table.files = dict(old_files)
                tables[source.name] = table
                continue
            tables[source.name] = table
            scans.append(_Scan(source, table, old_files, stats, reread=reread))
        return listing

    def _finisher(
        self,
        base: Manifest | None,
        current: Snapshot | None,
        listing: _Listing,
        tally: _Tally,
        made: dict[str, object],
    ) -> Callable[[], Finish | None]:
        """What the write calls once every step is written: the new document and block tables
        (also left in ``made`` for serving), or None when nothing changed after all."""
        tables, change = listing.tables, listing.change

        def finish() -> Finish | None:
            if base is not None:
                tally.metadata_changed |= set(tables) != set(base.sources) or any(
                    tables[n].fingerprint != base.sources[n].fingerprint
                    for n in tables
                    if n in base.sources
                )
            if current is not None and not (
                change.added or change.removed or tally.metadata_changed
            ):
                return None
            fingerprint = self.index_fingerprint
            prime = len(change.added) <= PRIME_AT_MOST
            added = [
                stored(
                    doc,
                    blob_name(doc, fingerprint),
                    self.cache,
                    document_includes(doc),
                    document_bids(doc),
                    prime,
                )
                for doc in change.added
            ]
            docs, blocks = next_tables(
                tables,
                current.docs if current else None,
                current.blocks if current else None,
                added,
                change.removed,
            )
            made.update(added=added, docs=docs, blocks=blocks)
            return Finish(
                tables,
                pack=lambda: encode_pack(list(docs), map(docs.raw_at, range(len(docs)))),
                block_table=blocks.encode,
            )

        return finish

    def _serve_written(
        self,
        manifest: Manifest,
        made: dict[str, object],
        current: Snapshot | None,
        listing: _Listing,
        changed_files: int,
        resumable: bool,
    ) -> None:
        """Serve the generation just written, mark its sources indexed, prune the old ones."""
        docs, blocks, added = made["docs"], made["blocks"], made["added"]
        change = listing.change
        self._scanned_ok(listing.scans)
        self._read_own_pack(docs, manifest.generation)
        snapshot = Snapshot.assemble(self.store, manifest, docs, blocks, self.cache)
        self._swap(snapshot, current, change.removed, added)
        if resumable:  # what a kept partial held is served now, or it fitted no longer
            self.store.drop_kept()
        now = time.time()
        for source in self.sources:
            if self.states[source.name].state in ("ready", "stale"):
                self.states[source.name].indexed_at = now
        # Blobs of dropped generations are deleted at most once a minute (and after any
        # update of many files): a burst of edits should not list the blob store every time.
        now_mono = time.monotonic()
        prune_blobs = changed_files + len(change.removed) >= BLOB_PRUNE_FILES or (
            now_mono - self._blobs_pruned_at >= BLOB_PRUNE_SECONDS
        )
        self.store.prune(KEEP_GENERATIONS, in_use=[manifest.generation], blobs=prune_blobs)
        if prune_blobs:
            self._blobs_pruned_at = now_mono
        release_free_memory()  # the tantivy writer's freed arenas (see index/native.py)

    @staticmethod
    def _report(
        manifest: Manifest, listing: _Listing, changed_files: int, resumed: int, started: float
    ) -> BuildSummary:
        """The build's summary, logged and recorded as a metric."""
        tables, change = listing.tables, listing.change
        summary = BuildSummary(
            generation=manifest.generation,
            documents=manifest.document_count,
            blocks=manifest.block_count,
            bytes=sum(f.size for s in tables.values() for f in s.files.values()),
            changed=changed_files,
            removed=len(change.removed),
            seconds=time.perf_counter() - started,
            files={n: len(t.files) for n, t in tables.items()},
            resumed=resumed,
        )
        log.info(
            "index generation %d: %d documents, %d blocks (%d changed, %d removed) in %.2fs",
            summary.generation,
            summary.documents,
            summary.blocks,
            summary.changed,
            summary.removed,
            summary.seconds,
        )
        telemetry.record_index_build(summary)
        return summary

    def _scanned_ok(self, scans: list[_Scan]) -> None:
        """The scanned sources match their roots now (their changes are served)."""
        now = time.time()
        for scan in scans:
            state = self.states[scan.source.name]
            state.state, state.last_error, state.last_scan_ok = "ready", "", now

    def _write_failed(
        self, exc: GenerationWriteError, scans: list[_Scan], base: Manifest | None
    ) -> None:
        """Sources whose update could not be written: stale when a generation still serves
        them (the previous one keeps serving), failed when none holds them; either way their
        ``last_error`` is the reason, for ListSources."""
        names = set(exc.sources) or {scan.source.name for scan in scans}
        for name in names:
            state = self.states.get(name)
            if state is None:
                continue
            entry = base.sources.get(name) if base is not None else None
            held = entry is not None and bool(entry.files)
            state.state = "stale" if held else "failed"
            state.last_error = (
                f"update not applied, serving the previous index: {exc}" if held else str(exc)
            )

    @staticmethod
    def _partial_scan(
        source: Source, old_files: dict[str, FileEntry], paths: Iterable[str]
    ) -> tuple[list[FileStat], frozenset[str]] | None:
        """What changed under ``source`` among ``paths``; None when it needs a full listing."""
        if not isinstance(source, LocalTreeSource):
            return None
        only = frozenset(paths)
        if not only:
            return [], only
        stats = source.stat_paths(only)
        if stats is None:
            return None
        present = {stat.path for stat in stats}
        for path in only:
            if path not in old_files and path not in present:
                # Gone, and never indexed as a file: a directory that held indexed files?
                prefix = path + "/"
                if any(p.startswith(prefix) for p in old_files):
                    return None
        return stats, only

    def _swap(
        self,
        snapshot: Snapshot,
        previous: Snapshot | None = None,
        removed: list[tuple[str, str]] | None = None,
        added: list[StoredDocument] | None = None,
    ) -> None:
        """Serve ``snapshot``; given the change from ``previous``, the resolver is updated
        rather than rebuilt from every page; otherwise it is made when first asked for."""
        with self._resolver_lock:
            held = self._resolver
            resolver = None  # made on first use
            if (
                previous is not None
                and removed is not None
                and held is not None
                and held[0] is previous
                and snapshot.manifest.parent == previous.generation
            ):
                gone = [
                    (k, (k[1], previous.docs.moved_from(k))) for k in removed if k in previous.docs
                ]
                resolver = (snapshot, held[1].changed(gone, added or [], snapshot.docs))
            # A pack record that does not decode refuses the generation serving it. Held
            # weakly: a snapshot its table referred back to would outlive being served (and
            # keep its pack open) until a full collection, never if the table was frozen.
            served = weakref.ref(snapshot)
            snapshot.docs.on_damage = lambda exc: self._refuse_served(served, exc)
            snapshot.searcher.on_damage = lambda exc: self._index_damaged(served, exc)
            # One reference assignment each: readers see the old pair or the new pair.
            self._snapshot, self._resolver = snapshot, resolver
        for listener in self.on_served:
            listener(snapshot)
        self.store.hold(snapshot.generation)

    def _steps(
        self,
        scans: list[_Scan],
        tables: dict[str, SourceEntry],
        base: Manifest | None,
        change: Change,
        tally: _Tally,
        prepared: _Prepared,
    ) -> Iterator[Step]:
        """The steps of a reconcile's write, made while its changed files load: each file as
        it comes, compared with its old entry, fills ``change``, ``tally`` and the new file
        ``tables`` and gives its removal and its new document, in listing order.

        A removal always comes before the document that replaces it (a tantivy delete by term
        removes only what was added before it), so the index holds what a write of the whole
        ``change`` at once would.
        """
        yield from list(change.removed)  # sources whose extractors changed: all of it goes
        loaded = self._load_changed(scans, prepared)
        for scan in scans:
            source, table, old_files = scan.source, scan.table, scan.old_files
            seen = set()
            if scan.only is not None:
                table.files = dict(old_files)
                present = {stat.path for stat in scan.stats}
                for path in scan.only:
                    if path in old_files and path not in present:
                        del table.files[path]
                        change.removed.append((source.name, path))
                        yield source.name, path
                seen = old_files.keys()
            for stat in scan.stats:
                entry = old_files.get(stat.path)
                if scan.only is None:
                    seen.add(stat.path)
                if scan.unchanged(entry, stat):
                    table.files[stat.path] = entry
                    continue
                key, doc = next(loaded)
                if key != (source.name, stat.path):
                    raise RuntimeError(f"files loaded out of order: {key} for {stat.path}")
                if doc is None:
                    if entry is not None:
                        table.files.pop(stat.path, None)
                        change.removed.append(key)
                        yield key
                    continue
                if (
                    entry is not None
                    and entry.hash == doc.content_hash
                    and entry.blob not in scan.reread
                ):
                    tally.metadata_changed = True
                    table.files[stat.path] = FileEntry(
                        entry.hash, stat.size, stat.mtime_ns, entry.blob, entry.blocks
                    )
                    continue
                if entry is not None:
                    change.removed.append(key)
                    yield key
                change.added.append(doc)
                # Before the step: a stopped write keeps the entries of what it applied.
                table.files[stat.path] = FileEntry(
                    doc.content_hash,
                    stat.size,
                    stat.mtime_ns,
                    blob_name(doc, self.index_fingerprint),
                    len(doc.blocks),
                )
                yield doc
            for path in old_files:
                if path not in seen:
                    change.removed.append((source.name, path))
                    yield source.name, path
            if scan.only is not None and any(
                path in table.files and path not in old_files for path in scan.only
            ):
                # New paths went in at the end: keep the table in path order, as a listing
                # gives it (documents are served, and ties broken, in that order).
                table.files = dict(sorted(table.files.items()))
            if table.files == old_files:
                table.files = old_files  # unchanged: share the (immutable) previous table
        if base is not None:
            for name, entry in base.sources.items():
                if name not in tables:
                    gone = [(name, p) for p in entry.files]
                    change.removed += gone
                    yield from gone

    def _load_changed(
        self, scans: list[_Scan], prepared: _Prepared
    ) -> Iterator[tuple[tuple[str, str], SourceDocument | None]]:
        """Every changed file of ``scans`` read and cut (None when unreadable), by (source,
        path), in listing order, each as soon as it and the files before it are loaded.

        Many files are shared with helper processes and tokenized as they are loaded (their
        tokens, and the blobs the helpers encoded, go into ``prepared``); a few are only
        loaded here, and the generation writer tokenizes and encodes them.
        """
        wanted = [
            (scan.source.name, stat.path)
            for scan in scans
            for stat in scan.stats
            if not scan.unchanged(scan.old_files.get(stat.path), stat)
        ]
        sizes = {(scan.source.name, stat.path): stat.size for scan in scans for stat in scan.stats}
        progress = BuildProgress(self.states, wanted, sizes)
        prepared.progress[1] = len(wanted)
        if prepared.progress[0]:
            done = prepared.progress[0]
            log.info(
                "resumed: %d of %d files already done; reading the other %d",
                done,
                done + len(wanted),
                len(wanted),
            )
        helpers = helper_count(self.settings.build_workers, len(wanted))
        if helpers and self._load_plugins is not None:
            keys = iter(wanted)
            for chunk in load_in_order(
                wanted,
                sources=self.by_name,
                options=self.token_options,
                fingerprint=self.extractors.fingerprint,
                load_plugins=self._load_plugins,
                helpers=helpers,
                on_fallback=lambda why: log.warning("building without helper processes: %s", why),
                on_loaded=progress.advance,
                stop=self._build_stopped,
                sizes=sizes,
            ):
                for result in chunk:
                    if result.doc is not None:
                        for block, fields in zip(result.doc.blocks, result.tokens, strict=True):
                            prepared.tokens[id(block)] = fields
                        # Set even when None: an identity freed since may be reused.
                        prepared.blobs[id(result.doc)] = result.blob
                    yield next(keys), result.doc
            return
        for item in wanted:
            build_checkpoint(self._build_stopped)
            name, path = item
            try:
                doc = self.by_name[name].load(path)
            except (OSError, PathEscapeError):
                doc = None
            progress.advance((item,))
            yield item, doc

    def _tokens_from(self, tokens: dict[int, Indexed]):
        """``tokens_for`` for one write: a block's fields from ``tokens`` when a worker made
        them, else made for its whole document at once as a worker makes them (the page's
        path and shared headings tokenized once; the writer asks for a document's blocks one
        after another)."""
        made: list = [None, {}]  # the document last made, and its fields by block identity

        def tokens_for(doc: SourceDocument, block: Block) -> Indexed:
            found = tokens.pop(id(block), None)
            if found is not None:
                return found
            if made[0] is not doc:
                source = self.by_name.get(doc.source)
                page = source.page_location(doc.path) if source else doc.path
                fields = document_fields(doc, page, self.token_options)
                made[:] = [doc, {id(b): f for b, f in zip(doc.blocks, fields, strict=True)}]
            return made[1][id(block)]

        return tokens_for

    def lines_of(self, doc: SourceDocument) -> list[str]:
        if isinstance(doc, StoredDocument):
            return doc.lines
        lines = self._lines.get(doc.content_hash)
        if lines is None:
            lines = split_lines(doc.text)
            self._lines[doc.content_hash] = lines
        return lines
