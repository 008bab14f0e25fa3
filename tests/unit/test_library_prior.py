"""The library prior: a dependency's result yields to the project's own unless the query names
that library (by its name or by the package it is imported as) or is limited to it."""

from __future__ import annotations

from scriptorium.domain.libraries import inside_library, split_library_label
from scriptorium.domain.model import Block, Candidate, Corpus, Query, RefKind, SourceDocument
from scriptorium.ranking.libraries import library_prior
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import content_hash
from scriptorium.text import tokenize

SETTINGS = RankingSettings()


def candidate(source: str, path: str) -> Candidate:
    body = "def get(url, timeout=None):\n    pass\n"
    block = Block(RefKind.CODE, 1, 2, "get", ("get",), "L1", body, 0, symbol="get")
    doc = SourceDocument(source, path, body, Corpus.CODE, content_hash(body), blocks=(block,))
    return Candidate(source=source, document=doc, block=block, score=1.0)


def query(text: str, library: str = "") -> Query:
    return Query(
        text=text,
        terms=tuple(tokenize(text)),
        library=library,
        library_sources=frozenset({"deps"}),
    )


def weighed(text: str, source: str, path: str, library: str = "") -> float:
    cand = candidate(source, path)
    library_prior(SETTINGS, query(text, library), cand)
    return cand.score


def test_a_dependency_the_query_does_not_name_yields() -> None:
    assert weighed("set a timeout on a client", "deps", "httpx@0.28.1:httpx/_client.py") == (
        SETTINGS.library_factor
    )
    assert SETTINGS.library_factor < 1.0


def test_naming_the_library_or_its_package_or_limiting_to_it_keeps_it_whole() -> None:
    assert weighed("httpx client timeout", "deps", "httpx@0.28.1:httpx/_client.py") == 1.0
    # PyYAML is imported as yaml; a Go module is named by its last segment.
    assert weighed("yaml safe_load", "deps", "pyyaml@6.0.2:yaml/__init__.py") == 1.0
    assert weighed("uuid NewRandom", "deps", "github.com/google/uuid@v1.6.0:uuid.go") == 1.0
    assert weighed("client timeout", "deps", "httpx@0.28.1:httpx/_client.py", "httpx") == 1.0


def test_the_projects_own_files_are_never_weighed() -> None:
    assert weighed("client timeout", "code", "app/client.py") == 1.0
    # A path shaped like a label in a source that holds no libraries is the project's own.
    assert weighed("client timeout", "code", "notes@2024:plan.py") == 1.0


def test_labels() -> None:
    assert split_library_label("@types/node@22.15.30:index.d.ts") == ("@types/node", "22.15.30")
    assert split_library_label("docs/a@b.md") is None
    assert inside_library("httpx@0.28.1:httpx/_client.py") == "httpx/_client.py"
    assert inside_library("src/app.py") == "src/app.py"
