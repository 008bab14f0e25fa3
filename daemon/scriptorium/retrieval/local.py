"""The locally indexed sources' side of a search: lexical candidates from the served generation."""

from __future__ import annotations

from scriptorium.domain.model import Query
from scriptorium.index.builder import Indexer
from scriptorium.index.schema import doc_term
from scriptorium.index.searcher import LexicalHit, lexical_search
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.ranking.settings import RankingSettings
from scriptorium.ranking.signals import named_files, query_names
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

    def named_files(self, text: str) -> frozenset[tuple[str, str]]:
        """The served files ``text`` names by path or module name (when that lever is on)."""
        if self.ranking.named_file_factor == 1.0:
            return frozenset()
        return named_files(
            text, self.indexer.snapshot.files_ending, modules=self.ranking.named_modules
        )

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
            symbols=query_names(
                query.text,
                identifiers_only=ranking.definition_identifiers(query.text),
                limit=ranking.max_query_terms,
            )
            if ranking.definition_candidates and ranking.definition_factor > 1.0
            else (),
            symbol_limit=ranking.definition_candidates,
            symbol_reach=(ranking.window(query.top_k), ranking.definition_factor),
            term_weights=query.weights,
            documents=[doc_term(s, p) for s, p in sorted(query.files)]
            if ranking.named_file_factor > 1.0
            else (),
            document_limit=ranking.named_file_candidates,
        )
