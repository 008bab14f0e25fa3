"""From one provider's (or the pooled) candidates to a search outcome.

The ranker orders them; here the window becomes hits, and the outcome says when it abstains
(nothing left, conflicting sources, too little of the query covered) and what the hits cost.
"""

from __future__ import annotations

from scriptorium import telemetry
from scriptorium.domain.model import Candidate, Query
from scriptorium.domain.outcomes import SearchOutcome, UnderstoodQuery
from scriptorium.index.served import ServedIndex
from scriptorium.ranking.ranker import Ranker
from scriptorium.ranking.signals import coverage
from scriptorium.results.budget import apply_budget, tokens_of
from scriptorium.results.hits import HitBuilder, conflicts_in
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.catalog import SourceCatalog
from scriptorium.sources.remote import SearchBatch


class Answerer:
    """Ranks a batch of candidates and builds the outcome (the provider chain's ``rank``)."""

    def __init__(
        self,
        ranker: Ranker,
        hits: HitBuilder,
        catalog: SourceCatalog,
        indexer: ServedIndex,
        ranking: RankingSettings,
    ) -> None:
        self.ranker = ranker
        self.hits = hits
        self.catalog = catalog
        self.indexer = indexer
        self.ranking = ranking

    def answer(self, query: Query, batch: SearchBatch) -> SearchOutcome:
        outcome = new_outcome(query)
        if batch.listing:
            return self._listing(query, batch.candidates, outcome)
        ranked = self.ranker.run(query, batch.candidates, batch.held_back)
        window = ranked.window
        if not window:
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            outcome.stages = ranked.stages if query.explain else []
            return outcome
        outcome.hits = telemetry.build_results(self.hits.hit, query, window)
        outcome.provider = "local"
        conflicts = conflicts_in(window)
        if conflicts:
            outcome.conflicts = conflicts
            outcome.abstained, outcome.abstain_reason = True, "conflicting_sources"
        elif batch.confident is False or (
            batch.confident is None and self._unsure(query, window[0])
        ):
            outcome.abstained, outcome.abstain_reason = True, "low_confidence"
        self._finish(query, outcome, ranked.stages)
        return outcome

    def _listing(
        self, query: Query, candidates: list[Candidate], outcome: SearchOutcome
    ) -> SearchOutcome:
        ranked = self.ranker.listing(query, candidates)
        outcome.hits = [self.hits.hit(query, cand) for cand in ranked.window]
        if not outcome.hits:
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            return outcome
        self._finish(query, outcome, ranked.stages)
        return outcome

    @staticmethod
    def _finish(query: Query, outcome: SearchOutcome, stages: list) -> None:
        """Fit the hits into the budget; keep the explanation only for an explained search."""
        if query.token_budget > 0:
            outcome.tokens_used = apply_budget(outcome.hits, query.token_budget)
        else:
            outcome.tokens_used = tokens_of(outcome.hits)
        if query.explain:
            outcome.stages = stages
        else:
            for hit in outcome.hits:
                hit.reasons = []

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
        remote = self.catalog.remote_by_name.get(cand.source)
        if remote is not None:
            return remote.term_stats(cand)
        searcher = self.indexer.snapshot.searcher
        return (
            lambda term: searcher.doc_freq("body", term) + searcher.doc_freq("heading", term),
            searcher.num_docs,
        )


def new_outcome(query: Query) -> SearchOutcome:
    """An outcome with no hits yet (and, for an explained search, the understood query)."""
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
        docs_terms=list(query.phrase_names),
    )
    return SearchOutcome(hits=[], trace_id=trace_id, understood=understood)
