"""The local retrieval engine: sources → generations → snapshot → answers.

``LocalEngine`` owns the configured sources, keeps the newest index generation loaded as an
immutable ``Snapshot``, watches source roots for changes (each change lands as a new generation
that is swapped in whole) and answers the RPCs through the ranking pipeline.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import secrets
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cachetools import LRUCache

from scriptorium import __version__
from scriptorium.content import (
    clamp_max_lines,
    cut_code,
    cut_doc,
    cut_file,
    find_doc_block,
)
from scriptorium.compose.flow import summarize_flow
from scriptorium.compose.guide import guide_implementation
from scriptorium.compose.related import expand_related, includes_in
from scriptorium.compose.seeds import load_seeds
from scriptorium.engine import Engine
from scriptorium.extractors import ExtractorChain
from scriptorium.index.catalog import Snapshot
from scriptorium.index.generation import (
    Change,
    CorruptGenerationError,
    FileEntry,
    GenerationStore,
    Manifest,
    SourceEntry,
)
from scriptorium.index.schema import SCHEMA_VERSION
from scriptorium.index.searcher import FieldWeights, lexical_search
from scriptorium.index.store import CorruptBlobError, blob_name
from scriptorium.model import Block, Candidate, Corpus, Query, RefKind, SourceDocument
from scriptorium.plugins import PluginError, Registry
from scriptorium.ranking.pipeline import Pipeline, RankingSettings, coverage
from scriptorium.refs import Ref, decode_ref
from scriptorium.resolve import Resolver, parse_line_anchor
from scriptorium.results import (
    Conflict,
    ContentOutcome,
    ContentParams,
    FailedPrecondition,
    FlowOutcome,
    GuideOutcome,
    InvalidArgument,
    NotFound,
    RelatedOutcome,
    Resolution,
    SearchHit,
    SearchOutcome,
    SearchParams,
    SourceReport,
    StageReport,
    Unavailable,
    UnderstoodQuery,
)
from scriptorium.sources import LocalTreeSource, PathEscapeError, Source, SourceContext
from scriptorium.text import (
    TOKENIZER_VERSION,
    code_snippet,
    collapse_whitespace,
    doc_snippet,
    estimate_tokens,
    preview,
    query_terms,
    tokenize,
    trim_to_tokens,
)

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 8192
TOP_K_DEFAULT, TOP_K_MAX = 10, 25
SNIPPET_DEFAULT, SNIPPET_MAX = 8, 40
KEEP_GENERATIONS = 3


@dataclass(slots=True)
class SourceState:
    state: str = "loading"
    last_error: str = ""
    indexed_at: float | None = None
    last_scan_ok: float | None = None


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


def source_fingerprint(source: Source) -> str:
    cfg = source.config
    payload = json.dumps(
        [cfg.kind, str(cfg.root), sorted(cfg.options.items(), key=lambda kv: kv[0])],
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def doc_version(doc: SourceDocument) -> str:
    return doc.content_hash[:16]


class LocalEngine(Engine):
    """An engine over locally indexed sources (Markdown trees, code trees)."""

    def __init__(self, settings: Any, registry: Registry) -> None:
        self.settings = settings
        self.registry = registry
        self.extractors: ExtractorChain = registry.extractor_chain
        context = SourceContext(extractors=self.extractors)
        self.sources: list[Source] = []
        for config in settings.sources:
            factory = registry.source_factory(config.kind)
            self.sources.append(factory(config, context))
        self.by_name = {s.name: s for s in self.sources}
        self.ranking = ranking_settings(getattr(settings, "ranking", None) or {})
        state_dir = settings.state_dir or default_state_dir(self.sources)
        self.store = GenerationStore(Path(state_dir))
        self.states = {s.name: SourceState() for s in self.sources}
        self._snapshot: Snapshot | None = None
        self._resolver: Resolver | None = None
        self._write_lock = threading.Lock()
        self._lines: LRUCache = LRUCache(maxsize=4096)
        self._derived: LRUCache = LRUCache(maxsize=8)
        self._watch_task: asyncio.Task | None = None
        self._ready = False
        self._stopping = asyncio.Event()
        self.pipeline = Pipeline(self.ranking, self.lines_of)
        # Everything that changes what is indexed: extractors, tokenizer rules, stemming.
        self.index_fingerprint = (
            f"{self.extractors.fingerprint};tokenizer={TOKENIZER_VERSION};stem={self.ranking.stem}"
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
        await asyncio.to_thread(self.load_or_build)
        self._ready = True
        if getattr(self.settings, "watch", True):
            self._watch_task = asyncio.create_task(self._watch_loop(), name="scriptorium-watch")

    async def stop(self) -> None:
        self._stopping.set()
        if self._watch_task is not None:
            self._watch_task.cancel()
            try:
                await self._watch_task
            except (asyncio.CancelledError, Exception):
                pass

    async def _watch_loop(self) -> None:
        interval = float(getattr(self.settings, "watch_interval", 0.5) or 0.5)
        while not self._stopping.is_set():
            await asyncio.sleep(interval)
            try:
                await asyncio.to_thread(self.reconcile)
            except Exception:  # the watcher must never die; the error is reported per source
                log.exception("index refresh failed")

    # -- index management ----------------------------------------------------------------------

    def load_or_build(self) -> BuildSummary | None:
        """Serve the newest valid generation (refusing corrupt ones), then catch up with disk."""
        self.store.cleanup_partials()
        for generation in self.store.complete_generations():
            try:
                manifest = self.store.load_manifest(generation)
                if not self._compatible(manifest):
                    log.info("generation %d was built by another index format; skipping", generation)
                    continue
                self._swap(Snapshot.load(self.store, manifest, None))
                log.info("serving index generation %d", generation)
                break
            except (CorruptGenerationError, CorruptBlobError, ValueError, OSError) as exc:
                log.error("refusing index generation %d: %s", generation, exc)
        return self.reconcile()

    def _compatible(self, manifest: Manifest) -> bool:
        return (
            manifest.schema_version == SCHEMA_VERSION
            and manifest.extractors == self.index_fingerprint
        )

    def reconcile(self) -> BuildSummary | None:
        """Bring the index in line with the source roots; a new generation only if needed."""
        with self._write_lock:
            started = time.perf_counter()
            current = self._snapshot
            base = current.manifest if current else None
            change = Change()
            tables: dict[str, SourceEntry] = {}
            changed_files = 0
            metadata_changed = False
            for source in self.sources:
                state = self.states[source.name]
                previous = base.sources.get(source.name) if base else None
                fingerprint = source_fingerprint(source)
                if previous is not None and previous.fingerprint != fingerprint:
                    change.removed += [(source.name, p) for p in previous.files]
                    previous = None
                old_files = previous.files if previous else {}
                table = SourceEntry(source.config.kind, str(source.config.root), fingerprint)
                if not isinstance(source, LocalTreeSource) or not source.root.is_dir():
                    # Snapshot mode: the tree is not on disk; serve what the generation holds.
                    table.files = dict(old_files)
                    tables[source.name] = table
                    if old_files:
                        state.state = "ready" if not isinstance(source, LocalTreeSource) else "stale"
                        state.last_error = "" if state.state == "ready" else "root not on disk; serving the indexed snapshot"
                    else:
                        state.state = "failed"
                        state.last_error = "source root does not exist and no index holds it"
                    continue
                try:
                    stats = source.list_files()
                except OSError as exc:
                    state.state, state.last_error = "stale", f"cannot list files: {exc.strerror}"
                    table.files = dict(old_files)
                    tables[source.name] = table
                    continue
                seen = set()
                for stat in stats:
                    seen.add(stat.path)
                    entry = old_files.get(stat.path)
                    if entry is not None and entry.size == stat.size and entry.mtime_ns == stat.mtime_ns:
                        table.files[stat.path] = entry
                        continue
                    try:
                        doc = source.load(stat.path)
                    except (OSError, PathEscapeError):
                        doc = None
                    if doc is None:
                        if entry is not None:
                            change.removed.append((source.name, stat.path))
                        continue
                    if entry is not None and entry.hash == doc.content_hash:
                        metadata_changed = True
                        table.files[stat.path] = FileEntry(
                            entry.hash, stat.size, stat.mtime_ns, entry.blob, entry.blocks
                        )
                        continue
                    if entry is not None:
                        change.removed.append((source.name, stat.path))
                    change.added.append(doc)
                    changed_files += 1
                    table.files[stat.path] = FileEntry(
                        doc.content_hash,
                        stat.size,
                        stat.mtime_ns,
                        blob_name(doc, self.index_fingerprint),
                        len(doc.blocks),
                    )
                for path in old_files:
                    if path not in seen:
                        change.removed.append((source.name, path))
                tables[source.name] = table
                state.state = "ready"
                state.last_error = ""
                state.last_scan_ok = time.time()
            if base is not None:
                for name, entry in base.sources.items():
                    if name not in tables:
                        change.removed += [(name, p) for p in entry.files]
            if base is not None:
                metadata_changed |= set(tables) != set(base.sources) or any(
                    tables[n].fingerprint != base.sources[n].fingerprint
                    for n in tables
                    if n in base.sources
                )
            if current is not None and not (change.added or change.removed or metadata_changed):
                return None
            manifest = self.store.write(
                parent=base,
                change=change,
                sources=tables,
                extractors=self.index_fingerprint,
                tokens_for=self.tokens_for,
            )
            self._swap(Snapshot.load(self.store, manifest, current))
            now = time.time()
            for source in self.sources:
                if self.states[source.name].state in ("ready", "stale"):
                    self.states[source.name].indexed_at = now
            self.store.prune(KEEP_GENERATIONS, in_use=[manifest.generation])
            summary = BuildSummary(
                generation=manifest.generation,
                documents=manifest.document_count,
                blocks=manifest.block_count,
                bytes=sum(f.size for s in tables.values() for f in s.files.values()),
                changed=changed_files,
                removed=len(change.removed),
                seconds=time.perf_counter() - started,
                files={n: len(t.files) for n, t in tables.items()},
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
            return summary

    def _swap(self, snapshot: Snapshot) -> None:
        resolver = Resolver(self.sources, snapshot)
        # One reference assignment each: readers see the old pair or the new pair.
        self._snapshot, self._resolver = snapshot, resolver

    def tokens_for(self, doc: SourceDocument, block: Block) -> tuple[str, str, str]:
        stem = self.ranking.stem
        body = " ".join(tokenize(block.body, stem=stem))
        heading_text = " ".join(block.section_path)
        if block.symbol:
            heading_text += " " + block.symbol
        heading = " ".join(tokenize(heading_text, stem=stem))
        source = self.by_name.get(doc.source)
        page = source.page_location(doc.path) if source else doc.path
        path = " ".join(tokenize(f"{page} {doc.meta.title or ''}", stem=stem))
        return body, heading, path

    def lines_of(self, doc: SourceDocument) -> list[str]:
        lines = self._lines.get(doc.content_hash)
        if lines is None:
            lines = doc.text.splitlines()
            self._lines[doc.content_hash] = lines
        return lines

    # -- search --------------------------------------------------------------------------------

    def make_query(self, params: SearchParams) -> Query:
        text = params.query or ""
        if len(text) > MAX_QUERY_CHARS:
            raise InvalidArgument(f"query is longer than {MAX_QUERY_CHARS} characters")
        text = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in text)
        mode_name = params.mode or "default"
        try:
            self.registry.mode(mode_name)
        except PluginError as exc:
            raise InvalidArgument(str(exc)) from None
        unknown = [s for s in params.sources if s not in self.by_name]
        if unknown:
            known = ", ".join(sorted(self.by_name))
            raise InvalidArgument(f"unknown source(s) {', '.join(unknown)}; known sources: {known}")
        if params.token_budget < 0:
            raise InvalidArgument("token_budget must not be negative")
        top_k = TOP_K_DEFAULT if params.top_k <= 0 else min(params.top_k, TOP_K_MAX)
        snippet = SNIPPET_DEFAULT if params.snippet_lines <= 0 else min(params.snippet_lines, SNIPPET_MAX)
        corpora = frozenset(params.kinds) or frozenset({Corpus.DOCS, Corpus.CODE})
        return Query(
            text=text,
            terms=tuple(query_terms(text, stem=self.ranking.stem)),
            top_k=top_k,
            snippet_lines=snippet,
            corpora=corpora,
            mode=mode_name,
            sources=frozenset(params.sources),
            surface=params.surface or "",
            as_of=params.as_of,
            token_budget=params.token_budget,
            explain=params.explain,
        )

    def location_of(self, cand: Candidate) -> str:
        source = self.by_name[cand.source]
        loc = source.block_location(cand.document, cand.block, cand.anchor_line)
        return loc if source.is_default else f"{source.name}/{loc}"

    async def search(self, params: SearchParams) -> SearchOutcome:
        query = self.make_query(params)
        return self.search_query(query)

    def search_query(self, query: Query) -> SearchOutcome:
        trace_id = secrets.token_hex(16)
        understood = UnderstoodQuery(
            terms=list(query.terms),
            kinds=sorted(query.corpora),
            sources=sorted(query.sources),
            surface=query.surface,
            as_of=query.as_of,
            mode=query.mode,
            query_chars=len(query.text),
            term_count=len(query.terms),
        )
        outcome = SearchOutcome(hits=[], trace_id=trace_id, understood=understood if query.explain else None)
        if not query.text.strip():
            return outcome
        if not query.terms:
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            return outcome
        snapshot = self.snapshot
        corpora = [str(c) for c in query.corpora] if len(query.corpora) < 2 else []
        hits = lexical_search(
            snapshot,
            query.terms,
            self.ranking.weights,
            self.ranking.candidate_limit(query.top_k),
            corpora=corpora,
            sources=sorted(query.sources),
        )
        stages = [StageReport("retrieve", len(hits), 0)]
        candidates = self.pipeline.candidates(query, hits)
        self.pipeline.fuse(candidates)
        drops = self.pipeline.priors(query, candidates, self._source_class)
        stages.append(StageReport("priors", len(candidates), len(drops), drops[:20]))
        mode = self.registry.mode(query.mode)
        mode.rerank(query, candidates)
        stages.append(StageReport(f"mode:{mode.name}", len(candidates), 0))
        window, dedup_drops, diversity_drops = self.pipeline.order(
            candidates, query.top_k, self.location_of, getattr(mode, "prefer_mixed_corpora", False)
        )
        stages.append(StageReport("dedupe", len(candidates) - len(dedup_drops), len(dedup_drops), dedup_drops[:20]))
        stages.append(StageReport("diversify", len(window), len(diversity_drops), diversity_drops))
        if not window:
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            outcome.stages = stages if query.explain else []
            return outcome
        outcome.hits = [self._hit(query, cand) for cand in window]
        outcome.provider = "local"
        best_coverage = coverage(query, window[0])
        conflicts = self._conflicts(window)
        if conflicts:
            outcome.conflicts = conflicts
            outcome.abstained, outcome.abstain_reason = True, "conflicting_sources"
        elif len(query.terms) > 1 and best_coverage < self.ranking.low_confidence_coverage:
            outcome.abstained, outcome.abstain_reason = True, "low_confidence"
        if query.token_budget > 0:
            outcome.tokens_used = apply_budget(outcome.hits, query.token_budget)
        else:
            outcome.tokens_used = sum(estimate_tokens(h.snippet) + estimate_tokens(h.preview) for h in outcome.hits)
        if query.explain:
            outcome.stages = stages
        else:
            for hit in outcome.hits:
                hit.reasons = []
        return outcome

    def _source_class(self, name: str) -> str:
        source = self.by_name.get(name)
        return source.source_class if source else "product"

    def _hit(self, query: Query, cand: Candidate) -> SearchHit:
        doc, block = cand.document, cand.block
        source = self.by_name[cand.source]
        lines = self.lines_of(doc)
        if block.kind is RefKind.CODE:
            anchor = cand.anchor_line or block.start_line
            snippet, first, last = code_snippet(lines, block.start_line, block.end_line, anchor, query.snippet_lines)
            lo, hi = max(0, anchor - 12), min(len(lines), anchor + 12)
            preview_source = "\n".join(lines[lo:hi])
            ref = Ref(cand.source, RefKind.CODE, doc.path, block.anchor, anchor, doc.content_hash)
            url_anchor = f"L{anchor}"
        else:
            anchor = block.start_line
            snippet, first, last = doc_snippet(lines, block.start_line, block.end_line, query.snippet_lines)
            preview_source = "\n".join(lines[block.start_line - 1 : min(block.end_line, block.start_line + 150)])
            ref = Ref(cand.source, RefKind.DOC, doc.path, block.anchor, block.start_line, doc.content_hash)
            url_anchor = block.anchor
        meta = doc.meta
        return SearchHit(
            ref_id=ref.encode(),
            kind=block.kind,
            location=cand.location,
            url=source.url_for(doc.path, url_anchor),
            title=block.title or meta.title or doc.path,
            section_path=list(block.section_path),
            start_line=block.start_line,
            end_line=block.end_line,
            snippet=snippet,
            preview=preview(preview_source, query.text),
            score=round(cand.score, 6),
            scores=cand.scores,
            reasons=cand.reasons,
            source=cand.source,
            doc_version=doc_version(doc),
            source_class=meta.source_class or source.source_class,
            superseded_by=meta.superseded_by or "",
            effective_from=meta.effective_from,
            effective_to=meta.effective_to,
            parse_confidence=meta.parse_confidence,
            language=doc.language or "",
            anchor_line=anchor if block.kind is RefKind.CODE else 0,
        )

    def _conflicts(self, window: list[Candidate]) -> list[Conflict]:
        """Currently effective documents that declare one canonical key with different content."""
        now = datetime.now(UTC)
        by_key: dict[str, dict[str, Candidate]] = {}
        for cand in window:
            meta = cand.document.meta
            if not meta.canonical_key or meta.superseded_by:
                continue
            if meta.effective_to and meta.effective_to <= now:
                continue
            by_key.setdefault(meta.canonical_key, {})[cand.document.content_hash] = cand
        conflicts = []
        for key, versions in sorted(by_key.items()):
            if len(versions) > 1:
                cands = sorted(versions.values(), key=lambda c: c.location)
                conflicts.append(
                    Conflict(
                        key=key,
                        ref_ids=[self._hit_ref(c) for c in cands],
                        locations=[c.location for c in cands],
                        note="currently effective documents declare this key with different content",
                    )
                )
        return conflicts

    @staticmethod
    def _hit_ref(cand: Candidate) -> str:
        block = cand.block
        line = cand.anchor_line or block.start_line
        return Ref(cand.source, block.kind, cand.document.path, block.anchor, line, cand.document.content_hash).encode()

    # -- fetch ---------------------------------------------------------------------------------

    async def get_content(self, params: ContentParams) -> ContentOutcome:
        if params.ref_id and params.location:
            raise InvalidArgument("give either ref_id or location, not both")
        if not params.ref_id and not params.location:
            raise InvalidArgument("ref_id or location is required")
        if params.max_lines < 0:
            raise InvalidArgument("max_lines must not be negative")
        mode = params.mode or "snippet"
        max_lines = clamp_max_lines(params.max_lines)
        if params.ref_id:
            out = self._content_by_ref(params.ref_id, mode, max_lines)
        else:
            out = self._content_by_location(params.location, mode, max_lines)
        if params.seen_doc_version and params.seen_doc_version != out.doc_version:
            out.revision_skew = True
        return out

    def _content_by_ref(self, ref_id: str, mode: str, max_lines: int) -> ContentOutcome:
        ref = decode_ref(ref_id)
        source = self.by_name.get(ref.source)
        if source is None:
            if ref.kind is not RefKind.DOC and not any(s.corpus is Corpus.CODE for s in self.sources):
                raise FailedPrecondition(
                    "code and file refs are unavailable: no code source is configured",
                    Resolution("not_found", "ref", detail="docs-only configuration"),
                )
            raise NotFound(
                f"unknown source {ref.source!r}",
                Resolution("unknown_site", "ref", detail="the ref names a source that is not configured"),
            )
        try:
            from scriptorium.sources import safe_relative_path

            path = safe_relative_path(ref.path)
        except PathEscapeError as exc:
            raise InvalidArgument(f"ref path refused: {exc}") from None
        snapshot = self.snapshot
        doc = snapshot.docs.get((source.name, path))
        if doc is None:
            raise NotFound(
                "the referenced document is no longer indexed",
                Resolution("not_found", "ref", detail="stale ref: the document was removed"),
            )
        skew = not doc.content_hash.startswith(ref.content_hash)
        lines = self.lines_of(doc)
        page = source.page_location(doc.path)
        if ref.kind is RefKind.DOC:
            block = find_doc_block(doc, ref.anchor) if ref.anchor else None
            if ref.anchor and block is None:
                raise NotFound(
                    "the referenced section no longer exists",
                    Resolution("not_found", "ref", detail="stale ref: the heading is gone"),
                )
            cut = cut_doc(doc, lines, block, mode, max_lines)
            location = f"{page}#{block.anchor}" if block and block.anchor else page
        elif ref.kind is RefKind.CODE:
            line = ref.line
            if skew and ref.anchor:
                moved = next((b for b in doc.blocks if b.anchor == ref.anchor), None)
                if moved is not None:
                    line = moved.start_line
            if line > len(lines):
                raise NotFound(
                    "the referenced line no longer exists",
                    Resolution("not_found", "ref", detail="stale ref: the file is shorter now"),
                )
            cut = cut_code(doc, lines, line, mode, max_lines)
            location = f"{page}#L{cut.anchor_line}"
        else:
            cut = cut_file(doc, lines, max_lines)
            location = page
        qualified = location if source.is_default else f"{source.name}/{location}"
        resolution = Resolution(
            "resolved", "ref", requested_location="", site=source.name, resolved_location=qualified
        )
        out = self._outcome(source, doc, cut, qualified, "", resolution, ref_id)
        out.revision_skew = skew
        return out

    def _content_by_location(self, location: str, mode: str, max_lines: int) -> ContentOutcome:
        if self._resolver is None:
            raise Unavailable("sources are still loading")
        resolved = self._resolver.resolve(location)
        source, doc, fragment = resolved.source, resolved.doc, resolved.fragment
        lines = self.lines_of(doc)
        page = source.page_location(doc.path)
        if doc.corpus is Corpus.CODE:
            anchor = parse_line_anchor(fragment) if fragment else None
            if anchor is None:
                # A file location without a line anchor is the whole file.
                cut = cut_file(doc, lines, max_lines)
                loc = page
            else:
                if anchor[0] > len(lines):
                    raise NotFound(
                        "line anchor is past the end of the file",
                        Resolution("not_found", resolved.resolution.rule, requested_location=location),
                    )
                cut = cut_code(doc, lines, anchor[0], mode, max_lines)
                loc = f"{page}#L{cut.anchor_line}"
            ref = Ref(source.name, cut.kind, doc.path, cut.block.anchor if cut.block else "", cut.anchor_line, doc.content_hash)
        else:
            block = find_doc_block(doc, fragment) if fragment else None
            if fragment and block is None:
                resolved.resolution.detail = f"no section {fragment!r} on this page; returned the page"
            cut = cut_doc(doc, lines, block, mode, max_lines)
            loc = f"{page}#{block.anchor}" if block and block.anchor else page
            ref = Ref(source.name, RefKind.DOC, doc.path, block.anchor if block else "", cut.start_line, doc.content_hash)
        qualified = loc if source.is_default else f"{source.name}/{loc}"
        resolved.resolution.resolved_location = qualified
        return self._outcome(source, doc, cut, qualified, location, resolved.resolution, ref.encode())

    def _outcome(self, source, doc, cut, location, requested, resolution, ref_id) -> ContentOutcome:
        anchor = cut.block.anchor if (cut.block and cut.kind is RefKind.DOC) else (f"L{cut.anchor_line}" if cut.kind is RefKind.CODE else "")
        return ContentOutcome(
            location=location,
            requested_location=requested,
            url=source.url_for(doc.path, anchor),
            source=source.name,
            content=cut.content,
            ranges=cut.ranges,
            truncated=cut.truncated,
            total_lines=len(self.lines_of(doc)),
            doc_version=doc_version(doc),
            resolution=resolution,
            ref_id=ref_id,
            kind=cut.kind,
            title=cut.title,
            start_line=cut.start_line,
            end_line=cut.end_line,
            provider="local",
            section_path=cut.section_path,
            trace_id=secrets.token_hex(16),
        )

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
        outcome = await asyncio.to_thread(
            expand_related, self, list(ref_ids), top_k, tuple(kinds), mode, tuple(sources)
        )
        outcome.trace_id = secrets.token_hex(16)
        return outcome

    async def summarize_flow(
        self, ref_ids: list[str], topic: str = "", style: str = "", max_steps: int = 0
    ) -> FlowOutcome:
        if len(topic) > MAX_QUERY_CHARS:
            raise InvalidArgument(f"topic is longer than {MAX_QUERY_CHARS} characters")
        outcome = await asyncio.to_thread(summarize_flow, self, list(ref_ids), topic, style, max_steps)
        outcome.trace_id = secrets.token_hex(16)
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
        return await asyncio.to_thread(
            guide_implementation, self, topic, framework, language, max_docs, max_samples, style, tuple(sources)
        )

    def _check_mode_and_sources(self, mode: str, sources: tuple[str, ...]) -> None:
        self.make_query(SearchParams(query="", mode=mode, sources=tuple(sources)))

    def make_query_from(self, text: str, *, top_k: int = 10, mode: str = "", sources=(), kinds=()) -> Query:
        return self.make_query(
            SearchParams(query=text, top_k=top_k, mode=mode, sources=tuple(sources), kinds=tuple(kinds))
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

    def includers(self, snapshot: Snapshot) -> dict[str, list[SourceDocument]]:
        """Code path → documents that include it with an include directive (cached)."""
        cached = self._derived.get(("includers", snapshot.generation))
        if cached is None:
            cached = defaultdict(list)
            code_paths = {d.path for d in snapshot.docs.values() if d.corpus is Corpus.CODE}
            for doc in snapshot.docs.values():
                if doc.corpus is not Corpus.DOCS:
                    continue
                for tail in includes_in(doc.text):
                    if tail in code_paths:
                        cached[tail].append(doc)
                    else:
                        for path in code_paths:
                            if path.endswith("/" + tail):
                                cached[path].append(doc)
            self._derived[("includers", snapshot.generation)] = cached
        return cached

    # -- status --------------------------------------------------------------------------------

    def list_sources(self) -> list[SourceReport]:
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
                    indexed_at=datetime.fromtimestamp(state.indexed_at, UTC) if state.indexed_at else None,
                    last_error=state.last_error,
                    source_class=source.source_class,
                    root=str(source.config.root or ""),
                    bytes=sum(f.size for f in files.values()),
                    corpus=source.corpus,
                    staleness_seconds=round(staleness, 3),
                )
            )
        return reports

    @property
    def version(self) -> str:
        return __version__


def apply_budget(hits: list[SearchHit], budget: int) -> int:
    """Fit snippets and previews into ``budget`` tokens: shorten or drop the lowest first.

    The best result is always kept whole; later ones lose their snippet, then get a shortened
    preview, then are dropped.
    """
    used = estimate_tokens(hits[0].snippet) + estimate_tokens(hits[0].preview)
    kept = [hits[0]]
    for hit in hits[1:]:
        remaining = budget - used
        cost = estimate_tokens(hit.snippet) + estimate_tokens(hit.preview)
        if cost <= remaining:
            used += cost
            kept.append(hit)
            continue
        hit.snippet = ""
        cost = estimate_tokens(hit.preview)
        if cost > remaining:
            if remaining < 8:
                continue
            hit.preview = trim_to_tokens(hit.preview, remaining)
            cost = estimate_tokens(hit.preview)
        used += cost
        kept.append(hit)
    hits[:] = kept
    return used


def ranking_settings(raw: dict) -> RankingSettings:
    """Ranking levers from the ``[ranking]`` configuration table (for measurement runs)."""
    if not raw:
        return RankingSettings()
    fields = dict(raw)
    weights = FieldWeights(
        body=float(fields.pop("body_weight", 1.0)),
        heading=float(fields.pop("heading_weight", FieldWeights.heading)),
        path=float(fields.pop("path_weight", FieldWeights.path)),
    )
    classes = fields.pop("class_weights", None)
    settings = RankingSettings(weights=weights, **fields)
    if classes:
        merged = {**settings.class_weights, **{k: float(v) for k, v in classes.items()}}
        settings = RankingSettings(**{**_as_dict(settings), "class_weights": merged})
    return settings


def _as_dict(settings: RankingSettings) -> dict:
    return {name: getattr(settings, name) for name in settings.__dataclass_fields__}


def default_state_dir(sources: list[Source]) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scriptorium"
    key = "\n".join(sorted(f"{s.name}={s.config.root}" for s in sources))
    return base / hashlib.sha256(key.encode()).hexdigest()[:12]


def create_engine(settings: Any, registry: Registry) -> LocalEngine:
    return LocalEngine(settings, registry)


def build_index(settings: Any, registry: Registry) -> dict:
    """Build (or bring up to date) the index generation for ``settings`` without serving."""
    engine = LocalEngine(settings, registry)
    summary = engine.load_or_build()
    snapshot = engine.snapshot
    return {
        "generation": snapshot.generation,
        "state_dir": str(engine.store.state_dir),
        "documents": snapshot.manifest.document_count,
        "blocks": snapshot.manifest.block_count,
        "changed": summary.changed if summary else 0,
        "seconds": round(summary.seconds, 3) if summary else 0.0,
        "sources": {r.name: {"state": r.state, "documents": r.document_count} for r in engine.list_sources()},
    }


def collapse(text: str) -> str:
    return collapse_whitespace(text)
