"""The local retrieval engine: the composition root of the services that answer the RPCs.

``LocalEngine`` wires the source catalog, the indexer (sources → generations → the served
snapshot), the watch over the roots, the search and fetch services over the provider chain,
and the corpus view composed calls read; it runs their lifecycle and hands each RPC to its
service.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from scriptorium import __version__, telemetry
from scriptorium.cancel import BuildCancelled, run_in_thread
from scriptorium.compose.flow import summarize_flow
from scriptorium.compose.guide import guide_implementation, guide_mode
from scriptorium.compose.related import expand_related
from scriptorium.compose.tables import CorpusTables
from scriptorium.compose.view import CorpusView
from scriptorium.content.fetch import FetchService, LocalContent
from scriptorium.content.resolve import Resolver
from scriptorium.domain.model import Corpus
from scriptorium.domain.outcomes import (
    ContentOutcome,
    ContentParams,
    CrawlReport,
    FlowOutcome,
    FlowParams,
    GuideOutcome,
    GuideParams,
    InvalidArgument,
    RelatedOutcome,
    RelatedParams,
    SearchOutcome,
    SearchParams,
    SourceReport,
)
from scriptorium.engine.base import Engine
from scriptorium.engine.upkeep import Upkeep
from scriptorium.engine.watching import Watch
from scriptorium.index import statedirs
from scriptorium.index.builder import Indexer
from scriptorium.index.generation import GenerationStore, writer_heap_bytes
from scriptorium.index.lifeline import refuse_in_helper_start
from scriptorium.limits import MAX_QUERY_CHARS
from scriptorium.plugins import Registry, load_registry
from scriptorium.ranking.paths import translated_root
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.ranking.ranker import Ranker
from scriptorium.ranking.rerank import reranker_for
from scriptorium.results.budget import check_budget, fit_flow, fit_guide, fit_related
from scriptorium.results.hits import HitBuilder
from scriptorium.retrieval.answer import Answerer
from scriptorium.retrieval.local import LocalCandidates
from scriptorium.retrieval.providers import LocalProvider, build_chain
from scriptorium.retrieval.search import SearchService
from scriptorium.semantic.service import semantic_for
from scriptorium.settings.config import default_state_dir
from scriptorium.settings.ranking import ranking_settings
from scriptorium.sources.base import Source
from scriptorium.sources.catalog import SourceCatalog
from scriptorium.sources.libraries import LibrarySource
from scriptorium.sources.remote import RemoteContext

if TYPE_CHECKING:
    from scriptorium.settings.config import Settings


log = logging.getLogger(__name__)


class LocalEngine(Engine):
    """An engine over locally indexed sources (Markdown trees, code trees) and remote ones."""

    def __init__(
        self, settings: Settings, registry: Registry, *, build_stop: threading.Event | None = None
    ) -> None:
        refuse_in_helper_start()
        self.settings = settings
        self.registry = registry
        self.catalog = SourceCatalog(settings, registry)
        self.ranking = ranking_settings(settings.ranking or {})
        state_dir = Path(
            settings.state_dir or default_state_dir([s.config for s in self.catalog.local])
        )
        store = GenerationStore(
            state_dir,
            read_only=settings.read_only,
            writer_heap=writer_heap_bytes(settings.build_memory_mb),
        )
        # Held while this engine lives: ``scriptorium state prune`` never removes the directory.
        self._state_claim = statedirs.claim(state_dir, settings)
        for remote in self.catalog.remote:
            remote.bind(RemoteContext(ranking=self.ranking, state_dir=state_dir))
        self.indexer = Indexer(
            self.catalog.local,
            store,
            settings,
            self.ranking.token_options(),
            registry.extractor_chain,
            make_resolver=Resolver,
            load_plugins=load_registry,
            build_stop=build_stop,
        )
        pipeline = Pipeline(self.ranking, self.indexer.lines_of)
        hits = HitBuilder(self.catalog, self.indexer)
        reranker = reranker_for(self.ranking, registry, self.indexer.lines_of)
        translations = translation_sources(self.catalog.local)
        ranker = Ranker(
            pipeline,
            registry,
            self.catalog.source_class,
            hits.location_of,
            reranker,
            translations=translations,
        )
        answers = Answerer(ranker, hits, self.catalog, self.indexer, self.ranking)
        self.semantic = semantic_for(
            self.ranking,
            state_dir,
            store.complete_generations,
            registry.embedder,
            unread_sources=translations,
        )
        if self.semantic is not None:
            self.indexer.on_served.append(self.semantic.builder.served)
        candidates = LocalCandidates(self.indexer, self.ranking, pipeline, self.semantic)
        content = LocalContent(self.catalog, self.indexer)
        self.chain = build_chain(
            self.catalog,
            settings,
            LocalProvider(candidates.batch, content.local_fetch),
            answers.answer,
        )
        self.searching = SearchService(
            self.catalog, registry, self.ranking, self.chain, candidates, answers
        )
        self.fetching = FetchService(self.catalog, content, self.chain)
        self.tables = CorpusTables()
        self.view = CorpusView(
            self.catalog, self.indexer, self.searching, hits, self.tables, translations
        )
        self._stopping = asyncio.Event()
        self.upkeep = Upkeep()
        self.watch = Watch(self.catalog.local, self.indexer, settings, self._stopping, self.upkeep)
        self._loading: asyncio.Future | None = None
        self._watch_task: asyncio.Task | None = None
        self._catch_up_task: asyncio.Task | None = None
        self._ready = False

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def current(self) -> bool:
        """True once the first build, the start-up catch-up or a later listing of every root
        has landed (see Engine)."""
        return self._ready and self.indexer.caught_up

    async def start(self) -> None:
        """Ready as soon as a generation serves; the roots are compared with it afterwards.

        With a valid generation on disk the daemon serves it at once and the start-up
        reconcile runs in the background (``_catch_up``), landing like any update; without
        one the first build runs here and the daemon is ready when it has landed.
        """
        if await self._shielded(self.indexer.open_newest):
            self._ready = True
            self._catch_up_task = asyncio.create_task(self._catch_up(), name="scriptorium-catch-up")
            return
        await self._shielded(self.indexer.reconcile)
        self._ready = True
        # After the server has said SERVING (the next turn of the loop).
        asyncio.get_running_loop().call_soon(self._begin_vectors)
        self._start_watch()

    def _begin_vectors(self) -> None:
        """Once serving, the semantic retriever may load its encoder and make vectors."""
        if self.semantic is not None:
            self.semantic.builder.begin()

    async def _shielded(self, work):
        """``work`` in a thread, shielded from cancellation: a cancelled task cannot stop the
        worker thread, so ``stop`` cancels the build itself and waits for it to end."""
        loading = self._loading = asyncio.ensure_future(self.upkeep.run(work))
        try:
            return await asyncio.shield(loading)
        finally:
            if loading.done():  # its outcome reached the caller; stop has nothing to wait for
                self._loading = None

    async def _catch_up(self) -> None:
        """The start-up reconcile after serving, then the watch (which follows its listing)."""
        try:
            await self.upkeep.run(self.indexer.catch_up)
        except BuildCancelled:
            return  # a shutdown; reconcile has said so
        except Exception as exc:
            # Reported per source too (ListSources); the served generation keeps serving.
            log.error("catching up with disk failed, the served generation keeps serving: %s", exc)
        if not self._stopping.is_set():
            self._start_watch()
            self._begin_vectors()  # for the generation the catch-up left serving

    def _start_watch(self) -> None:
        if self.indexer.store.read_only:
            if self.settings.watch:
                log.info("read-only state directory: the roots are not watched")
            return
        if self.settings.watch:
            self._watch_task = asyncio.create_task(self.watch.run(), name="scriptorium-watch")

    async def stop(self) -> None:
        self._stopping.set()
        self.indexer.cancel_builds()
        if self.semantic is not None:
            self.semantic.builder.stop()
        if self._catch_up_task is not None:
            # Not cancelled: its thread ends at the build's next checkpoint, then the task.
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._catch_up_task
        if self._watch_task is not None:
            self._watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch_task
        await self._builds_ended()
        self.upkeep.close()
        self.indexer.store.release()
        await self.chain.aclose()

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
        await self.upkeep.run(self.indexer.wait_for_writer)

    # -- the RPCs ------------------------------------------------------------------------------

    async def search(self, params: SearchParams) -> SearchOutcome:
        return await self.searching.search(params)

    async def get_content(self, params: ContentParams) -> ContentOutcome:
        return await self.fetching.get_content(params)

    async def expand_related(self, params: RelatedParams) -> RelatedOutcome:
        if not params.ref_ids:
            raise InvalidArgument("at least one ref_id is required")
        check_budget(params.token_budget)
        self.searching.check_mode_and_sources(params.mode, params.sources)
        outcome = await run_in_thread(
            expand_related,
            self.view,
            list(params.ref_ids),
            params.top_k,
            tuple(params.kinds),
            params.mode,
            tuple(params.sources),
        )
        outcome.tokens_used = fit_related(outcome.related, params.token_budget)
        outcome.trace_id = telemetry.current_trace_id()
        return outcome

    async def summarize_flow(self, params: FlowParams) -> FlowOutcome:
        if len(params.topic) > MAX_QUERY_CHARS:
            raise InvalidArgument(f"topic is longer than {MAX_QUERY_CHARS} characters")
        check_budget(params.token_budget)
        outcome = await run_in_thread(
            summarize_flow,
            self.view,
            list(params.ref_ids),
            params.topic,
            params.style,
            params.max_steps,
        )
        outcome.tokens_used = fit_flow(outcome.flow, params.token_budget)
        outcome.trace_id = telemetry.current_trace_id()
        return outcome

    async def guide_implementation(self, params: GuideParams) -> GuideOutcome:
        mode = guide_mode(self.registry.modes)
        check_budget(params.token_budget)
        self.searching.check_mode_and_sources(mode, params.sources)
        outcome = await run_in_thread(
            guide_implementation,
            self.view,
            params.topic,
            params.framework,
            params.language,
            params.max_docs,
            params.max_samples,
            params.style,
            tuple(params.sources),
            mode,
        )
        outcome.tokens_used = fit_guide(outcome, params.token_budget)
        return outcome

    # -- status --------------------------------------------------------------------------------

    def unserviceable(self) -> str | None:
        """Every local source failed (no root on disk and no index holding it, or a first build
        that could not be written) and no remote source can answer instead."""
        local, states = self.catalog.local, self.indexer.states
        if self.catalog.remote or not local:
            return None  # a remote source's failures are per call and retried: not counted
        failed = [s for s in local if states[s.name].state == "failed"]
        if len(failed) < len(local):
            return None
        return "every source failed: " + "; ".join(
            f"{s.name} ({s.config.root}): {states[s.name].last_error or 'failed'}" for s in failed
        )

    def list_sources(self) -> list[SourceReport]:
        """Every configured source in configuration order, local and remote alike."""
        local = {r.name: r for r in self._local_reports()}
        remote = {s.name: s.report() for s in self.catalog.remote}
        names = [c.name for c in self.settings.sources]
        return [local.get(n) or remote[n] for n in names if n in local or n in remote]

    def _local_reports(self) -> list[SourceReport]:
        snapshot = self.indexer.current
        reports = []
        for source in self.catalog.local:
            state = self.indexer.states[source.name]
            entry = snapshot.manifest.sources.get(source.name) if snapshot else None
            # Counted without decoding the file table (a start serves before it is decoded).
            blocks, size = entry.totals() if entry is not None else (0, 0)
            staleness = time.time() - state.last_scan_ok if state.last_scan_ok else 0.0
            crawl = _crawl(source)
            # A half-fetched site says so where every client already looks.
            unfinished = crawl.detail if crawl and crawl.state in ("partial", "failed") else ""
            reports.append(
                SourceReport(
                    name=source.name,
                    kind=source.config.kind,
                    state=state.state,
                    document_count=len(entry) if entry is not None else 0,
                    block_count=blocks,
                    generation=snapshot.generation if snapshot else 0,
                    indexed_at=datetime.fromtimestamp(state.indexed_at, UTC)
                    if state.indexed_at
                    else None,
                    last_error=state.last_error or unfinished,
                    source_class=source.source_class,
                    root=str(source.config.root or ""),
                    bytes=size,
                    corpus=source.corpus,
                    staleness_seconds=round(staleness, 3),
                    build_files_total=state.build_files_total,
                    build_files_done=state.build_files_done,
                    skipped=_skipped(source),
                    crawl=crawl,
                    detail=source.detail() if isinstance(source, LibrarySource) else "",
                    libraries=source.libraries() if isinstance(source, LibrarySource) else [],
                    **self._vector_fields(source.name),
                )
            )
        return reports

    def _vector_fields(self, name: str) -> dict[str, object]:
        """What ListSources says of a source's vectors (the semantic retriever)."""
        if self.semantic is None:
            return {"vectors_state": "off", "vectors_detail": "semantic = false"}
        state, done, total, detail = self.semantic.builder.source_status(name)
        return {
            "vectors_state": state,
            "vectors_done": done,
            "vectors_total": total,
            "vectors_detail": detail,
        }

    @property
    def version(self) -> str:
        return __version__


def translation_sources(sources: list[Source]) -> frozenset[str]:
    """The documentation sources whose root is a translation's folder (one source per
    language, ``docs/ja/docs``): the translation prior weighs their pages for an English query
    as it weighs pages under a language's folder."""
    return frozenset(
        source.name
        for source in sources
        if source.corpus is Corpus.DOCS
        and isinstance(getattr(source, "root", None), Path)
        and translated_root(source.root)
    )


def _skipped(source: object) -> dict[str, int]:
    """The files a local tree's last listing left out, per rule (none for other kinds)."""
    counts = getattr(source, "skipped_counts", None)
    return counts() if callable(counts) else {}


def _crawl(source: object) -> CrawlReport | None:
    """What the last crawl of a fetched site did (None for kinds that do not crawl)."""
    report = getattr(source, "crawl_report", None)
    return report() if callable(report) else None


def build_index(
    settings: Settings, registry: Registry, *, stop: threading.Event | None = None
) -> dict:
    """Build (or bring up to date) the index generation for ``settings`` without serving.

    Setting ``stop`` cancels the build (``BuildCancelled``; what it had indexed is kept as a
    partial generation the next build continues from, ``index/resume.py``).
    """
    engine = LocalEngine(settings, registry, build_stop=stop)
    engine.indexer.serves = False
    try:
        summary = engine.indexer.load_or_build()
    finally:
        engine.indexer.store.release()  # it serves nothing: its lease would only linger
    snapshot = engine.indexer.snapshot
    return {
        "generation": snapshot.generation,
        "state_dir": str(engine.indexer.store.state_dir),
        "documents": snapshot.manifest.document_count,
        "blocks": snapshot.manifest.block_count,
        "changed": summary.changed if summary else 0,
        "seconds": round(summary.seconds, 3) if summary else 0.0,
        "sources": {
            r.name: {"state": r.state, "documents": r.document_count} for r in engine.list_sources()
        },
    }
