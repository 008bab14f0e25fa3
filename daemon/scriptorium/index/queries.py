"""tantivy queries made from our terms: BM25 over the text fields, restricted without
changing scores to corpora, sources, definitions and documents.

Queries are built programmatically from pre-computed terms (never by parsing user text), so
query-syntax characters in a query are just text.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import tantivy

from scriptorium.domain.model import Corpus
from scriptorium.index import schema as S
from scriptorium.index.catalog import Snapshot
from scriptorium.settings.fields import FieldWeights


def field_query(schema: tantivy.Schema, field: str, term: str, boost: float) -> tantivy.Query:
    query = tantivy.Query.term_query(schema, field, term, index_option="freq")
    return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)


def any_term(schema: tantivy.Schema, field: str, values: Collection[str]) -> tantivy.Query:
    """Blocks whose raw ``field`` is one of ``values``.

    A union of term queries: ``term_set_query`` builds an automaton over the term dictionary,
    which cost 0.3 ms per search here against 0.02 ms for the union.
    """
    terms = [tantivy.Query.term_query(schema, field, value) for value in sorted(values)]
    if len(terms) == 1:
        return terms[0]
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, term) for term in terms])


def build_query(
    schema: tantivy.Schema,
    terms: Sequence[str],
    weights: FieldWeights,
    *,
    corpora: Collection[str] = (),
    sources: Collection[str] = (),
    symbols: Collection[str] = (),
    term_weights: Sequence[float] = (),
    documents: Collection[str] = (),
    within: Collection[str] = (),
) -> tantivy.Query:
    """BM25 over the text fields for ``terms`` (each weighed by its ``term_weights`` entry,
    1 without one), restricted (without changing scores) to ``corpora``, ``sources``,
    blocks that define one of ``symbols``, blocks of the ``documents`` (raw doc terms) and,
    besides, blocks of the ``within`` documents (a library's files)."""
    matcher = build_matcher(schema, terms, weights, corpora=corpora, term_weights=term_weights)
    return restrict(
        schema,
        matcher,
        corpora=corpora,
        sources=sources,
        symbols=symbols,
        documents=documents,
        within=within,
    )


def build_matcher(
    schema: tantivy.Schema,
    terms: Sequence[str],
    weights: FieldWeights,
    *,
    corpora: Collection[str] = (),
    term_weights: Sequence[float] = (),
) -> tantivy.Query:
    """The scoring part of :func:`build_query`: three term queries per term, so a pasted
    text of hundreds of terms is built once per search, not once per restriction."""
    return _made(schema, _matcher_key(terms, weights, corpora, term_weights))


def matcher_of(
    snapshot: Snapshot,
    terms: Sequence[str],
    weights: FieldWeights,
    *,
    corpora: Collection[str] = (),
    term_weights: Sequence[float] = (),
) -> tantivy.Query:
    """:func:`build_matcher` over ``snapshot``'s index, kept with the generation for the
    search's other pools: each corpus's pool, and the scores of the blocks only the meaning
    found, ask the same one when the corpora weigh paths alike (the default), and a query
    is immutable. A pasted text's is hundreds of term queries."""
    key = _matcher_key(terms, weights, corpora, term_weights)
    held = snapshot.matchers.get(key)
    if held is None:
        held = _made(snapshot.index.schema, key)
        snapshot.remember_matcher(key, held)
    return held  # type: ignore[return-value]


# (terms, (body, heading, path) boosts, the corpus whose path weighs more and by how much,
# the terms' weights): all a matcher is made of.
_MatcherKey = tuple[tuple[str, ...], tuple[float, float, float], str, float, tuple[float, ...]]


def _matcher_key(
    terms: Sequence[str],
    weights: FieldWeights,
    corpora: Collection[str],
    term_weights: Sequence[float],
) -> _MatcherKey:
    # One path boost for every block (the lower of the two corpora's, or the one corpus's a
    # search is restricted to), and the difference added for the corpus that weighs it more.
    only = next(iter(corpora)) if len(corpora) == 1 else ""
    path_boosts = {name: weights.path_for(name) for name in ((only,) if only else tuple(Corpus))}
    path = min(path_boosts.values())
    extra = max(path_boosts, key=path_boosts.__getitem__)
    extra_boost = path_boosts[extra] - path
    return (
        tuple(terms),
        (weights.body, weights.heading, path),
        extra if extra_boost > 0 else "",
        extra_boost,
        tuple(term_weights[: len(terms)]),
    )


def _made(schema: tantivy.Schema, key: _MatcherKey) -> tantivy.Query:
    terms, (body, heading, path), extra, extra_boost, term_weights = key
    clauses = []
    more_path = []
    for index, term in enumerate(terms):
        weight = term_weights[index] if index < len(term_weights) else 1.0
        for field, boost in ((S.BODY, body), (S.HEADING, heading), (S.PATH, path)):
            if boost > 0:
                query = field_query(schema, field, term, boost * weight)
                clauses.append((tantivy.Occur.Should, query))
        if extra_boost > 0:
            query = field_query(schema, S.PATH, term, extra_boost * weight)
            more_path.append((tantivy.Occur.Should, query))
    if more_path:
        # Path terms score linearly in their boost, so this adds exactly the difference.
        only_extra = tantivy.Query.const_score_query(any_term(schema, S.CORPUS, (extra,)), 0.0)
        path_terms = tantivy.Query.boolean_query(more_path)
        clauses.append(
            (
                tantivy.Occur.Should,
                tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, only_extra), (tantivy.Occur.Must, path_terms)]
                ),
            )
        )
    return tantivy.Query.boolean_query(clauses)


def restrict(
    schema: tantivy.Schema,
    matcher: tantivy.Query,
    *,
    corpora: Collection[str] = (),
    sources: Collection[str] = (),
    symbols: Collection[str] = (),
    documents: Collection[str] = (),
    within: Collection[str] = (),
    require_corpora: bool = False,
) -> tantivy.Query:
    """``matcher`` restricted, without changing its scores, to the blocks of ``corpora`` and
    ``sources``, those defining one of ``symbols``, those of ``documents`` and, besides, those
    of the ``within`` documents (a library's files).

    Every block is of exactly one corpus, so ``corpora`` can keep its blocks two ways with the
    same hits and scores: by leaving out the blocks of the other corpora (the default), where
    tantivy runs the terms' union on its own, or (``require_corpora``) by requiring the blocks
    of these, where the union is intersected with them. Which is faster depends on the share
    of the index they hold (:func:`corpus_keeping`): intersecting with a corpus as long as most
    of the index costs a third more than leaving the rest out, and leaving out most of the
    index costs up to six times what intersecting with the few blocks left does."""
    filters = [
        any_term(schema, field, values)
        for field, values in (
            (S.CORPUS, corpora if require_corpora else ()),
            (S.SOURCE, sources),
            (S.SYMBOL, symbols),
            (S.DOC, documents),
            (S.DOC, within),
        )
        if values
    ]
    others = (
        [str(corpus) for corpus in Corpus if str(corpus) not in corpora]
        if corpora and not require_corpora
        else []
    )
    if not filters and not others:
        return matcher
    clauses = [(tantivy.Occur.Must, matcher)]
    clauses += [(tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0)) for f in filters]
    if others:
        clauses.append((tantivy.Occur.MustNot, any_term(schema, S.CORPUS, others)))
    return tantivy.Query.boolean_query(clauses)


def corpus_keeping(snapshot: Snapshot, corpora: Collection[str]) -> tuple[Collection[str], bool]:
    """How a search restricted to ``corpora`` keeps their blocks (:func:`restrict`): the
    corpora to restrict by, and whether to require their blocks rather than leave the others'
    out.

    No corpora to restrict by when the index holds no block of another corpus (a tree of code
    alone): leaving out nothing, tantivy runs the terms' union alone, a tenth faster for a
    pasted issue text over sympy. Required when they hold fewer blocks than the other
    corpora (the docs of a code-heavy tree: a pasted issue text's docs pool over sympy 0.88 →
    0.31 ms, a short question's 0.14 → 0.02 ms), left out otherwise. The hits and scores are
    the same every way. Document frequencies count deleted blocks too, so a corpus said absent
    is; the counts only choose the faster way."""
    if not corpora:
        return (), False
    searcher = snapshot.searcher
    wanted = sum(searcher.doc_freq(S.CORPUS, str(corpus)) for corpus in corpora)
    others = sum(
        searcher.doc_freq(S.CORPUS, str(corpus)) for corpus in Corpus if str(corpus) not in corpora
    )
    if not others:
        return (), False
    return corpora, wanted < others
