"""A reference page named by a longer dotted name than a twin among the candidates weighs less."""

from __future__ import annotations

import pytest

from scriptorium.domain.model import Block, Candidate, Corpus, Query, RefKind, SourceDocument
from scriptorium.ranking.qualified import qualified_twins
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import content_hash
from scriptorium.text import query_terms


def page(path: str, corpus: Corpus = Corpus.DOCS, score: float = 1.0) -> Candidate:
    body = "Clip (limit) the values in an array.\n"
    block = Block(RefKind.DOC, 1, 1, path, (path,), "top", body, 1)
    doc = SourceDocument("docs", path, body, corpus, content_hash(body), blocks=(block,))
    return Candidate(source="docs", document=doc, block=block, score=score)


def ask(text: str, candidates: list[Candidate], factor: float = 0.8) -> dict[str, float]:
    settings = RankingSettings(qualified_twin_factor=factor)
    terms = tuple(query_terms(text, **settings.token_options()))
    qualified_twins(settings, Query(text, terms, explain=True), candidates)
    return {c.document.path: c.score for c in candidates}


GENERAL = "reference/generated/numpy.clip.txt"
MASKED = "reference/generated/numpy.ma.clip.txt"


def test_the_qualified_twin_weighs_less_and_says_which_page_is_the_general_one():
    masked, general = page(MASKED, score=1.2), page(GENERAL)
    scores = ask("limit the values of an array", [masked, general])
    assert scores == {MASKED: pytest.approx(0.96), GENERAL: 1.0}
    (reason,) = masked.reasons
    assert (reason.name, reason.weight) == ("qualified-twin", 0.8)
    assert "numpy.clip" in reason.detail
    assert not general.reasons


def test_a_query_naming_what_the_twin_adds_leaves_it_alone():
    scores = ask("clip a masked array ma", [page(MASKED, score=1.2), page(GENERAL)])
    assert scores == {MASKED: 1.2, GENERAL: 1.0}


@pytest.mark.parametrize(
    "others",
    [
        [GENERAL.replace("numpy.clip", "torch.clip")],  # another package's page
        [GENERAL.replace("numpy.clip", "numpy.clamp")],  # another name
        ["reference/generated/clip.txt"],  # not a dotted name
    ],
)
def test_no_general_twin_no_change(others: list[str]):
    scores = ask("limit the values", [page(MASKED, score=1.2), *map(page, others)])
    assert scores[MASKED] == 1.2


def test_version_numbers_are_not_qualified_names():
    """Release notes 1.2.3 beside 1.3 are two releases, not a function and its twin."""
    scores = ask("what changed", [page("notes/1.2.3.md", score=1.2), page("notes/1.3.md")])
    assert scores["notes/1.2.3.md"] == 1.2


def test_code_files_and_the_factor_one_are_left_alone():
    scores = ask("limit the values", [page(MASKED, Corpus.CODE, 1.2), page(GENERAL, Corpus.CODE)])
    assert scores[MASKED] == 1.2
    assert ask("limit the values", [page(MASKED, score=1.2), page(GENERAL)], 1.0)[MASKED] == 1.2
