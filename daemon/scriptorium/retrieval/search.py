"""Search: validate the request, retrieve candidates, rank, and build explained hits.

A mixin of ``LocalEngine``.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from scriptorium import telemetry
from scriptorium.cancel import hold
from scriptorium.domain.model import Candidate, Corpus, Query, Reason, RefKind
from scriptorium.domain.outcomes import (
    Conflict,
    InvalidArgument,
    SearchHit,
    SearchOutcome,
    SearchParams,
    StageReport,
    UnderstoodQuery,
)
from scriptorium.domain.refs import Ref
from scriptorium.index.builder import doc_version
from scriptorium.index.searcher import lexical_search
from scriptorium.limits import (
    MAX_QUERY_CHARS,
    SNIPPET_DEFAULT,
    SNIPPET_MAX,
    TOP_K_DEFAULT,
    TOP_K_MAX,
)
from scriptorium.plugins import PluginError
from scriptorium.ranking.pipeline import coverage, query_names
from scriptorium.sources.remote import RemotePage, SearchBatch, is_listing
from scriptorium.text import (
    code_snippet,
    doc_snippet,
    estimate_tokens,
    preview,
    query_terms,
    split_lines,
    trim_to_tokens,
)
from scriptorium.text.preview import PreviewText, prepare

log = logging.getLogger(__name__)

# A preview window is ~200 characters; scanning more of a long block only costs time.
PREVIEW_SOURCE_CHARS = 4000


class SearchMixin:
    """Turns a search request into ranked, budgeted, explained hits."""

    # -- search --------------------------------------------------------------------------------

    @telemetry.understanding
    def make_query(self, params: SearchParams) -> Query:
        text = params.query or ""
        if len(text) > MAX_QUERY_CHARS:
            raise InvalidArgument(f"query is longer than {MAX_QUERY_CHARS} characters")
        if not text.isprintable():
            text = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in text)
        mode_name = params.mode or "default"
        try:
            self.registry.mode(mode_name)
        except PluginError as exc:
            raise InvalidArgument(str(exc)) from None
        unknown = [
            s for s in params.sources if s not in self.by_name and s not in self.remote_by_name
        ]
        if unknown:
            known = ", ".join(sorted([*self.by_name, *self.remote_by_name]))
            raise InvalidArgument(f"unknown source(s) {', '.join(unknown)}; known sources: {known}")
        if params.token_budget < 0:
            raise InvalidArgument("token_budget must not be negative")
        top_k = TOP_K_DEFAULT if params.top_k <= 0 else min(params.top_k, TOP_K_MAX)
        snippet = (
            SNIPPET_DEFAULT if params.snippet_lines <= 0 else min(params.snippet_lines, SNIPPET_MAX)
        )
        corpora = frozenset(params.kinds) or frozenset({Corpus.DOCS, Corpus.CODE})
        return Query(
            text=text,
            terms=tuple(query_terms(text, **self.ranking.token_options())),
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
        remote = self.remote_by_name.get(cand.source)
        if remote is not None:
            return remote.location_of(cand)
        doc, block = cand.document, cand.block
        snapshot = self._snapshot
        key = (
            "loc",
            cand.source,
            doc.path,
            doc.content_hash,
            block.start_line,
            block.end_line,
            block.anchor,
            cand.anchor_line,
            cand.file_level,
        )
        loc = snapshot.memo.get(key) if snapshot is not None else None
        if loc is None:
            source = self.by_name[cand.source]
            if cand.file_level:
                loc = source.page_location(doc.path)
            else:
                loc = source.block_location(doc, block, cand.anchor_line)
            if not source.is_default:
                loc = f"{source.name}/{loc}"
            if snapshot is not None:
                snapshot.remember(key, loc)
        return loc

    @telemetry.traced_search
    async def search(self, params: SearchParams) -> SearchOutcome:
        await hold("rpc.search")
        query = self.make_query(params)
        if self.providers is None or not query.text.strip():
            return self.search_query(query)
        if not query.terms and not is_listing(query):
            return self.search_query(query)
        return await self.providers.search(query)

    def search_query(self, query: Query) -> SearchOutcome:
        """Search the locally indexed sources only."""
        outcome = self._new_outcome(query)
        if not query.text.strip():
            return outcome
        if not query.terms:
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            return outcome
        hits = self._lexical_hits(query)
        stages = [StageReport("retrieve", len(hits), 0)]
        candidates = self.pipeline.candidates(query, hits)
        return self._rank(query, candidates, stages, outcome)

    def local_batch(self, query: Query) -> SearchBatch:
        """The local provider's candidates for the chain (no listing: ``*`` has no terms)."""
        if not query.terms:
            return SearchBatch()
        return SearchBatch(self.pipeline.candidates(query, self._lexical_hits(query)))

    def rank_batch(self, query: Query, batch: SearchBatch) -> SearchOutcome:
        """Rank one provider's (or the pooled) candidates through the shared pipeline."""
        outcome = self._new_outcome(query)
        if batch.listing:
            return self._listing(query, batch.candidates, outcome)
        stages = [StageReport("retrieve", len(batch.candidates), 0)]
        return self._rank(query, batch.candidates, stages, outcome, batch.confident)

    def _lexical_hits(self, query: Query):
        snapshot = self.snapshot
        corpora = [str(c) for c in query.corpora] if len(query.corpora) < 2 else []
        ranking = self.ranking
        return lexical_search(
            snapshot,
            query.terms,
            ranking.weights,
            ranking.candidate_limit(query.top_k),
            corpora=corpora,
            sources=sorted(query.sources),
            # Without a prior above 1 nothing could lift a left-out definition into the window.
            symbols=query_names(query.text, identifiers_only=ranking.definition_identifiers_only)
            if ranking.definition_candidates and ranking.definition_factor > 1.0
            else (),
            symbol_limit=ranking.definition_candidates,
            symbol_reach=(ranking.window(query.top_k), ranking.definition_factor),
        )

    def _listing(
        self, query: Query, candidates: list[Candidate], outcome: SearchOutcome
    ) -> SearchOutcome:
        window = candidates[: query.top_k]
        for cand in window:
            cand.location = self.location_of(cand)
        outcome.hits = [self._hit(query, cand) for cand in window]
        if not outcome.hits:
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            return outcome
        outcome.tokens_used = sum(
            estimate_tokens(h.snippet) + estimate_tokens(h.preview) for h in outcome.hits
        )
        if query.token_budget > 0:
            outcome.tokens_used = apply_budget(outcome.hits, query.token_budget)
        if query.explain:
            outcome.stages = [StageReport("list", len(window), len(candidates) - len(window))]
        else:
            for hit in outcome.hits:
                hit.reasons = []
        return outcome

    def _new_outcome(self, query: Query) -> SearchOutcome:
        trace_id = telemetry.current_trace_id()
        if not query.explain:
            return SearchOutcome(hits=[], trace_id=trace_id, understood=None)
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
        return SearchOutcome(hits=[], trace_id=trace_id, understood=understood)

    def _rank(
        self,
        query: Query,
        candidates: list[Candidate],
        stages: list[StageReport],
        outcome: SearchOutcome,
        confident: bool | None = None,
    ) -> SearchOutcome:
        self.pipeline.fuse(candidates)
        drops = self.pipeline.priors(query, candidates, self._source_class)
        stages.append(StageReport("priors", len(candidates), len(drops), drops[:20]))
        mode = self.registry.mode(query.mode)
        self.pipeline.rerank(mode, query, candidates)
        stages.append(StageReport(f"mode:{mode.name}", len(candidates), 0))
        window, dedup_drops, diversity_drops = self.pipeline.order(
            candidates,
            query.top_k,
            self.location_of,
            getattr(mode, "prefer_mixed_corpora", False),
            query,
        )
        stages.append(
            StageReport(
                "dedupe", len(candidates) - len(dedup_drops), len(dedup_drops), dedup_drops[:20]
            )
        )
        stages.append(
            StageReport("diversify", len(window), len(diversity_drops), diversity_drops[:20])
        )
        if not window:
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            outcome.stages = stages if query.explain else []
            return outcome
        outcome.hits = telemetry.build_results(self._hit, query, window)
        outcome.provider = "local"
        conflicts = self._conflicts(window)
        if conflicts:
            outcome.conflicts = conflicts
            outcome.abstained, outcome.abstain_reason = True, "conflicting_sources"
        elif confident is False or (confident is None and self._unsure(query, window[0])):
            outcome.abstained, outcome.abstain_reason = True, "low_confidence"
        if query.token_budget > 0:
            outcome.tokens_used = apply_budget(outcome.hits, query.token_budget)
        else:
            outcome.tokens_used = sum(
                estimate_tokens(h.snippet) + estimate_tokens(h.preview) for h in outcome.hits
            )
        if query.explain:
            outcome.stages = stages
        else:
            for hit in outcome.hits:
                hit.reasons = []
        return outcome

    def _unsure(self, query: Query, best: Candidate) -> bool:
        """Whether the best result covers too little of a multi-term query to be trusted."""
        if len(query.terms) < 2:
            return False
        best_coverage = coverage(
            query, best, *self._term_stats(best), token_options=self.ranking.token_options()
        )
        return best_coverage < self.ranking.low_confidence_coverage

    def _term_stats(self, cand: Candidate) -> tuple:
        """Document frequencies for weighing coverage, from the index the candidate came from."""
        remote = self.remote_by_name.get(cand.source)
        if remote is not None:
            return remote.term_stats(cand)
        searcher = self.snapshot.searcher
        return (
            lambda term: searcher.doc_freq("body", term) + searcher.doc_freq("heading", term),
            searcher.num_docs,
        )

    def _source_class(self, name: str) -> str:
        source = self.by_name.get(name) or self.remote_by_name.get(name)
        return source.source_class if source else "product"

    def _hit(self, query: Query, cand: Candidate) -> SearchHit:
        doc, block = cand.document, cand.block
        if isinstance(doc, RemotePage):
            return self._remote_hit(query, cand, doc)
        source = self.by_name[cand.source]
        lines = self.lines_of(doc)
        if cand.file_level:
            return self._file_hit(query, cand, source, lines)
        code = block.kind is RefKind.CODE
        if code:
            anchor = cand.anchor_line or block.start_line
            snippet, _, _ = code_snippet(
                lines, block.start_line, block.end_line, anchor, query.snippet_lines
            )
            lo, hi = max(0, anchor - 12), min(len(lines), anchor + 12)
        else:
            anchor = block.start_line
            snippet, _, _ = doc_snippet(
                lines, block.start_line, block.end_line, query.snippet_lines
            )
            lo, hi = block.start_line - 1, min(block.end_line, block.start_line + 150)
        ref_id, url = self._address(cand, source, anchor)
        meta = doc.meta
        return SearchHit(
            ref_id=ref_id,
            kind=block.kind,
            location=cand.location,
            url=url,
            title=block.title or meta.title or doc.path,
            section_path=list(block.section_path),
            start_line=block.start_line,
            end_line=block.end_line,
            snippet=snippet,
            preview=preview(self._preview_text(doc, lines, lo, hi), query.text),
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
            anchor_line=anchor if code else 0,
        )

    def _file_hit(self, query: Query, cand: Candidate, source, lines: list[str]) -> SearchHit:
        """A whole-file result anchored at line 1 (the file's path matched, no line did)."""
        doc = cand.document
        ref = Ref(cand.source, RefKind.FILE, doc.path, "", 1, doc.content_hash)
        snippet, _, _ = doc_snippet(lines, 1, len(lines), query.snippet_lines)
        meta = doc.meta
        return SearchHit(
            ref_id=ref.encode(),
            kind=RefKind.FILE,
            location=cand.location,
            url=source.url_for(doc.path),
            title=doc.path,
            section_path=[doc.path],
            start_line=1,
            end_line=len(lines),
            snippet=snippet,
            preview=preview(self._preview_text(doc, lines, 0, 40), query.text),
            score=round(cand.score, 6),
            scores=cand.scores,
            reasons=[*cand.reasons, Reason("file-level", 1.0, "the path matched, no line did")],
            source=cand.source,
            doc_version=doc_version(doc),
            source_class=meta.source_class or source.source_class,
            parse_confidence=meta.parse_confidence,
            language=doc.language or "",
            anchor_line=1,
        )

    def _address(self, cand: Candidate, source, anchor: int) -> tuple[str, str]:
        """The ref id and URL of a local hit anchored at ``anchor`` (kept per generation)."""
        doc, block = cand.document, cand.block
        snapshot = self._snapshot
        key = ("addr", cand.source, doc.path, doc.content_hash, block.kind, block.anchor, anchor)
        found = snapshot.memo.get(key) if snapshot is not None else None
        if found is None:
            ref = Ref(cand.source, block.kind, doc.path, block.anchor, anchor, doc.content_hash)
            url_anchor = f"L{anchor}" if block.kind is RefKind.CODE else block.anchor
            found = (ref.encode(), source.url_for(doc.path, url_anchor))
            if snapshot is not None:
                snapshot.remember(key, found)
        return found

    def _preview_text(self, doc, lines: list[str], lo: int, hi: int) -> PreviewText:
        """Lines ``lo:hi`` of ``doc`` prepared for previews (kept per generation)."""
        snapshot = self._snapshot
        key = (doc.content_hash, lo, hi)
        found = snapshot.texts.get(key) if snapshot is not None else None
        if found is None:
            found = prepare("\n".join(lines[lo:hi])[:PREVIEW_SOURCE_CHARS])
            if snapshot is not None:
                snapshot.remember_text(key, found)
        return found

    def _remote_hit(self, query: Query, cand: Candidate, doc: RemotePage) -> SearchHit:
        """A hit for a remote candidate: text the remote side cut is kept, not cut again."""
        block = cand.block
        source = self.remote_by_name[cand.source]
        lines = split_lines(doc.text)
        anchor = cand.anchor_line or block.start_line
        snippet = doc.snippet
        if not snippet:
            snippet, _, _ = doc_snippet(
                lines, block.start_line, block.end_line, query.snippet_lines
            )
        shown = doc.preview
        if not shown:
            source_text = "\n".join(
                lines[block.start_line - 1 : min(block.end_line, block.start_line + 150)]
            )
            shown = preview(source_text[:PREVIEW_SOURCE_CHARS], query.text)
        version = doc.version or doc_version(doc)
        line = anchor if block.kind is RefKind.CODE else block.start_line
        ref = Ref(cand.source, block.kind, doc.path, block.anchor, line, version)
        url_anchor = f"L{anchor}" if block.kind is RefKind.CODE else block.anchor
        url = f"{doc.url}#{url_anchor}" if doc.url and url_anchor else doc.url
        meta = doc.meta
        return SearchHit(
            ref_id=ref.encode(),
            kind=block.kind,
            location=cand.location,
            url=url,
            title=block.title or meta.title or doc.path,
            section_path=list(block.section_path),
            start_line=block.start_line,
            end_line=block.end_line,
            snippet=snippet,
            preview=shown,
            score=round(cand.score, 6),
            scores=cand.scores,
            reasons=cand.reasons,
            source=cand.source,
            doc_version=version[:16],
            source_class=meta.source_class or source.source_class,
            superseded_by=meta.superseded_by or "",
            effective_from=meta.effective_from,
            effective_to=meta.effective_to,
            parse_confidence=meta.parse_confidence,
            source_revision=doc.revision,
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
                        note="effective documents declare this key with different content",
                    )
                )
        return conflicts

    @staticmethod
    def _hit_ref(cand: Candidate) -> str:
        block = cand.block
        line = cand.anchor_line or block.start_line
        return Ref(
            cand.source,
            block.kind,
            cand.document.path,
            block.anchor,
            line,
            cand.document.content_hash,
        ).encode()


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
