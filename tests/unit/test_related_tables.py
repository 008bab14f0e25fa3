"""The per-generation tables ExpandRelated looks things up in, tied to plain definitions."""

from __future__ import annotations

import random

import pytest

from scriptorium.compose.related import _FRAMEWORKS, folder_of, frameworks_in
from scriptorium.domain.model import Corpus
from scriptorium.engine.local import LocalEngine
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from tests.support.daemon import copy_security_slice, write_fastapi_config


@pytest.fixture(scope="module")
def engine(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> LocalEngine:
    work = tmp_path_factory.mktemp("related")
    corpus = copy_security_slice(work / "corpus", ("en",))
    settings = load_settings(write_fastapi_config(work / "config.toml", corpus))
    settings.state_dir = work / "state"
    settings.build_workers = 1
    engine = LocalEngine(settings, load_registry())
    engine.indexer.load_or_build()
    return engine


def _linear(engine: LocalEngine, suffix: str) -> list[str]:
    """What the lookup must equal: every code file ending with ``suffix`` at a segment
    boundary, ignoring case, in snapshot order."""
    suffix = suffix.lower()
    return [
        d.path
        for d in engine.indexer.snapshot.docs.values()
        if d.corpus is Corpus.CODE
        and (d.path.lower() == suffix or d.path.lower().endswith("/" + suffix))
    ]


def test_code_by_suffix_is_the_segment_aligned_case_blind_suffix_match(engine):
    table = engine.tables.code_by_suffix(engine.indexer.snapshot)
    paths = [d.path for d in engine.indexer.snapshot.docs.values() if d.corpus is Corpus.CODE]
    assert paths
    probes = {"py", "nowhere.py", "/".join(paths[0].split("/")[-2:]).upper(), paths[0][1:]}
    for path in paths:
        parts = path.split("/")
        probes.update("/".join(parts[i:]) for i in range(len(parts)))
    for probe in sorted(probes):
        assert [d.path for d in table.get(probe.lower(), [])] == _linear(engine, probe), probe
    # A suffix cut inside a segment ("ecurity/oauth2.py") finds nothing, like the scan.
    cut = paths[0].split("/")[-1][1:]
    assert cut and not table.get(cut.lower()) and not _linear(engine, cut)
    # Cached per generation: the same table until the snapshot changes.
    assert engine.tables.code_by_suffix(engine.indexer.snapshot) is table


@pytest.mark.parametrize(
    ("path", "folder"),
    [("a/b/c.py", "a/b"), ("c.py", "."), ("docs_src/app/main.py", "docs_src/app")],
)
def test_folder_is_the_parent_as_pure_posix_path_spells_it(path, folder):
    assert folder_of(path) == folder


def test_includers_rebuilt_from_remembered_pages_equal_a_fresh_scan(engine):
    def table() -> dict[str, list[str]]:
        engine.tables._derived.clear()  # as after an update: a new generation, the same pages
        return {
            k: [d.path for d in v]
            for k, v in engine.tables.includers(engine.indexer.snapshot).items()
        }

    engine.tables._includes = {}
    fresh = table()
    assert fresh and engine.tables._includes  # the slice's tutorial pages include its examples
    assert table() == fresh  # from the remembered pages this time
    # A page whose remembered includes are stale (another content hash) is scanned again.
    key = next(iter(engine.tables._includes))
    engine.tables._includes = {(key[0], key[1], "stale"): ("nowhere.py",)}
    assert table() == fresh


def _frameworks_plainly(text: str) -> frozenset[str]:
    return frozenset(name for name, pattern in _FRAMEWORKS.items() if pattern.search(text))


def test_frameworks_in_matches_trying_every_pattern():
    # The word prefilter skips patterns in ASCII text; it must never skip one that matches.
    pieces = [
        "FastAPI", "fastapi_app", "from fastapi import", "FASTAPI2", "starlette.", "Pydantic",
        "SQLModel", "sqlalchemy", "flask", "Flask(", "DJANGO", "express()", "Express ()",
        "require('express')", 'require("express")', "@SpringBootApplication", "springframework",
        "WebApplication", "WebApplicationFactory", "Microsoft.AspNetCore", "gin.Default()",
        "gin-gonic", "gin.default", "ſtarlette", "\u212aelvin", "é", "—", "_", ".", " ",
        "\n", "x", "9",
    ]  # fmt: skip
    rng = random.Random(7)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert frameworks_in(text) == _frameworks_plainly(text), text


def test_includers_are_the_code_files_each_include_names_with_its_case(engine):
    """Each include tail names the code files whose path is it or ends with "/" and it, case
    and all: the scan every page's includes are checked against here."""
    snapshot = engine.indexer.snapshot
    docs = list(snapshot.docs.values())
    code = [d.path for d in docs if d.corpus is Corpus.CODE]
    expected: dict[str, list[tuple[str, str]]] = {}
    for page in (d for d in docs if d.corpus is Corpus.DOCS):
        for tail in page.includes:
            for path in code:
                if path == tail or path.endswith("/" + tail):
                    expected.setdefault(path, []).append((page.source, page.path))
    engine.tables._derived.clear()
    engine.tables._includes = {}
    found = {
        path: [(d.source, d.path) for d in pages]
        for path, pages in engine.tables.includers(snapshot).items()
    }
    assert expected and found == expected
