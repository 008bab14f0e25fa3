"""The ranking pipeline: lexical hits → fused → priors → mode → ordered, diversified window.

Each stage records what it kept and dropped so ``explain`` can answer "why this result?".
Every lever has a setting in ``RankingSettings`` (settings/ranking.py); the defaults are the
ones the evaluation suite supports (see docs/ranking.md for the measurements). The order the
stages run in is ``Ranker``'s (ranking/ranker.py); what a query says is in ranking/signals.py,
what kind of question it is in ranking/questions.py, and what it decides for the priors in
ranking/query_priors.py, the priors' levers in
ranking/priors.py, what a path says in ranking/paths.py, which query terms a candidate covers
in ranking/coverage.py, the diversified window in ranking/window.py. One method per stage,
sharing the helpers below them.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence

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
from scriptorium.ranking.bodies import renders_from_code  # noqa: F401 (also from here)
from scriptorium.ranking.coverage import document_evidence, term_coverage
from scriptorium.ranking.modes import RankingMode
from scriptorium.ranking.priors import SearchPriors, switched_on
from scriptorium.ranking.qualified import qualified_twins
from scriptorium.ranking.signals import typed_words
from scriptorium.ranking.window import Window, below_cut, diversify, held_back_why
from scriptorium.settings.ranking import (  # noqa: F401 (also imported from here)
    DEFAULT_CLASS_WEIGHTS,
    RANKING_KEYS,
    RankingSettings,
)
from scriptorium.text import Wanted, best_line, query_terms, tokenize
from scriptorium.text.snippets import ScreenMemo

_NAME_SEGMENTS = re.compile(r"[./:-]+")


LocationOf = Callable[[Candidate], str]


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
                False,
                hit.message,
                hit.place,
            )
            for hit in hits
        ]

    def anchor(
        self, query: Query, candidates: list[Candidate], wanted: Wanted | None = None
    ) -> None:
        """Centre code candidates on their best matching line (done for the final window only).

        Lines are matched on plain tokens as well as the query's (possibly stemmed) terms
        (``wanted``, made once per search by :meth:`anchor_terms`). A code block where no line
        matches but whose file path does becomes a file-level result anchored at line 1: the
        path, not the code, is what answered.
        """
        if wanted is None:
            wanted = self.anchor_terms(query)
        terms = wanted.given
        for cand in candidates:
            block = cand.block
            if block.kind is RefKind.CODE and cand.anchor_line is None:
                lines = self.lines_of(cand.document)
                best = best_line(
                    lines,
                    wanted,
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

    @staticmethod
    def anchor_terms(query: Query) -> Wanted:
        """The terms code results are anchored by: the query's and its plain tokens."""
        return Wanted(set(query.terms) | set(query_terms(query.text)))

    def _settle(
        self,
        query: Query,
        window: list[Candidate],
        location_of: LocationOf,
        wanted: Wanted | None = None,
    ) -> None:
        """Anchor the window's code results and give each its final location."""
        self.anchor(query, window, wanted)
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
        wanted = self.anchor_terms(query)
        for cand in window:
            if len(kept) >= count:
                break
            used += 1
            self._settle(query, [cand], location_of, wanted)
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
        self,
        query: Query,
        candidates: list[Candidate],
        source_class: Callable[[str], str],
        translations: frozenset[str] = frozenset(),
    ) -> list[StageDrop]:
        """Weigh each candidate by the levers of ranking/priors.py in their order (those that
        can change a score in this search); drop those a lever rules out, return them.
        ``translations`` names the sources whose root is a translation's folder."""
        settings = self.settings
        document_evidence(settings, query, candidates)
        term_coverage(settings, query, candidates)
        qualified_twins(settings, query, candidates)
        search = SearchPriors.of(query, settings, source_class, translations)
        levers = switched_on(search)
        drops: list[StageDrop] = []
        kept = []
        for cand in candidates:
            for lever in levers:
                why = lever(cand, search)
                if why is not None:
                    drops.append(_drop(cand, why, query.explain, cand.document.path))
                    break
            else:
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
        """The first ``top_k`` results, with the de-duplication drops and the diversity drops.

        Sorted by score (then location and range), de-duplicated, diversified into a window
        of ``settings.window(top_k)`` results, cut to ``top_k`` (anchoring code results on
        the way when a query is given), mixed across corpora when the mode prefers it.
        """
        explain = query is not None and query.explain
        _sort(candidates, location_of, everyone=explain or query is None)
        unique, dedup_drops = _dedupe(candidates, explain)
        said = typed_words(query.text) if query is not None else frozenset()
        shaped = diversify(self.settings, unique, self.settings.window(top_k), said)
        if query is not None:
            final, below = self._settle_first(
                query, shaped.window[: shaped.size], location_of, top_k
            )
            below += shaped.window[shaped.size :]
        else:
            final, below = shaped.window[:top_k], shaped.window[top_k:]
        displaced: list[Candidate] = []
        if prefer_mixed:
            final, displaced = self._mixed(query, final, below + shaped.overflow, location_of)
        diversity_drops = self._diversity_drops(shaped, final, below, displaced, top_k, explain)
        return final, dedup_drops, diversity_drops

    def _mixed(
        self,
        query: Query | None,
        final: list[Candidate],
        rest: list[Candidate],
        location_of: LocationOf,
    ) -> tuple[list[Candidate], list[Candidate]]:
        """The results with one docs and one code result kept, and the results they displaced."""
        mixed = _ensure_mixed(final, rest)
        chosen = {id(c) for c in mixed}
        displaced = [c for c in final if id(c) not in chosen]
        if query is not None:
            self._settle(query, mixed, location_of)
            mixed = _one_result_per_file_level(mixed)
        return mixed, displaced

    def _diversity_drops(
        self,
        shaped: Window,
        final: list[Candidate],
        below: list[Candidate],
        displaced: list[Candidate],
        top_k: int,
        explain: bool,
    ) -> list[StageDrop]:
        """Why each candidate held back by diversity is missing (and, explained, each below
        the cut)."""
        kept = {id(c) for c in final}
        # The cap is why a block is missing only if it scores as well as the last result kept;
        # below that the cut would have left it out anyway, and saying so is the honest answer.
        floor = final[-1].score if final else -math.inf
        capped = f"more than {self.settings.max_per_document} blocks from one document"
        drops = [
            _drop(c, held_back_why(c, shaped, capped, floor, top_k), explain)
            for c in shaped.overflow
            if id(c) not in kept
        ]
        drops += [
            _drop(c, "displaced to keep one docs and one code result", explain) for c in displaced
        ]
        if explain:
            # Why a candidate is missing is the usual question; below the cut is the usual answer.
            drops += [
                _drop(c, held_back_why(c, shaped, capped, floor, top_k), explain)
                if id(c) in shaped.backfilled
                else _drop(c, below_cut(top_k, c), explain)
                for c in below
                if id(c) not in kept
            ]
        return drops


def _sort(candidates: list[Candidate], location_of: LocationOf, everyone: bool) -> None:
    """Record each score as the rerank score, then sort by score, location and range."""
    for cand in candidates:
        cand.scores.rerank = cand.score
    _locate(candidates, location_of, everyone)
    candidates.sort(key=lambda c: (-c.score, c.location, c.block.start_line, c.block.end_line))


def _dedupe(candidates: list[Candidate], explain: bool) -> tuple[list[Candidate], list[StageDrop]]:
    """The candidates with each block once (the first, best-scored), and the drops of the rest."""
    seen: set[tuple] = set()
    unique: list[Candidate] = []
    drops: list[StageDrop] = []
    for cand in candidates:
        key = (cand.source, cand.document.path, cand.block.start_line, cand.block.end_line)
        if key in seen:
            drops.append(_drop(cand, "duplicate block", explain))
            continue
        seen.add(key)
        unique.append(cand)
    return unique, drops


def _first_reasons(hit: LexicalHit) -> list[Reason]:
    """What a candidate's first score was made of (explain only)."""
    if hit.lexical is None:
        return [Reason("bm25", round(hit.score, 4), "lexical score")]
    return [
        Reason("bm25", round(hit.lexical, 4), "lexical score"),
        Reason("semantic", round(hit.dense, 4), "cosine with the query"),
        Reason("hybrid", round(hit.score, 4), "lexical and semantic mixed"),
    ]


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


def held_back(candidates: list[Candidate], why: str) -> list[StageDrop]:
    """Explain's drops, with their refs, for candidates a provider left out before the
    ranking (reported with the retrieve stage)."""
    return [_drop(cand, why, True, cand.document.path) for cand in candidates]


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
