"""The ranking pipeline: lexical hits → fused → priors → mode → ordered, diversified window.

Each stage records what it kept and dropped so ``explain`` can answer "why this result?".
Every lever has a setting in ``RankingSettings`` (ranking/settings.py); the defaults are the
ones the evaluation suite supports (see docs/ranking.md for the measurements). The order the
stages run in is ``Ranker``'s (ranking/ranker.py); what a query says is in ranking/signals.py
and what it decides for the priors in ranking/query_priors.py, what a path says in
ranking/paths.py, which query terms a candidate covers in ranking/coverage.py. One method per
stage, sharing the helpers below them.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from scriptorium import telemetry
from scriptorium.domain.model import (
    Candidate,
    Corpus,
    Query,
    Reason,
    RefKind,
    Scores,
    SourceDocument,
)
from scriptorium.domain.outcomes import StageDrop
from scriptorium.domain.refs import Ref
from scriptorium.index.searcher import LexicalHit
from scriptorium.ranking.bodies import (  # noqa: F401 (renders_from_code: also from here)
    cjk_head_of,
    directive_in,
    renders_from_code,
    words_of,
)
from scriptorium.ranking.coverage import document_evidence, term_coverage
from scriptorium.ranking.libraries import library_prior
from scriptorium.ranking.modes import RankingMode
from scriptorium.ranking.paths import auxiliary_kind, translated
from scriptorium.ranking.query_priors import QueryPriors
from scriptorium.ranking.settings import (  # noqa: F401 (also imported from here)
    DEFAULT_CLASS_WEIGHTS,
    RANKING_KEYS,
    RankingSettings,
)
from scriptorium.ranking.signals import qualifies
from scriptorium.ranking.twins import near_duplicate
from scriptorium.text import best_line, query_terms, tokenize
from scriptorium.text.features import CJK as _CJK
from scriptorium.text.features import WordSet
from scriptorium.text.snippets import ScreenMemo

_NAME_SEGMENTS = re.compile(r"[./:-]+")


LocationOf = Callable[[Candidate], str]


def _now() -> datetime:
    return datetime.now(UTC)


def _lines_cache() -> dict[str, list[str]]:
    return {}


class Pipeline:
    """Stateless ranking over one request's candidates."""

    def __init__(self, settings: RankingSettings, lines_of: Callable[[SourceDocument], list[str]]):
        self.settings = settings
        self.lines_of = lines_of
        # What anchoring found in code texts per term, kept for later searches.
        self.screens = ScreenMemo()

    # -- stage 1: candidates ------------------------------------------------------------------

    def candidates(self, query: Query, hits: Sequence[LexicalHit]) -> list[Candidate]:
        # Positional construction: this runs for every candidate of every search. Reasons are
        # built only for an explained search; nothing else reads them.
        explained = query.explain
        return [
            Candidate(
                hit.doc.source,
                hit.doc,
                hit.block,
                hit.score,
                Scores(hit.score if hit.lexical is None else hit.lexical, hit.dense),
                _first_reasons(hit) if explained else [],
                None,
                False,
                "",
                "",
                "",
                explained,
                hit.features,
            )
            for hit in hits
        ]

    def anchor(self, query: Query, candidates: list[Candidate]) -> None:
        """Centre code candidates on their best matching line (done for the final window only).

        Lines are matched on plain tokens as well as the query's (possibly stemmed) terms. A
        code block where no line matches but whose file path does becomes a file-level result
        anchored at line 1: the path, not the code, is what answered.
        """
        terms = set(query.terms) | set(query_terms(query.text))
        for cand in candidates:
            block = cand.block
            if block.kind is RefKind.CODE and cand.anchor_line is None:
                lines = self.lines_of(cand.document)
                best = best_line(
                    lines,
                    terms,
                    block.start_line - 1,
                    block.end_line,
                    memo=self.screens,
                    key=cand.document.content_hash,
                )
                if best is not None:
                    cand.anchor_line = best + 1
                elif terms & set(tokenize(cand.document.path, **self.settings.token_options())):
                    cand.file_level = True
                    cand.anchor_line = 1
                else:
                    cand.anchor_line = block.start_line

    def _settle(self, query: Query, window: list[Candidate], location_of: LocationOf) -> None:
        """Anchor the window's code results and give each its final location."""
        self.anchor(query, window)
        for cand in window:
            cand.location = location_of(cand)

    def _settle_first(
        self, query: Query, window: list[Candidate], location_of: LocationOf, count: int
    ) -> tuple[list[Candidate], list[Candidate]]:
        """The first ``count`` results of ``window`` once anchored, and those left after them.

        Anchoring one at a time, as far as needed: a code block that becomes a file-level
        result of a file already shown collapses into it, and the next one moves up. This is
        what anchoring the whole window and then cutting gives, for the cost of the cut.
        """
        kept: list[Candidate] = []
        files: set[tuple[str, str]] = set()
        used = 0
        for cand in window:
            if len(kept) >= count:
                break
            used += 1
            self._settle(query, [cand], location_of)
            if cand.file_level:
                key = (cand.source, cand.document.path)
                if key in files:
                    continue
                files.add(key)
            kept.append(cand)
        return kept, window[used:]

    # -- stage 2: fusion across corpora --------------------------------------------------------

    @telemetry.traced(telemetry.FUSE, telemetry.describe_fusion)
    def fuse(self, candidates: list[Candidate]) -> None:
        mode = self.settings.fusion
        by_corpus: dict[Corpus, list[Candidate]] = defaultdict(list)
        for cand in candidates:
            by_corpus[cand.document.corpus].append(cand)
        if mode == "rrf":
            for group in by_corpus.values():
                group.sort(key=lambda c: -c.score)
                for rank, cand in enumerate(group, start=1):
                    cand.score = 1.0 / (self.settings.rrf_k + rank)
                    cand.reasons.append(Reason("fusion", cand.score, f"rrf rank {rank}"))
        elif mode == "max" and by_corpus:
            bests = {corpus: max(c.score for c in g) or 1.0 for corpus, g in by_corpus.items()}
            overall = max(bests.values())
            blend = self.settings.fusion_blend
            for corpus, group in by_corpus.items():
                best = bests[corpus]
                if blend:
                    # Keep ``blend`` of the gap: this corpus's best scores (best/overall)**blend.
                    best /= (best / overall) ** blend
                factor = round(1 / best, 6)
                for cand in group:
                    cand.score = cand.score / best
                    if cand.explained:
                        cand.reasons.append(Reason("fusion", factor, "scaled by corpus"))
        for cand in candidates:
            cand.scores.fused = cand.score

    # -- stage 3: priors -----------------------------------------------------------------------

    @telemetry.traced(telemetry.PRIORS, telemetry.describe_priors)
    def priors(
        self, query: Query, candidates: list[Candidate], source_class: Callable[[str], str]
    ) -> list[StageDrop]:
        settings = self.settings
        drops: list[StageDrop] = []
        surface_terms = set(query_terms(query.surface)) if query.surface else set()
        query_cjk = bool(_CJK.search(query.text))
        as_of = query.as_of
        now = as_of or _now()
        class_weights = settings.class_weights
        classes: dict[str, str] = {}  # source -> class, asked once per source per search
        document_evidence(settings, query, candidates)
        term_coverage(settings, query, candidates)
        decided = QueryPriors.of(query, settings)
        auxiliary, asked, named = decided.auxiliary, decided.asked, decided.named
        translation, question_code = decided.translation, decided.question_code
        pasted_docs = decided.pasted_docs
        qualified = settings.qualified_definition_factor
        kept = []
        for cand in candidates:
            meta = cand.document.meta
            if pasted_docs != 1.0 and cand.document.corpus is Corpus.DOCS:
                cand.adjust("pasted-text", pasted_docs, "a long pasted query is about code")
            if question_code != 1.0 and cand.document.corpus is Corpus.CODE:
                cand.adjust("question", question_code, "a question naming no identifier")
            if (
                translation != 1.0
                and cand.document.corpus is Corpus.DOCS
                and translated(cand.document.path)
            ):
                cand.adjust("translation", translation, "a translation; the query is English")
            if settings.page_boost and meta.boost != 1.0:
                boost = meta.boost if math.isfinite(meta.boost) and meta.boost > 0 else 0.0
                cand.adjust("page-boost", boost, "front matter search.boost")
            cls = meta.source_class
            if not cls:
                cls = classes.get(cand.source)
                if cls is None:
                    cls = classes[cand.source] = source_class(cand.source)
            weight = class_weights.get(cls, 1.0)
            if weight != 1.0:
                cand.adjust("source-class", weight, cls)
            library_prior(settings, query, cand)
            if (
                settings.directive_factor != 1.0
                and cand.block.kind is RefKind.DOC
                and directive_in(cand)
            ):
                cand.adjust(
                    "renders-from-code", settings.directive_factor, "API reference directive"
                )
            # A class given to the page (front matter, the source's ``class_rules``) is the
            # source's own word on it and stands instead of the path's.
            if auxiliary != 1.0 and not meta.source_class:
                document = cand.document
                kind = auxiliary_kind(
                    document.path, settings.auxiliary_tooling, document.corpus is Corpus.DOCS
                )
                if kind and kind not in asked:
                    factor = settings.legacy_factor if kind == "legacy" else auxiliary
                    if factor != 1.0:
                        cand.adjust("auxiliary", factor, kind)
            if query.files and (cand.source, cand.document.path) in query.files:
                cand.adjust("named-file", settings.named_file_factor, "the query names this file")
                if (cand.source, cand.document.path) == query.last_file:
                    cand.adjust("last-named-file", settings.last_file_factor, "named last")
            if named and cand.block.symbol and cand.block.symbol.casefold() in named:
                if qualified != 1.0 and qualifies(cand.block, named):
                    cand.adjust("definition", qualified, "defines a name the query qualifies")
                else:
                    cand.adjust("definition", settings.definition_factor, "defines a queried name")
            if settings.language_prior != 1.0:
                block = cand.block
                block_cjk = bool(_CJK.search(block.title) or cjk_head_of(cand))
                if block_cjk != query_cjk:
                    cand.adjust(
                        "language", settings.language_prior, "script differs from the query"
                    )
            if surface_terms and settings.surface_boost != 1.0:
                topical = set(tokenize(" ".join((cand.document.path, *cand.block.section_path))))
                if surface_terms & topical:
                    cand.adjust("surface", settings.surface_boost, "on-topic for the surface")
            effective_from, effective_to = meta.effective_from, meta.effective_to
            not_yet = effective_from is not None and effective_from > now
            expired = effective_to is not None and effective_to <= now
            if as_of is not None and (not_yet or expired):
                why = "not yet effective at as_of" if not_yet else "no longer effective at as_of"
                drops.append(_drop(cand, why, query.explain, cand.document.path))
                continue
            if expired or not_yet:
                cand.adjust("expired" if expired else "not-yet-effective", settings.expired_factor)
            if meta.superseded_by:
                cand.adjust("superseded", settings.superseded_factor, meta.superseded_by)
            kept.append(cand)
        candidates[:] = kept
        return drops

    # -- stage 4: the ranking mode --------------------------------------------------------------

    @telemetry.traced(telemetry.RERANK, telemetry.describe_rerank)
    def rerank(self, mode: RankingMode, query: Query, candidates: list[Candidate]) -> None:
        """Let the mode plugin re-weigh the candidates (it adjusts scores, it drops nothing)."""
        mode.rerank(query, candidates)

    # -- stage 5: order, de-duplicate, diversify -----------------------------------------------

    @telemetry.traced(telemetry.DIVERSIFY, telemetry.describe_order)
    def order(
        self,
        candidates: list[Candidate],
        top_k: int,
        location_of: LocationOf,
        prefer_mixed: bool,
        query: Query | None = None,
    ) -> tuple[list[Candidate], list[StageDrop], list[StageDrop]]:
        explain = query is not None and query.explain
        for cand in candidates:
            cand.scores.rerank = cand.score
        _locate(candidates, location_of, everyone=explain or query is None)
        candidates.sort(key=lambda c: (-c.score, c.location, c.block.start_line, c.block.end_line))
        seen: set[tuple] = set()
        unique: list[Candidate] = []
        dedup_drops: list[StageDrop] = []
        for cand in candidates:
            key = (cand.source, cand.document.path, cand.block.start_line, cand.block.end_line)
            if key in seen:
                dedup_drops.append(_drop(cand, "duplicate block", explain))
                continue
            seen.add(key)
            unique.append(cand)
        window: list[Candidate] = []
        overflow: list[Candidate] = []
        per_doc: dict[tuple[str, str], int] = defaultdict(int)
        limit = self.settings.max_per_document
        similarity = self.settings.near_duplicate_similarity
        # Ranked for ``size`` results and cut to ``top_k`` only at the end, so that the first
        # results do not depend on how many were asked for.
        size = self.settings.window(top_k)
        twins: dict[int, Candidate] = {}  # id of a held-back near-duplicate -> what it copies
        shown: list[WordSet] = []  # the words of the window's results, in order
        for cand in unique:
            doc_key = (cand.source, cand.document.path)
            if limit > 0 and per_doc[doc_key] >= limit:
                overflow.append(cand)
                continue
            # Only the window's own results are compared: below the cut nothing is shown.
            if similarity and len(window) < size:
                words = words_of(cand)
                twin = near_duplicate(words, shown, similarity)
                if twin is not None:
                    twins[id(cand)] = window[twin]
                    overflow.append(cand)
                    continue
                shown.append(words)
            per_doc[doc_key] += 1
            window.append(cand)
        # Backfill from the overflow when diversification left the window short: after the
        # diversified results, not among them, so that what a short list holds back stays
        # below what a longer one shows (the results are a prefix of any longer list's).
        if len(window) < size and overflow:
            room = size - len(window)
            backfilled = {id(c) for c in overflow[:room]}
            window.extend(overflow[:room])
            overflow = overflow[room:]
        else:
            backfilled = set()
        if query is not None:
            final, below = self._settle_first(query, window[:size], location_of, top_k)
            below += window[size:]
        else:
            final, below = window[:top_k], window[top_k:]
        if prefer_mixed:
            mixed = _ensure_mixed(final, below + overflow)
            chosen = {id(c) for c in mixed}
            displaced = [c for c in final if id(c) not in chosen]
            final = mixed
            if query is not None:
                self._settle(query, final, location_of)
                final = _one_result_per_file_level(final)
        else:
            displaced = []
        kept = {id(c) for c in final}
        # The cap is why a block is missing only if it scores as well as the last result kept;
        # below that the cut would have left it out anyway, and saying so is the honest answer.
        floor = final[-1].score if final else -math.inf
        capped = f"more than {limit} blocks from one document"
        diversity_drops = [
            _drop(c, _held_back(c, twins, capped, floor, top_k), explain)
            for c in overflow
            if id(c) not in kept
        ]
        diversity_drops += [
            _drop(c, "displaced to keep one docs and one code result", explain) for c in displaced
        ]
        if explain:
            # Why a candidate is missing is the usual question; below the cut is the usual answer.
            diversity_drops += [
                _drop(c, _held_back(c, twins, capped, floor, top_k), explain)
                if id(c) in backfilled
                else _drop(c, _below_cut(top_k, c), explain)
                for c in below
                if id(c) not in kept
            ]
        return final, dedup_drops, diversity_drops


def _first_reasons(hit: LexicalHit) -> list[Reason]:
    """What a candidate's first score was made of (explain only)."""
    if hit.lexical is None:
        return [Reason("bm25", round(hit.score, 4), "lexical score")]
    return [
        Reason("bm25", round(hit.lexical, 4), "lexical score"),
        Reason("semantic", round(hit.dense, 4), "cosine with the query"),
        Reason("hybrid", round(hit.score, 4), "lexical and semantic mixed"),
    ]


def _held_back(
    cand: Candidate, twins: dict[int, Candidate], capped: str, floor: float, top_k: int
) -> str:
    """Why a block held out of the window is missing from the results."""
    if cand.score < floor:
        return _below_cut(top_k, cand)
    twin = twins.get(id(cand))
    if twin is not None:
        return f"near-duplicate of {twin.location or twin.document.path}"
    return capped


def _below_cut(top_k: int, cand: Candidate) -> str:
    return f"ranked below the top {top_k} (score {cand.score:.4f})"


def _locate(candidates: list[Candidate], location_of: LocationOf, everyone: bool) -> None:
    """Set the location of the candidates whose order (or explanation) needs it.

    Locations break ties between equal scores; the final window is located again after
    anchoring. So unless the drops are to be explained, only candidates sharing a score with
    another need one now: for the rest the sort never looks at it.
    """
    if everyone:
        for cand in candidates:
            cand.location = location_of(cand)
        return
    counts: dict[float, int] = {}
    for cand in candidates:
        counts[cand.score] = counts.get(cand.score, 0) + 1
    for cand in candidates:
        if counts[cand.score] > 1:
            cand.location = location_of(cand)


def _drop(cand: Candidate, why: str, with_ref: bool, location: str = "") -> StageDrop:
    """A dropped candidate for ``explain``; its ref id is encoded only when explaining."""
    block = cand.block
    ref_id = ""
    if with_ref:
        ref_id = Ref(
            cand.source,
            block.kind,
            cand.document.path,
            block.anchor,
            cand.anchor_line or block.start_line,
            cand.document.content_hash,
        ).encode()
    return StageDrop(ref_id, location or cand.location, why)


def _one_result_per_file_level(window: list[Candidate]) -> list[Candidate]:
    """Blocks of one file that all became file-level results collapse into the first."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for cand in window:
        if cand.file_level:
            key = (cand.source, cand.document.path)
            if key in seen:
                continue
            seen.add(key)
        kept.append(cand)
    return kept


def _ensure_mixed(window: list[Candidate], rest: list[Candidate]) -> list[Candidate]:
    """Keep one doc and one code result in the window when both corpora matched usefully."""
    if len(window) < 2:
        return window
    present = {c.document.corpus for c in window}
    best = window[0].score
    for corpus in (Corpus.DOCS, Corpus.CODE):
        if corpus in present:
            continue
        pool = [c for c in rest if c.document.corpus is corpus and c.score >= 0.25 * best]
        if not pool:
            continue
        chosen = max(pool, key=lambda c: c.score)
        chosen.reasons.append(Reason("mixed-corpora", 1.0, f"keeps one {corpus} result"))
        window = [*window[:-1], chosen]
        present.add(corpus)
    return window
