"""The local retrieval engine: sources → generations → snapshot → answers.

``LocalEngine`` owns the configured sources, keeps the newest index generation loaded as an
immutable ``Snapshot``, watches source roots for changes (each change lands as a new generation
that is swapped in whole) and answers the RPCs through the ranking pipeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cachetools import LRUCache

from scriptorium import __version__, telemetry
from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.cancel import BuildCancelled, run_in_thread
from scriptorium.compose.flow import summarize_flow
from scriptorium.compose.guide import guide_implementation
from scriptorium.compose.related import expand_related, folder_of, includes_in
from scriptorium.compose.seeds import load_seeds
from scriptorium.content.fetch import FetchMixin
from scriptorium.content.resolve import Resolver
from scriptorium.domain.model import Candidate, Corpus, Query, RefKind, SourceDocument
from scriptorium.domain.outcomes import (
    FlowOutcome,
    GuideOutcome,
    InvalidArgument,
    RelatedOutcome,
    SearchHit,
    SearchParams,
    SourceReport,
    Unavailable,
)
from scriptorium.engine.base import Engine
from scriptorium.index import statedirs
from scriptorium.index.builder import IndexingMixin, SourceState
from scriptorium.index.catalog import Snapshot
from scriptorium.index.generation import (
    GenerationStore,
    GenerationWriteError,
)
from scriptorium.index.searcher import FieldWeights
from scriptorium.limits import MAX_QUERY_CHARS
from scriptorium.plugins import Registry
from scriptorium.ranking.pipeline import RANKING_KEYS, Pipeline, RankingSettings
from scriptorium.retrieval.providers import ProviderChain, build_chain
from scriptorium.retrieval.search import SearchMixin
from scriptorium.settings.config import ConfigError, default_state_dir
from scriptorium.settings.schema import check_table
from scriptorium.sources.base import LocalTreeSource, Source, SourceContext
from scriptorium.sources.remote import RemoteContext, RemoteSource
from scriptorium.sources.watcher import (
    EventsUnavailable,
    RootMap,
    WatchedPathGone,
    WatchedRoot,
    event_batches,
    root_identity,
)
from scriptorium.text import (
    TOKENIZER_VERSION,
    collapse_whitespace,
)

log = logging.getLogger(__name__)

# A batch of at least this many changed paths is followed by a full listing instead.
LIST_AFTER_EVENTS = 2_000


class LocalEngine(IndexingMixin, SearchMixin, FetchMixin, Engine):
    """An engine over locally indexed sources (Markdown trees, code trees)."""

    def __init__(
        self, settings: Any, registry: Registry, *, build_stop: threading.Event | None = None
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.extractors: ExtractorChain = registry.extractor_chain
        context = SourceContext(extractors=self.extractors)
        # Locally indexed sources live in ``sources``; remote ones answer at request time.
        self.sources: list[Source] = []
        self.remote_sources: list[RemoteSource] = []
        for config in settings.sources:
            factory = registry.source_factory(config.kind)
            try:
                source = factory(config, context)
            except ConfigError:
                raise
            except ValueError as exc:  # a plugin refusing its settings: say so, no traceback
                raise ConfigError(str(exc)) from exc
            if isinstance(source, RemoteSource):
                self.remote_sources.append(source)
            else:
                self.sources.append(source)
        self.by_name = {s.name: s for s in self.sources}
        self.remote_by_name = {s.name: s for s in self.remote_sources}
        self.ranking = ranking_settings(getattr(settings, "ranking", None) or {})
        state_dir = settings.state_dir or default_state_dir([s.config for s in self.sources])
        self.store = GenerationStore(Path(state_dir))
        # Held while this engine lives: ``scriptorium state prune`` never removes the directory.
        self._state_claim = statedirs.claim(Path(state_dir), settings)
        for remote in self.remote_sources:
            remote.bind(RemoteContext(ranking=self.ranking, state_dir=Path(state_dir)))
        self.providers: ProviderChain | None = build_chain(self, settings)
        self.states = {s.name: SourceState() for s in self.sources}
        self._snapshot: Snapshot | None = None
        self._resolver: Resolver | None = None
        self._write_lock = threading.Lock()
        # Set once, to stop building for good (a shutdown): see cancel_builds.
        self._build_stop = build_stop or threading.Event()
        self._loading: asyncio.Future | None = None
        self._lines: LRUCache = LRUCache(maxsize=4096)
        # Four tables per generation (symbols, includers, code suffixes and folders): room for
        # the served generation and the one before it.
        self._derived: LRUCache = LRUCache(maxsize=8)
        # (source, path, content hash) of a page -> the code files it includes.
        self._includes: dict[tuple[str, str, str], tuple[str, ...]] = {}
        self._watch_task: asyncio.Task | None = None
        self._walked_cache: tuple[tuple[frozenset[str], ...], frozenset[str]] | None = None
        self._ready = False
        self._stopping = asyncio.Event()
        self.pipeline = Pipeline(self.ranking, self.lines_of)
        # Everything that changes what is indexed: extractors, tokenizer rules, stemming.
        self.index_fingerprint = (
            f"{self.extractors.fingerprint};tokenizer={TOKENIZER_VERSION};"
            + ",".join(f"{k}={v}" for k, v in sorted(self.ranking.token_options().items()))
        )

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            raise Unavailable("sources are still loading")
        return self._snapshot

    async def start(self) -> None:
        # A cancelled task cannot stop the worker thread the build runs in: the build is
        # shielded from it, and ``stop`` cancels the build itself and waits for it to end.
        loading = self._loading = asyncio.ensure_future(asyncio.to_thread(self.load_or_build))
        try:
            await asyncio.shield(loading)
        finally:
            if loading.done():  # its outcome reached the caller; stop has nothing to wait for
                self._loading = None
        self._ready = True
        if getattr(self.settings, "watch", True):
            self._watch_task = asyncio.create_task(self._watch_loop(), name="scriptorium-watch")

    async def stop(self) -> None:
        self._stopping.set()
        self.cancel_builds()
        if self._watch_task is not None:
            self._watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch_task
        await self._builds_ended()
        if self.providers is not None:
            await self.providers.aclose()

    async def _builds_ended(self) -> None:
        """Wait until no build runs: the first one (cancelled or not) and any update."""
        loading, self._loading = self._loading, None
        if loading is not None:  # start was interrupted while it ran
            try:
                await loading
            except BuildCancelled:
                pass  # reconcile has said so
            except Exception as exc:
                log.error("index build failed: %s", exc)
        # An update the watcher started is in a thread too; it holds the write lock.
        await asyncio.to_thread(self._wait_for_writer)

    def _wait_for_writer(self) -> None:
        with self._write_lock:
            pass

    async def _watch_loop(self) -> None:
        if getattr(self.settings, "watch_mode", "events") == "events":
            try:
                await self._watch_events()
                return
            except EventsUnavailable as exc:
                log.warning(
                    "file-system events unavailable (%s); listing the roots every %.1fs instead",
                    exc,
                    self._watch_interval(),
                )
        await self._poll_loop()

    def _watch_interval(self) -> float:
        return float(getattr(self.settings, "watch_interval", 0.5) or 0.5)

    async def _poll_loop(self) -> None:
        """List every root on every tick (the fallback, and ``watch_mode = "poll"``)."""
        interval = self._watch_interval()
        while not self._stopping.is_set():
            await asyncio.sleep(interval)
            await self._refresh(None)

    async def _refresh(self, changed: dict[str, set[str]] | None) -> None:
        try:
            await asyncio.to_thread(self.reconcile, changed)
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
        rescan = float(getattr(self.settings, "rescan_interval", 300.0))
        first_watch = True
        while not self._stopping.is_set():
            roots = self._watched_roots()
            if not roots:
                await asyncio.sleep(self._watch_interval())
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
                await asyncio.sleep(self._watch_interval())
                await self._refresh(None)
                continue
            except EventsUnavailable:
                if first_watch:
                    raise
                log.warning("could not watch the roots again; retrying", exc_info=True)
                await asyncio.sleep(self._watch_interval())
            except Exception:
                log.warning("file-system watch failed; watching again", exc_info=True)
                await asyncio.sleep(self._watch_interval())
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
            state = self.states.get(root.source)
            if state is not None and state.state == "ready":
                state.last_scan_ok = now

    # -- composing calls -----------------------------------------------------------------------

    async def expand_related(
        self,
        ref_ids: list[str],
        top_k: int = 0,
        kinds: tuple[Corpus, ...] = (),
        mode: str = "",
        sources: tuple[str, ...] = (),
    ) -> RelatedOutcome:
        if not ref_ids:
            raise InvalidArgument("at least one ref_id is required")
        self._check_mode_and_sources(mode, sources)
        outcome = await run_in_thread(
            expand_related, self, list(ref_ids), top_k, tuple(kinds), mode, tuple(sources)
        )
        outcome.trace_id = telemetry.current_trace_id()
        return outcome

    async def summarize_flow(
        self, ref_ids: list[str], topic: str = "", style: str = "", max_steps: int = 0
    ) -> FlowOutcome:
        if len(topic) > MAX_QUERY_CHARS:
            raise InvalidArgument(f"topic is longer than {MAX_QUERY_CHARS} characters")
        outcome = await run_in_thread(summarize_flow, self, list(ref_ids), topic, style, max_steps)
        outcome.trace_id = telemetry.current_trace_id()
        return outcome

    async def guide_implementation(
        self,
        topic: str,
        framework: str = "",
        language: str = "",
        max_docs: int = 0,
        max_samples: int = 0,
        style: str = "",
        sources: tuple[str, ...] = (),
    ) -> GuideOutcome:
        self._check_mode_and_sources("implementation", sources)
        return await run_in_thread(
            guide_implementation,
            self,
            topic,
            framework,
            language,
            max_docs,
            max_samples,
            style,
            tuple(sources),
        )

    def _check_mode_and_sources(self, mode: str, sources: tuple[str, ...]) -> None:
        self.make_query(SearchParams(query="", mode=mode, sources=tuple(sources)))

    def make_query_from(
        self, text: str, *, top_k: int = 10, mode: str = "", sources=(), kinds=()
    ) -> Query:
        return self.make_query(
            SearchParams(
                query=text, top_k=top_k, mode=mode, sources=tuple(sources), kinds=tuple(kinds)
            )
        )

    def hits_for_refs(self, query: Query, ref_ids: list[str]) -> list[SearchHit]:
        """Search-hit shaped results for refs (scores left at zero: they were not searched)."""
        seeds, _ = load_seeds(self.snapshot, ref_ids, self.lines_of)
        hits = []
        for seed in seeds:
            doc = seed.doc
            block = seed.block or (doc.blocks[0] if doc.blocks else None)
            if block is None:
                continue
            cand = Candidate(seed.doc.source, doc, block, 0.0)
            if block.kind is RefKind.CODE:
                cand.anchor_line = seed.ref.line or block.start_line
            cand.location = self.location_of(cand)
            hits.append(self._hit(query, cand))
        return hits

    def topic_seeds(self, topic: str) -> list:
        """Seeds for a topic when a flow has no usable refs: the best doc, then the best code."""
        query = self.make_query_from(topic, top_k=5)
        outcome = self.search_query(query)
        picked = [h.ref_id for h in outcome.hits if h.kind is RefKind.DOC][:1]
        picked += [h.ref_id for h in outcome.hits if h.kind is not RefKind.DOC][:1]
        seeds, _ = load_seeds(self.snapshot, picked, self.lines_of)
        return seeds

    def symbols(self, snapshot: Snapshot) -> dict[str, list[tuple[SourceDocument, int]]]:
        """Definition name → blocks defining it, for import resolution (cached per generation)."""
        cached = self._derived.get(("symbols", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    for index, block in enumerate(doc.blocks):
                        if block.symbol:
                            cached[block.symbol].append((doc, index))
            self._derived[("symbols", snapshot.generation)] = cached
        return cached

    def code_by_suffix(self, snapshot: Snapshot) -> dict[str, list[SourceDocument]]:
        """Every trailing run of path segments of every code file, lower-cased → the files
        (in snapshot order), so finding the files a path ends with is one lookup (cached)."""
        cached = self._derived.get(("code-suffixes", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    parts = doc.path.lower().split("/")
                    for i in range(len(parts)):
                        cached["/".join(parts[i:])].append(doc)
            self._derived[("code-suffixes", snapshot.generation)] = cached
        return cached

    def code_by_folder(self, snapshot: Snapshot) -> dict[tuple[str, str], list[SourceDocument]]:
        """(source, folder) → the code files directly in it, in snapshot order (cached)."""
        cached = self._derived.get(("code-folders", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    cached[(doc.source, folder_of(doc.path))].append(doc)
            self._derived[("code-folders", snapshot.generation)] = cached
        return cached

    def includers(self, snapshot: Snapshot) -> dict[str, list[SourceDocument]]:
        """Code path → documents that include it with an include directive (cached)."""
        cached = self._derived.get(("includers", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            # Every trailing run of path segments of every code file: an include written as
            # "../../docs_src/app/main.py" (normalised to "docs_src/app/main.py") finds
            # "docs_src/app/main.py" and "examples/docs_src/app/main.py" in one lookup.
            by_suffix: dict[str, list[str]] = defaultdict(list)
            for doc in snapshot.docs.values():
                if doc.corpus is Corpus.CODE:
                    parts = doc.path.split("/")
                    for i in range(len(parts)):
                        by_suffix["/".join(parts[i:])].append(doc.path)
            # What each page includes is kept across generations (keyed by its content), so
            # after an update only the changed pages are scanned again.
            previous, seen = self._includes, {}
            for doc in snapshot.docs.values():
                if doc.corpus is not Corpus.DOCS:
                    continue
                key = (doc.source, doc.path, doc.content_hash)
                tails = previous.get(key)
                if tails is None:
                    tails = tuple(includes_in(doc.text))
                seen[key] = tails
                for tail in tails:
                    for path in by_suffix.get(tail, ()):
                        cached[path].append(doc)
            self._includes = seen
            self._derived[("includers", snapshot.generation)] = cached
        return cached

    # -- status --------------------------------------------------------------------------------

    def unserviceable(self) -> str | None:
        """Every local source failed (no root on disk and no index holding it, or a first build
        that could not be written) and no remote source can answer instead."""
        if self.remote_sources or not self.sources:
            return None  # a remote source's failures are per call and retried: not counted
        failed = [s for s in self.sources if self.states[s.name].state == "failed"]
        if len(failed) < len(self.sources):
            return None
        return "every source failed: " + "; ".join(
            f"{s.name} ({s.config.root}): {self.states[s.name].last_error or 'failed'}"
            for s in failed
        )

    def list_sources(self) -> list[SourceReport]:
        """Every configured source in configuration order, local and remote alike."""
        local = {r.name: r for r in self._local_reports()}
        remote = {s.name: s.report() for s in self.remote_sources}
        names = [c.name for c in self.settings.sources]
        return [local.get(n) or remote[n] for n in names if n in local or n in remote]

    def _local_reports(self) -> list[SourceReport]:
        snapshot = self._snapshot
        reports = []
        for source in self.sources:
            state = self.states[source.name]
            entry = snapshot.manifest.sources.get(source.name) if snapshot else None
            files = entry.files if entry else {}
            staleness = time.time() - state.last_scan_ok if state.last_scan_ok else 0.0
            reports.append(
                SourceReport(
                    name=source.name,
                    kind=source.config.kind,
                    state=state.state,
                    document_count=len(files),
                    block_count=sum(f.blocks for f in files.values()),
                    generation=snapshot.generation if snapshot else 0,
                    indexed_at=datetime.fromtimestamp(state.indexed_at, UTC)
                    if state.indexed_at
                    else None,
                    last_error=state.last_error,
                    source_class=source.source_class,
                    root=str(source.config.root or ""),
                    bytes=sum(f.size for f in files.values()),
                    corpus=source.corpus,
                    staleness_seconds=round(staleness, 3),
                    build_files_total=state.build_files_total,
                    build_files_done=state.build_files_done,
                )
            )
        return reports

    @property
    def version(self) -> str:
        return __version__


def ranking_settings(raw: dict) -> RankingSettings:
    """Ranking levers from the ``[ranking]`` configuration table (used by measurement runs)."""
    if not raw:
        return RankingSettings()
    check_table(raw, RANKING_KEYS, "[ranking]")
    fields = dict(raw)
    defaults = FieldWeights()
    weights = FieldWeights(
        body=float(fields.pop("body_weight", defaults.body)),
        heading=float(fields.pop("heading_weight", defaults.heading)),
        path=float(fields.pop("path_weight", defaults.path)),
    )
    classes = fields.pop("class_weights", None)
    settings = RankingSettings(weights=weights, **fields)
    if classes:
        merged = {**settings.class_weights, **{k: float(v) for k, v in classes.items()}}
        settings = dataclasses.replace(settings, class_weights=merged)
    return settings


def create_engine(settings: Any, registry: Registry) -> LocalEngine:
    return LocalEngine(settings, registry)


def build_index(settings: Any, registry: Registry, *, stop: threading.Event | None = None) -> dict:
    """Build (or bring up to date) the index generation for ``settings`` without serving.

    Setting ``stop`` cancels the build (``BuildCancelled``; nothing it wrote is kept).
    """
    engine = LocalEngine(settings, registry, build_stop=stop)
    summary = engine.load_or_build()
    snapshot = engine.snapshot
    return {
        "generation": snapshot.generation,
        "state_dir": str(engine.store.state_dir),
        "documents": snapshot.manifest.document_count,
        "blocks": snapshot.manifest.block_count,
        "changed": summary.changed if summary else 0,
        "seconds": round(summary.seconds, 3) if summary else 0.0,
        "sources": {
            r.name: {"state": r.state, "documents": r.document_count} for r in engine.list_sources()
        },
    }


def collapse(text: str) -> str:
    return collapse_whitespace(text)
