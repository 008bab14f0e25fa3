"""The rerank stage on its own: what a plugin's answer does to the order, and what it may not
return. (Through a real daemon and a plugin installed from an entry point:
tests/e2e/test_third_party_plugin.py.)"""

from __future__ import annotations

import math

import pytest

from scriptorium.domain.model import Corpus, Query
from scriptorium.ranking.rerank import Reranker
from scriptorium.text import clip_at_whitespace
from tests.unit.test_fusion_priors import candidate

QUERY = Query(text="alpha", terms=("alpha",), explain=True)


def pool() -> list:
    return [
        candidate(Corpus.DOCS, f"{name}.md", f"alpha {name}\n", score)
        for name, score in (("a", 3.0), ("b", 2.0), ("c", 1.0), ("d", 0.5))
    ]


def reranker(answer, depth: int = 3) -> Reranker:
    return Reranker("test", depth, lambda **kw: answer(kw["candidates"]), lambda c: c.block.body)


def ranked(cands: list) -> list[tuple[str, float]]:
    return [(c.document.path, c.score) for c in sorted(cands, key=lambda c: -c.score)]


def test_scores_reorder_the_top_which_keeps_the_pipeline_scale_and_the_rest_stays():
    cands = pool()
    report = reranker(lambda top: [0.1, 0.2, 9.0]).apply(QUERY, cands)
    assert report.stage == "rerank:test" and report.kept == 3
    assert ranked(cands) == [("c.md", 3.0), ("b.md", 2.0), ("a.md", 1.0), ("d.md", 0.5)]
    reason = next(r for r in cands[2].reasons if r.name == "rerank:test")
    assert reason.weight == 9.0 and reason.detail == "rank 3 -> 1 of 3"


def test_none_leaves_the_order_and_ties_keep_their_rank():
    for answer in (lambda top: None, lambda top: [1.0] * len(top)):
        cands = pool()
        reranker(answer).apply(QUERY, cands)
        assert ranked(cands) == ranked(pool())


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (lambda top: [1.0], "ValueError"),
        (lambda top: "abc", "TypeError"),
        (lambda top: [True, False, True], "TypeError"),
        (lambda top: [1.0, math.nan, 0.0], "ValueError"),
        (lambda top: {"a": 1}, "TypeError"),
    ],
)
def test_a_wrong_answer_keeps_the_order_and_names_the_failure(answer, error, caplog):
    cands = pool()
    report = reranker(answer).apply(QUERY, cands)
    assert ranked(cands) == ranked(pool())
    assert report.stage == f"rerank:test failed ({error}), order kept"
    assert "reranker 'test' failed" in caplog.text and "alpha" not in caplog.text


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short text", 20, "short text"),
        ("one two three", 9, "one two"),  # "three" would be cut: it is left out
        ("one two three", 7, "one two"),  # the cut falls on a space
        ("one two  three", 8, "one two"),
        ("abcdefghij", 4, "abcd"),  # no whitespace: cut hard
    ],
)
def test_clip_at_whitespace(text: str, limit: int, expected: str) -> None:
    assert clip_at_whitespace(text, limit) == expected
