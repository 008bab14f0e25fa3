"""The path's boost per corpus (``docs_path_weight``): documentation blocks scored as with that
boost, code blocks as with ``path_weight``, in one query over both corpora."""

from __future__ import annotations

import shutil

import pytest

from scriptorium.engine.local import LocalEngine
from scriptorium.index.searcher import FieldWeights, lexical_search
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from tests.support.daemon import CORPUS, write_fastapi_config

TERMS = ["background", "task"]


@pytest.fixture(scope="module")
def engine(fastapi_corpus, tmp_path_factory) -> LocalEngine:
    root = tmp_path_factory.mktemp("path-weights")
    corpus = root / "corpus"
    docs = corpus / "docs/en/docs/tutorial"
    docs.mkdir(parents=True)
    shutil.copy(CORPUS / "docs/en/docs/tutorial/background-tasks.md", docs)
    shutil.copy(CORPUS / "docs/en/docs/tutorial/body-fields.md", docs)
    (corpus / "fastapi").mkdir()
    shutil.copy(CORPUS / "fastapi/background.py", corpus / "fastapi")
    for empty in ("docs/ja/docs", "docs/zh/docs", "docs_src"):
        (corpus / empty).mkdir(parents=True)
    config = write_fastapi_config(root / "c.toml", corpus)
    built = LocalEngine(load_settings(config, state_dir=str(root / "state")), load_registry())
    built.indexer.load_or_build()
    return built


def _scores(engine: LocalEngine, weights: FieldWeights, **kwargs) -> dict[tuple[str, int], float]:
    hits = lexical_search(engine.indexer.snapshot, TERMS, weights, 200, **kwargs)
    return {(h.doc.path, h.block_index): h.score for h in hits}


def _corpus_of(engine: LocalEngine, path: str) -> str:
    return "code" if path.endswith(".py") else "docs"


@pytest.mark.parametrize("docs_path", [1.0, 0.2])
def test_each_corpus_is_scored_with_its_own_path_boost(engine, docs_path):
    mixed = _scores(engine, FieldWeights(path=0.5, docs_path=docs_path))
    as_docs = _scores(engine, FieldWeights(path=docs_path))
    as_code = _scores(engine, FieldWeights(path=0.5))
    assert {_corpus_of(engine, path) for path, _ in mixed} == {"docs", "code"}
    assert mixed.keys() == as_code.keys()
    for key, score in mixed.items():
        expected = as_docs[key] if _corpus_of(engine, key[0]) == "docs" else as_code[key]
        assert score == pytest.approx(expected, rel=1e-5), key
    # The boost moved the documentation scores, so the check above is not vacuous.
    docs_keys = [k for k in mixed if _corpus_of(engine, k[0]) == "docs"]
    assert any(as_docs[k] != pytest.approx(as_code[k], rel=1e-5) for k in docs_keys)


def test_a_search_of_one_corpus_uses_that_corpus_boost(engine):
    weights = FieldWeights(path=0.5, docs_path=1.0)
    assert _scores(engine, weights, corpora=["docs"]) == pytest.approx(
        _scores(engine, FieldWeights(path=1.0), corpora=["docs"])
    )
    assert _scores(engine, weights, corpora=["code"]) == pytest.approx(
        _scores(engine, FieldWeights(path=0.5), corpora=["code"])
    )


@pytest.mark.parametrize("corpus", ["docs", "code"])
def test_a_pool_of_one_corpus_holds_that_corpus_of_the_whole_search(engine, corpus):
    # A corpus's pool leaves the other corpus out (``restrict``): the same blocks with the
    # same scores as the search of both corpora has for that corpus.
    weights = FieldWeights(path=0.5)
    both = _scores(engine, weights)
    one = _scores(engine, weights, corpora=[corpus])
    expected = {key: score for key, score in both.items() if _corpus_of(engine, key[0]) == corpus}
    assert one and len(one) < len(both)
    assert one == pytest.approx(expected, rel=1e-6)


def test_docs_path_weight_defaults_to_path_weight():
    from scriptorium.settings.ranking import ranking_settings

    assert ranking_settings({"path_weight": 0.8}).weights.path_for("docs") == 0.8
    both = ranking_settings({"path_weight": 0.8, "docs_path_weight": 1.2}).weights
    assert (both.path_for("docs"), both.path_for("code")) == (1.2, 0.8)
