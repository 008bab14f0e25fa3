"""Keeping the index in line with the sources: load, verify, reconcile, swap.

The ``Indexer`` owns the generation store, per-source state and the served snapshot. Its start
(``opening``), what a reconcile writes (``changes``), the rewrite from the roots
(``rewriting``), repairs (``repair``) and resumed builds (``resuming``) live beside it. Kept
whole past 500 lines: a reconcile is one transaction over every source, kept in one place with
its helpers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from cachetools import LRUCache

from scriptorium import limits, telemetry
from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.cancel import BuildCancelled, build_checkpoint
from scriptorium.domain.model import FileStat, SourceDocument
from scriptorium.domain.outcomes import Unavailable
from scriptorium.index.catalog import (
    Snapshot,
    next_tables,
    written,
)
from scriptorium.index.changes import (
    Listing,
    Prepared,
    Scan,
    Tally,
    load_changed,
    tokens_from,
    write_steps,
)
from scriptorium.index.doctable import DocTable
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
)
from scriptorium.index.native import release_free_memory
from scriptorium.index.opening import ROOT_GONE, Opening
from scriptorium.index.pack import encode_pack
from scriptorium.index.progress import BuildSummary, SourceState
from scriptorium.index.repair import Repairing
from scriptorium.index.resume import ProgressKept
from scriptorium.index.resuming import Resuming
from scriptorium.index.rewriting import Rewriting
from scriptorium.index.schema import SCHEMA_VERSION
from scriptorium.index.served import PageResolver
from scriptorium.index.texts import StoredDocument, TextCache
from scriptorium.sources.base import LocalTreeSource, Source
from scriptorium.text import TOKENIZER_VERSION, split_lines

if TYPE_CHECKING:
    from scriptorium.settings.config import Settings


log = logging.getLogger(__name__)

KEEP_GENERATIONS = limits.KEEP_GENERATIONS
# Unreferenced blobs are deleted after an update of at least this many files, or when this long
# has passed since the last time they were.
BLOB_PRUNE_FILES = 100
BLOB_PRUNE_SECONDS = 60.0


# The text cache keeps the texts a write adds (an edited file is read again soon), but not
# those of a write of more documents than this: a build is not an edit, and its documents
# pushed each other out of the bound (priming 38,430 pages was 4 % of a build's main thread).
PRIME_AT_MOST = 1000


# Options that change how a source is served, not what its index holds.
_SERVING_OPTIONS = frozenset({"snapshot"})


def source_fingerprint(source: Source) -> str:
    """What the index of a source depends on; a change re-indexes that source."""
    cfg = source.config
    options = sorted((k, v) for k, v in cfg.options.items() if k not in _SERVING_OPTIONS)
    payload = json.dumps([cfg.kind, str(cfg.root), options], default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


class Indexer(Opening, Rewriting, Repairing, Resuming):
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
        prepared = Prepared()
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
        tally = Tally(metadata_changed=resumed is not None)  # a kept partial is never served
        made: dict[str, object] = {}
        try:
            manifest = self.store.write_streamed(
                parent=base,
                change=change,
                extractors=self.index_fingerprint,
                steps=write_steps(
                    scans,
                    tables,
                    base,
                    change,
                    tally,
                    self._load_changed(scans, prepared),
                    self.index_fingerprint,
                ),
                tokens_for=tokens_from(prepared.tokens, self.by_name, self.token_options),
                finish=self._finisher(base, current, listing, tally, made),
                stop=self._build_stopped,
                encoded_for=prepared.blob_for,
                keep=self._keeper(base, current, tables, prepared.progress) if resumable else None,
                settle=self._settler(change, prepared.progress),
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
    ) -> Listing:
        """Each source's new file table and what to scan: a whole listing, the paths the
        watcher named, or (a snapshot, remote or vanished source) what the generation holds."""
        listing = Listing()
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
                        scans.append(Scan(source, table, old_files, *partial))
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
            scans.append(Scan(source, table, old_files, stats, reread=reread))
        return listing

    def _settler(
        self, change: Change, progress: list[int]
    ) -> Callable[[SourceDocument], SourceDocument]:
        """What the write keeps of each document it has written: its stored record, in place
        of the document in ``change.added`` (where the steps put it just before handing it
        on), so a build holds the text of the documents in flight only, not of every one."""
        fingerprint = self.index_fingerprint

        def settle(doc: SourceDocument) -> SourceDocument:
            # progress[1], the files this reconcile reads, is known before the first document.
            prime = progress[1] <= PRIME_AT_MOST
            kept = written(doc, fingerprint, self.cache, prime)
            added = change.added
            for i in range(len(added) - 1, -1, -1):  # the last, unless the steps moved on
                if added[i] is doc:
                    added[i] = kept
                    break
            return kept

        return settle

    def _finisher(
        self,
        base: Manifest | None,
        current: Snapshot | None,
        listing: Listing,
        tally: Tally,
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
                doc
                if isinstance(doc, StoredDocument)
                else written(doc, fingerprint, self.cache, prime)
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
        listing: Listing,
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
        manifest: Manifest, listing: Listing, changed_files: int, resumed: int, started: float
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

    def _scanned_ok(self, scans: list[Scan]) -> None:
        """The scanned sources match their roots now (their changes are served)."""
        now = time.time()
        for scan in scans:
            state = self.states[scan.source.name]
            state.state, state.last_error, state.last_scan_ok = "ready", "", now

    def _write_failed(
        self, exc: GenerationWriteError, scans: list[Scan], base: Manifest | None
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

    def _load_changed(
        self, scans: list[Scan], prepared: Prepared
    ) -> Iterator[tuple[tuple[str, str], SourceDocument | None]]:
        return load_changed(
            scans,
            prepared,
            states=self.states,
            sources=self.by_name,
            token_options=self.token_options,
            build_workers=self.settings.build_workers,
            fingerprint=self.extractors.fingerprint,
            load_plugins=self._load_plugins,
            stop=self._build_stopped,
        )

    def lines_of(self, doc: SourceDocument) -> list[str]:
        if isinstance(doc, StoredDocument):
            return doc.lines
        lines = self._lines.get(doc.content_hash)
        if lines is None:
            lines = split_lines(doc.text)
            self._lines[doc.content_hash] = lines
        return lines
