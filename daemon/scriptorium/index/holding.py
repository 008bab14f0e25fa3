"""Blocks by the words they hold: where a quoted error message's words all are
(ranking/messages.py), found over those few terms' postings rather than by the whole query."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import tantivy

from scriptorium.index import schema as S
from scriptorium.index.catalog import Snapshot
from scriptorium.index.queries import field_query, restrict
from scriptorium.index.searcher import LexicalHit, resolve_hits


def blocks_holding(
    snapshot: Snapshot,
    required: Sequence[Sequence[str]],
    limit: int,
    *,
    corpora: Collection[str] = (),
    sources: Collection[str] = (),
) -> list[LexicalHit]:
    """Up to ``limit`` blocks whose body holds every word of one of the ``required`` lists
    (where a quoted message's words are), the best by those words' BM25 first: a pass over
    a few terms' postings, not a second one over a pasted query's hundreds. The hits' scores
    are those words', not the query's."""
    lists = [words for words in required if words]
    if not lists:
        return []
    schema = snapshot.index.schema

    def every(words: Sequence[str]) -> tantivy.Query:
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, field_query(schema, S.BODY, word, 1.0)) for word in words]
        )

    holding = (
        every(lists[0])
        if len(lists) == 1
        else tantivy.Query.boolean_query([(tantivy.Occur.Should, every(w)) for w in lists])
    )
    query = restrict(schema, holding, corpora=corpora, sources=sources)
    return resolve_hits(snapshot, snapshot.searcher.search(query, limit, count=False).hits)
