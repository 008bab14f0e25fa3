"""A block the semantic retriever adds is scored by the question's words as the lexical pool
would have scored it (``index.searcher.scores_within``): the same BM25 for the blocks the pool
holds, and a block past the pool's cut gets its own score, not 0."""

from __future__ import annotations

import pytest

from scriptorium.engine.local import LocalEngine
from scriptorium.index.schema import doc_term
from scriptorium.index.searcher import FieldWeights, lexical_search, scores_within
from tests.support.daemon import built_engine, fastapi_slice

QUESTIONS = [
    ["scope", "token"],
    ["secur", "api", "key", "header"],
    ["password", "bearer", "form"],
]


@pytest.fixture(scope="module")
def engine(fastapi_corpus, tmp_path_factory) -> LocalEngine:
    root = tmp_path_factory.mktemp("scores")
    return built_engine(root, fastapi_slice(root / "corpus", "fastapi/security", "docs_src"))


@pytest.mark.parametrize("terms", QUESTIONS)
def test_the_pools_blocks_score_as_the_pool_scored_them(engine, terms):
    snapshot = engine.indexer.snapshot
    pool = lexical_search(snapshot, terms, FieldWeights(), 30, corpora=["code"])
    assert pool
    documents = sorted({doc_term(h.doc.source, h.doc.path) for h in pool})
    scores = scores_within(snapshot, terms, FieldWeights(), documents, corpora=["code"])
    assert {h.bid: h.score for h in pool}.items() <= scores.items()


def test_a_block_past_the_cut_gets_its_own_score(engine):
    snapshot = engine.indexer.snapshot
    terms = QUESTIONS[0]
    deep = lexical_search(snapshot, terms, FieldWeights(), 40, corpora=["code"])
    cut = lexical_search(snapshot, terms, FieldWeights(), 5, corpora=["code"])
    beyond = [h for h in deep if h.bid not in {c.bid for c in cut}]
    assert beyond and all(h.score > 0 for h in beyond)
    documents = sorted({doc_term(h.doc.source, h.doc.path) for h in beyond})
    scores = scores_within(snapshot, terms, FieldWeights(), documents, corpora=["code"])
    assert [scores[h.bid] for h in beyond] == [h.score for h in beyond]
    assert max(scores[h.bid] for h in beyond) <= cut[-1].score
    # Blocks of those documents the words do not match are not listed; no documents, no query.
    assert scores_within(snapshot, terms, FieldWeights(), [], corpora=["code"]) == {}
