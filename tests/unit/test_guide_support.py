"""How GuideImplementation tells what its supporting refs cover (on a real slice index)."""

from __future__ import annotations

import pytest

from scriptorium.compose.guide import _mentioned, _unmentioned_terms
from scriptorium.compose.seeds import load_seeds
from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from scriptorium.text import query_terms, tokenize
from tests.support.daemon import copy_security_slice, write_fastapi_config


@pytest.fixture(scope="module")
def engine(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> LocalEngine:
    work = tmp_path_factory.mktemp("guide")
    corpus = copy_security_slice(work / "corpus", ("en",))
    settings = load_settings(write_fastapi_config(work / "config.toml", corpus))
    settings.state_dir = work / "state"
    settings.build_workers = 1
    engine = LocalEngine(settings, load_registry())
    engine.indexer.load_or_build()
    return engine


def _late_word(engine: LocalEngine, hit) -> str:
    """A word of the hit's text that comes after its first 64 distinct tokens."""
    seeds, _ = load_seeds(engine.indexer.snapshot, [hit.ref_id], engine.indexer.lines_of)
    ordered = list(dict.fromkeys(tokenize(seeds[0].text)))
    assert len(ordered) > 80, "the test needs a long supporting block"
    return next(t for t in ordered[70:] if t.isalpha() and t.isascii() and len(t) > 4)


def test_a_word_deep_in_a_supporting_ref_counts_as_mentioned(engine):
    outcome = engine.searching.search_local(
        engine.searching.make_query(SearchParams(query="oauth2 password bearer"))
    )
    hit = max(outcome.hits[:5], key=lambda h: len(h.snippet))
    word = _late_word(engine, hit)
    # Documents are read whole, not as a query capped at its first distinct terms.
    assert word not in query_terms(
        load_seeds(engine.indexer.snapshot, [hit.ref_id], engine.indexer.lines_of)[0][0].text
    )
    assert _unmentioned_terms(engine.view, [hit], word) == []
    assert _unmentioned_terms(engine.view, [hit], f"{word} zzyzxqv") == ["zzyzxqv"]


def test_a_framework_or_language_named_late_in_a_page_counts_as_mentioned(engine):
    outcome = engine.searching.search_local(
        engine.searching.make_query(SearchParams(query="oauth2 password bearer"))
    )
    hit = next(h for h in outcome.hits if h.kind.name == "DOC")
    seeds, _ = load_seeds(engine.indexer.snapshot, [hit.ref_id], engine.indexer.lines_of)
    ordered = list(dict.fromkeys(tokenize(seeds[0].doc.text[:5000])))
    word = next(t for t in ordered[70:] if t.isalpha() and t.isascii() and len(t) > 4)
    assert _mentioned(engine.view, [hit], word)
    assert not _mentioned(engine.view, [hit], "zzyzxqv")


def test_without_the_implementation_mode_a_guide_still_answers_and_says_so(engine):
    import asyncio

    from scriptorium.domain.outcomes import GuideParams

    removed = engine.registry.modes.pop("implementation")
    try:
        outcome = asyncio.run(engine.guide_implementation(GuideParams(topic="oauth2 login")))
    finally:
        engine.registry.modes["implementation"] = removed
    assert outcome.docs
    assert any("'implementation' ranking mode is not loaded" in a for a in outcome.assumptions)
    with_mode = asyncio.run(engine.guide_implementation(GuideParams(topic="oauth2 login")))
    assert not any("ranking mode is not loaded" in a for a in with_mode.assumptions)
