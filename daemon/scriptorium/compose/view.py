"""What composed calls (related, flow, guide) may see of the corpus: a read-only view.

Everything they need and nothing more: the served generation and its lines, local searches
and hits for refs, the source table, the ranking levers, and the per-generation tables.
"""

from __future__ import annotations

from collections.abc import Mapping

from scriptorium.compose.seeds import Seed, load_seeds
from scriptorium.compose.tables import CorpusTables
from scriptorium.domain.model import Candidate, Query, RefKind, SourceDocument
from scriptorium.domain.outcomes import SearchHit, SearchOutcome
from scriptorium.index.catalog import Snapshot
from scriptorium.index.served import ServedIndex
from scriptorium.ranking.paths import page_language
from scriptorium.results.hits import HitBuilder
from scriptorium.retrieval.search import SearchService
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import Source
from scriptorium.sources.catalog import SourceCatalog


class CorpusView:
    """The corpus as composed calls read it."""

    def __init__(
        self,
        catalog: SourceCatalog,
        indexer: ServedIndex,
        search: SearchService,
        hits: HitBuilder,
        tables: CorpusTables,
        translations: frozenset[str] = frozenset(),
    ) -> None:
        self._catalog = catalog
        self._indexer = indexer
        self._search = search
        self._hits = hits
        self._tables = tables
        self._translations = translations

    @property
    def snapshot(self) -> Snapshot:
        """The served generation (``Unavailable`` while the first one loads)."""
        return self._indexer.snapshot

    @property
    def by_name(self) -> dict[str, Source]:
        """The locally indexed sources by name."""
        return self._catalog.by_name

    @property
    def ranking(self) -> RankingSettings:
        return self._search.ranking

    def language(self, doc: SourceDocument) -> str:
        """The language ``doc`` is written in, as far as its place says (``page_language``)."""
        return page_language(doc.source, doc.path, self._translations)

    def lines_of(self, doc: SourceDocument) -> list[str]:
        return self._indexer.lines_of(doc)

    def make_query_from(
        self, text: str, *, top_k: int = 10, mode: str = "", sources=(), kinds=()
    ) -> Query:
        return self._search.query_from(text, top_k=top_k, mode=mode, sources=sources, kinds=kinds)

    def search_query(self, query: Query) -> SearchOutcome:
        """Search the locally indexed sources only."""
        return self._search.search_local(query)

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
            cand.location = self._hits.location_of(cand)
            hits.append(self._hits.hit(query, cand))
        return hits

    def topic_seeds(self, topic: str) -> list[Seed]:
        """Seeds for a topic when a flow has no usable refs: the best doc, then the best code."""
        query = self.make_query_from(topic, top_k=5)
        outcome = self.search_query(query)
        picked = [h.ref_id for h in outcome.hits if h.kind is RefKind.DOC][:1]
        picked += [h.ref_id for h in outcome.hits if h.kind is not RefKind.DOC][:1]
        seeds, _ = load_seeds(self.snapshot, picked, self.lines_of)
        return seeds

    def symbols(self, snapshot: Snapshot) -> Mapping[str, list[tuple[SourceDocument, int]]]:
        return self._tables.symbols(snapshot)

    def definitions_of(self, snapshot: Snapshot, name: str) -> int:
        """How many blocks define ``name`` (no document is made to count them)."""
        return self._tables.symbol_count(snapshot, name)

    def code_by_suffix(self, snapshot: Snapshot) -> Mapping[str, list[SourceDocument]]:
        return self._tables.code_by_suffix(snapshot)

    def code_by_folder(self, snapshot: Snapshot) -> Mapping[tuple[str, str], list[SourceDocument]]:
        return self._tables.code_by_folder(snapshot)

    def includers(self, snapshot: Snapshot) -> Mapping[str, list[SourceDocument]]:
        return self._tables.includers(snapshot)
