"""Lexical candidate retrieval: our tokens in, BM25-scored blocks out.

Queries are built programmatically from pre-computed terms (never by parsing user text), so
query-syntax characters in a query are just text.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import tantivy

from scriptorium import telemetry
from scriptorium.index import schema as S
from scriptorium.index.catalog import Snapshot
from scriptorium.model import Block, SourceDocument


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """BM25 field boosts; the defaults are the ones the evaluation set supports."""

    body: float = 1.0
    heading: float = 1.0
    path: float = 0.5


@dataclass(slots=True)
class LexicalHit:
    score: float
    doc: SourceDocument
    block_index: int

    @property
    def block(self) -> Block:
        return self.doc.blocks[self.block_index]


def _field_query(schema: tantivy.Schema, field: str, term: str, boost: float) -> tantivy.Query:
    query = tantivy.Query.term_query(schema, field, term, index_option="freq")
    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def build_query(
    schema: tantivy.Schema,
    terms: Collection[str],
    weights: FieldWeights,
    *,
    corpora: Collection[str] = (),
    sources: Collection[str] = (),
) -> tantivy.Query:
    clauses = []
    for term in terms:
        for field, boost in (
            (S.BODY, weights.body),
            (S.HEADING, weights.heading),
            (S.PATH, weights.path),
        ):
            if boost > 0:
                clauses.append((tantivy.Occur.Should, _field_query(schema, field, term, boost)))
    matcher = tantivy.Query.boolean_query(clauses)
    filters = []
    if corpora:
        filters.append(tantivy.Query.term_set_query(schema, S.CORPUS, sorted(corpora)))
    if sources:
        filters.append(tantivy.Query.term_set_query(schema, S.SOURCE, sorted(sources)))
    if not filters:
        return matcher
    must = [(tantivy.Occur.Must, matcher)]
    must += [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters]
    return tantivy.Query.boolean_query(must)


@telemetry.traced(telemetry.RETRIEVE, telemetry.describe_retrieval)
def lexical_search(
    snapshot: Snapshot,
    terms: Collection[str],
    weights: FieldWeights,
    limit: int,
    *,
    corpora: Collection[str] = (),
    sources: Collection[str] = (),
) -> list[LexicalHit]:
    if not terms:
        return []
    query = build_query(snapshot.index.schema, terms, weights, corpora=corpora, sources=sources)
    # ``hits`` builds a new list on every access: read it once.
    found = snapshot.searcher.search(query, limit, count=False).hits
    if not found:
        return []
    ids = snapshot.searcher.fast_field_values(S.BID, [address for _, address in found])
    blocks = snapshot.blocks
    hits = []
    for (score, _), bid in zip(found, ids, strict=True):
        entry = blocks.get(bid) if bid is not None else None
        if entry is not None:
            hits.append(LexicalHit(float(score), entry[0], entry[1]))
    return hits
