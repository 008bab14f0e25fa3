"""The locally indexed sources' side of a search: lexical candidates from the served generation."""

from __future__ import annotations

from scriptorium.domain.model import Query
from scriptorium.index.builder import Indexer
from scriptorium.index.searcher import LexicalHit, lexical_search
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.ranking.settings import RankingSettings
from scriptorium.ranking.signals import query_names
from scriptorium.sources.remote import SearchBatch


class LocalCandidates:
    """Candidates for a query from the served generation (what the local provider offers)."""

    def __init__(self, indexer: Indexer, ranking: RankingSettings, pipeline: Pipeline) -> None:
        self.indexer = indexer
        self.ranking = ranking
        self.pipeline = pipeline

    def batch(self, query: Query) -> SearchBatch:
        """The local provider's candidates (no listing: ``*`` has no terms)."""
        if not query.terms:
            return SearchBatch()
        return SearchBatch(self.pipeline.candidates(query, self.lexical_hits(query)))

    def lexical_hits(self, query: Query) -> list[LexicalHit]:
        snapshot = self.indexer.snapshot
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
            term_weights=query.weights,
        )
