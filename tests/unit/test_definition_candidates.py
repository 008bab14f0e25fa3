"""Definitions a query names join the candidates by a second query, asked only when some
block defines one of the names: most words of a query name nothing, and the second query
costs as much as the first on a large index. When the query's deeper hits hold every block
that could join, the definitions are read from them instead, with the same result."""

from __future__ import annotations

import dataclasses

import pytest

from scriptorium.engine.local import LocalEngine
from scriptorium.index import searcher
from scriptorium.index.catalog import MATCHER_LIMIT
from scriptorium.index.queries import build_matcher, matcher_of
from scriptorium.index.schema import doc_term
from scriptorium.index.searcher import FieldWeights, lexical_search
from tests.support.daemon import built_engine, copy_security_slice, fastapi_slice


@pytest.fixture(scope="module")
def engine(fastapi_corpus, tmp_path_factory) -> LocalEngine:
    root = tmp_path_factory.mktemp("definitions")
    return built_engine(root, fastapi_slice(root / "corpus", "fastapi/security"))


class CountingSearcher:
    """The snapshot's searcher, counting the queries asked of it."""

    def __init__(self, searcher) -> None:
        self._searcher = searcher
        self.queries = 0

    def search(self, *args, **kwargs):
        self.queries += 1
        return self._searcher.search(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._searcher, name)


class CountingSnapshot:
    def __init__(self, snapshot) -> None:
        self._snapshot = snapshot
        self.searcher = CountingSearcher(snapshot.searcher)

    def __getattr__(self, name):
        return getattr(self._snapshot, name)


def _asked(engine: LocalEngine, **options) -> tuple[list[tuple[str, int]], int]:
    """The three best blocks for "scope token" with ``options``, and the queries it took."""
    snapshot = CountingSnapshot(engine.indexer.snapshot)
    hits = lexical_search(snapshot, ["scope", "token"], FieldWeights(), 3, **options)
    return [(h.doc.path, h.block.start_line) for h in hits], snapshot.searcher.queries


def _search(engine: LocalEngine, symbols: set[str]) -> tuple[list[tuple[str, int]], int]:
    return _asked(engine, symbols=symbols, symbol_limit=5, symbol_reach=(3, 100.0))


def test_names_no_block_defines_ask_no_second_query(engine):
    plain, queries = _search(engine, set())
    assert queries == 1 and len(plain) == 3
    undefined, queries = _search(engine, {"token", "bearer", "no_such_name"})
    assert undefined == plain
    assert queries == 1


def test_a_defined_name_still_brings_its_definition(engine):
    plain, _ = _search(engine, set())
    found, queries = _search(engine, {"oauth2passwordbearer", "no_such_name"})
    assert queries == 2
    # The class the query names joins the three best blocks, after them.
    assert found[:3] == plain and len(found) > 3
    assert any(path == "fastapi/security/oauth2.py" for path, _ in found[3:])


def test_a_corpus_without_a_block_asks_no_query(engine):
    """This tree is code alone: a pool of its docs is empty, known without searching."""

    def pool(corpora: list[str]) -> tuple[int, int]:
        named = [doc_term("code", "fastapi/security/oauth2.py")]
        hits, queries = _asked(engine, corpora=corpora, documents=named, document_limit=2)
        return len(hits), queries

    assert pool(["docs"]) == (0, 0)
    found, queries = pool(["code"])
    assert found >= 3 and queries == 2  # the pool, and the named file's blocks
    assert pool(["docs", "code"]) == (found, queries)


class RecordingSearcher(CountingSearcher):
    """The snapshot's searcher, keeping the queries asked of it."""

    def __init__(self, searcher) -> None:
        super().__init__(searcher)
        self.asked: list = []

    def search(self, query, *args, **kwargs):
        self.asked.append(query)
        return super().search(query, *args, **kwargs)


def _pool_query(engine: LocalEngine, corpus: str):
    """The query a pool of ``corpus`` asks for "scope token", and its hits."""
    snapshot = CountingSnapshot(engine.indexer.snapshot)
    snapshot.searcher = RecordingSearcher(engine.indexer.snapshot.searcher)
    hits = lexical_search(snapshot, ["scope", "token"], FieldWeights(), 5, corpora=[corpus])
    (query,) = snapshot.searcher.asked
    return query, [(h.doc.corpus, h.doc.path, h.score) for h in hits]


def test_a_pool_leaves_out_only_a_corpus_that_has_blocks(engine, tmp_path, monkeypatch):
    """A tree of code alone has no docs block to leave out: its code pool asks the terms'
    union alone (tantivy runs it faster), with the hits a search of both corpora gives. In a
    tree of both, the pool of the corpus with fewer blocks requires its corpus (tantivy
    intersects the union with its few blocks), the other leaves the smaller corpus out (the
    union runs nearly alone), and either way gives the same hits and scores."""
    query, code_only = _pool_query(engine, "code")
    both = lexical_search(engine.indexer.snapshot, ["scope", "token"], FieldWeights(), 5)
    assert code_only == [(h.doc.corpus, h.doc.path, h.score) for h in both]
    assert "MustNot" not in repr(query)

    mixed = built_engine(tmp_path, copy_security_slice(tmp_path / "corpus", ("en",)))
    searcher_ = mixed.indexer.snapshot.searcher
    sizes = {corpus: searcher_.doc_freq("corpus", corpus) for corpus in ("code", "docs")}
    smaller = min(sizes, key=sizes.__getitem__)
    assert sizes["code"] != sizes["docs"]
    for corpus in ("code", "docs"):
        query, hits = _pool_query(mixed, corpus)
        assert ("MustNot" in repr(query)) == (corpus != smaller)
        assert hits and {str(c) for c, _, _ in hits} == {corpus}
        for require in (False, True):
            monkeypatch.setattr(
                searcher, "corpus_keeping", lambda _s, corpora, _r=require: (corpora, _r)
            )
            assert _pool_query(mixed, corpus)[1] == hits
        monkeypatch.undo()


def test_a_pool_asks_nothing_of_a_named_file_of_the_other_corpus(tmp_path):
    """A pasted text names a module and a page. The docs pool counts the module in the named
    files' share but asks no query for it (none of its blocks can join), nor the code pool
    for the page: the hits are the ones asking gives."""
    from scriptorium.retrieval.local import _of_other_corpora

    mixed = built_engine(tmp_path, copy_security_slice(tmp_path / "corpus", ("en",)))
    snapshot = mixed.indexer.snapshot
    files = [("code", "fastapi/security/oauth2.py"), ("en", "tutorial/security/first-steps.md")]
    module, page = (doc_term(source, path) for source, path in files)
    assert _of_other_corpora(snapshot, files, ["docs"]) == {module}
    assert _of_other_corpora(snapshot, files, ["code"]) == {page}
    assert _of_other_corpora(snapshot, files, []) == frozenset()

    def pool(corpus: str, elsewhere: frozenset[str]) -> tuple[list, int]:
        counting = CountingSnapshot(snapshot)
        hits = lexical_search(
            counting,
            ["scope", "token"],
            FieldWeights(),
            3,
            corpora=[corpus],
            documents=[module, page],
            document_limit=4,
            elsewhere=elsewhere,
        )
        return [(h.doc.path, h.block.start_line, h.score) for h in hits], counting.searcher.queries

    for corpus in ("docs", "code"):
        asked, queries = pool(corpus, frozenset())
        skipped, fewer = pool(corpus, _of_other_corpora(snapshot, files, [corpus]))
        assert skipped == asked and len(asked) >= 3
        assert fewer < queries


def test_the_pools_of_a_search_share_one_matcher(engine):
    """Each corpus's pool asks the same scoring part when the corpora weigh paths alike (the
    default): it is made once per generation and search, and only the last few are kept."""
    snapshot = engine.indexer.snapshot
    terms = ["scope", "token"]
    docs = matcher_of(snapshot, terms, FieldWeights(), corpora=["docs"])
    assert matcher_of(snapshot, terms, FieldWeights(), corpora=["code"]) is docs
    made = build_matcher(snapshot.index.schema, terms, FieldWeights(), corpora=["docs"])
    assert repr(made) == repr(docs)
    own = dataclasses.replace(FieldWeights(), docs_path=2.0)
    assert matcher_of(snapshot, terms, own, corpora=["docs"]) is not matcher_of(
        snapshot, terms, own, corpora=["code"]
    )
    for i in range(3 * MATCHER_LIMIT):
        matcher_of(snapshot, [f"term{i}"], FieldWeights())
    assert len(snapshot.matchers) <= MATCHER_LIMIT


def test_definitions_read_from_the_deeper_hits_are_the_second_querys(engine, monkeypatch):
    """Both ways give the same blocks in the same order, the deeper read without scoring the
    blocks twice; a floor deeper than the read falls back to the second query."""
    ways: list[str] = []
    for name in ("_among", "_more"):
        way = getattr(searcher, name)
        monkeypatch.setattr(
            searcher, name, lambda *a, _way=way, _name=name: ways.append(_name) or _way(*a)
        )
    names = {"oauth2passwordbearer", "securityscopes", "httpbearer", "apikeyheader"}

    def asked(scan: int) -> list[tuple[str, int, float]]:
        monkeypatch.setattr(searcher, "DEEPER_SCAN", scan)
        snapshot = engine.indexer.snapshot
        hits = lexical_search(
            snapshot,
            ["scope", "token", "bearer"],
            FieldWeights(),
            3,
            symbols=names,
            symbol_limit=3,
            symbol_reach=(3, 100.0),
        )
        return [(h.doc.path, h.block.start_line, h.score) for h in hits]

    deeper = asked(200)
    assert ways == ["_among"]
    again = asked(0)  # reads only the three: the floor lies deeper
    assert ways == ["_among", "_among", "_more"]
    assert deeper == again
    assert len(deeper) > 3  # definitions joined
    monkeypatch.setattr(searcher, "LISTED_AT_MOST", 1)  # too many to list: the second query
    assert asked(200) == deeper
    assert ways[-2:] == ["_among", "_more"]


def test_named_files_blocks_read_from_the_deeper_hits_are_the_second_querys(engine, monkeypatch):
    """A named file's best blocks, read from the deeper hits, are what a query restricted to
    the file finds, file after file (each takes what the ones before left)."""
    asked_more: list[str] = []
    more = searcher._more
    monkeypatch.setattr(searcher, "_more", lambda *a: asked_more.append("more") or more(*a))
    named = [
        doc_term("code", "fastapi/security/oauth2.py"),
        doc_term("code", "fastapi/security/api_key.py"),
        doc_term("code", "fastapi/security/http.py"),
    ]

    def asked(scan: int) -> list[tuple[str, int, float]]:
        monkeypatch.setattr(searcher, "DEEPER_SCAN", scan)
        hits = lexical_search(
            engine.indexer.snapshot,
            ["scope", "token", "bearer"],
            FieldWeights(),
            2,
            documents=named,
            document_limit=4,
        )
        return [(h.doc.path, h.block.start_line, h.score) for h in hits]

    deeper = asked(200)
    assert asked_more == []  # every file's best blocks were among the deeper hits
    again = asked(0)
    assert asked_more  # only two hits read: the files' own queries were asked
    assert deeper == again
    # Two from the pool (oauth2.py's best), then two of each other file, tied ones included.
    assert [path.rsplit("/", 1)[1] for path, _, _ in deeper] == [
        "oauth2.py",
        "oauth2.py",
        "api_key.py",
        "api_key.py",
        "http.py",
        "http.py",
    ]
