"""The fast paths of search and indexing give exactly what the plain computations give."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import shutil
from pathlib import Path

import pytest

from scriptorium.domain.model import RefKind, Scores
from scriptorium.domain.outcomes import SearchHit, SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.grpc import convert
from scriptorium.index.catalog import MEMO_LIMIT, Snapshot
from scriptorium.index.generation import GenerationStore, SourceEntry, TableFragments
from scriptorium.index.store import BlobStore
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from scriptorium.text import best_line, normalize, tokenize
from scriptorium.text.normalize import collapse_whitespace
from scriptorium.text.preview import (
    _CJK_RE,
    _COMPILED_SWEEP,
    ELLIPSIS,
    MAX_OCCURRENCES,
    SWEEP_TERMS,
    _best_start,
    _best_start_sweep,
    _fold,
    _preview_terms,
    prepare,
    preview,
)
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, write_fastapi_config

tokenize_module = __import__("scriptorium.text.tokenize", fromlist=["_analyse"])
snippets_module = __import__("scriptorium.text.snippets", fromlist=["FIRST_SLICE"])

WORDS = [
    "user",
    "getUserName",
    "get_user",
    "HTTPException",
    "http",
    "exception",
    "oauth2",
    "OAuth2",
    "OAuth2PasswordBearer",
    "password",
    "bearer",
    "app.include_router",
    "include",
    "router",
    "Straße",
    "strasse",
    "ﬁle",
    "file",
    "検索",
    "エンジン",
    "depend",
    "dependencies",
    "Depends",
    "yield",
    "v22",
    "base64",
    "IPv4",
    "utf8",
    "XMLHttpRequest",
    "xml",
    "request",
    "respons",
    "response",
    "ᗉЏ",
    "a",
    "the",
    "to",
    "x" * 70,
    "İstanbul",
    "__init__",
    "init",
    "2fa",
    "fa",
]


# -- previews -------------------------------------------------------------------------------------


def reference_preview(text: str, query: str, max_chars: int = 200) -> str:
    """The preview contract computed the plain way: score every proposed window."""
    if max_chars <= 0:
        return ""
    collapsed = collapse_whitespace(text)
    size = len(collapsed)
    if size <= max_chars:
        return collapsed
    terms = list(_preview_terms(query))
    haystack = _fold(collapsed)
    lead = max_chars // 3
    best = None
    for term in terms:
        found, seen = haystack.find(term), 0
        while found >= 0 and seen < MAX_OCCURRENCES:
            seen += 1
            start = min(max(found - lead, 0), max(size - max_chars, 0))
            if start and collapsed[start - 1] != " " and collapsed[start] != " ":
                cjk = _CJK_RE.match(collapsed, start - 1) or _CJK_RE.match(collapsed, start)
                space = collapsed.find(" ", start, found + 1)
                if not cjk and space >= 0:
                    start = space + 1
            end = min(start + max_chars, size)
            score = sum(1 for t in terms if haystack.find(t, start, end) >= 0)
            if best is None or (-score, start) < best[:2]:
                best = (-score, start, end)
            found = haystack.find(term, found + 1)
    start, end = (0, max_chars) if best is None else best[1:]
    return f"{ELLIPSIS if start else ''}{collapsed[start:end]}{ELLIPSIS if end < size else ''}"


def test_preview_matches_the_plain_computation_on_random_texts():
    rng = random.Random(11)
    for _ in range(3000):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 90)))
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))
        width = rng.choice([200, 60, 12])
        expected = reference_preview(text, query, width)
        assert preview(text, query, width) == expected
        assert preview(prepare(text), query, width) == expected


def _random_windows(rng: random.Random, words: list[str], most_terms: int, cases: int):
    """``(collapsed, folded, terms, width)`` for ``cases`` random texts of ``words`` longer
    than their window, each asked for one to ``most_terms`` of the words."""
    for _ in range(cases):
        prepared = prepare(" ".join(rng.choice(words) for _ in range(rng.randint(1, 90))))
        query = " ".join(rng.choice(words) for _ in range(rng.randint(1, most_terms)))
        width = rng.choice([200, 60, 12, 5])
        if len(prepared.collapsed) > width:
            yield prepared.collapsed, prepared.folded, _preview_terms(query), width


def test_preview_sweep_and_window_scoring_agree():
    # Long queries take the sweep, short ones score windows term by term: both must find the
    # same window, also for terms longer than the window and windows of a few characters.
    for args in _random_windows(random.Random(17), WORDS, 12, 4000):
        assert _best_start_sweep(*args) == _best_start(*args), args


@pytest.mark.skipif(_COMPILED_SWEEP is None, reason="the compiled extension is not installed")
def test_the_compiled_sweep_finds_the_python_sweeps_window():
    # ASCII text: random words and one to forty terms (overlapping terms such as "aa" in
    # "aaaa", terms longer than the window, windows of a few characters), then every Python
    # file of the FastAPI corpus previewed for a pasted text of its own words.
    rng = random.Random(29)
    words = [w for w in WORDS if w.isascii()] + ["aa", "aaaa", "a_a", "x" * 30, "(", "."]
    compared = 0
    for args in _random_windows(rng, words, 40, 4000):
        terms = args[2]
        # Few terms are scored window by window in Python, many swept: both are the reference.
        reference = _best_start(*args) if len(terms) <= SWEEP_TERMS else _best_start_sweep(*args)
        assert _COMPILED_SWEEP(*args, MAX_OCCURRENCES) == reference, args
        compared += 1
    for path in sorted((CORPUS / "fastapi").rglob("*.py")):
        prepared = prepare(path.read_text("utf-8"))
        if not prepared.collapsed.isascii():
            continue
        pasted = prepared.collapsed.split(" ")
        for _ in range(3):
            at = rng.randrange(max(1, len(pasted) - 60))
            terms = _preview_terms(" ".join(pasted[at : at + 60]) + " zq_absent")
            args = (prepared.collapsed, prepared.folded, terms, 200)
            assert _COMPILED_SWEEP(*args, MAX_OCCURRENCES) == _best_start_sweep(*args), path
            compared += 1
    assert compared > 3000


def test_long_queries_preview_as_the_plain_computation():
    rng = random.Random(23)
    for _ in range(1500):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 90)))
        query = " ".join(rng.choice(WORDS) for _ in range(rng.randint(7, 14)))
        width = rng.choice([200, 60, 12])
        assert preview(prepare(text), query, width) == reference_preview(text, query, width)


def test_preview_of_corpus_pages_matches_the_plain_computation(fastapi_corpus, tmp_path: Path):
    page = tmp_path / "page.md"
    shutil.copyfile(CORPUS / "docs/en/docs/tutorial/dependencies/dependencies-with-yield.md", page)
    text = page.read_text("utf-8")[:4000]
    for query in (
        "dependencies with yield",
        "yield",
        "finally cleanup code",
        "nothing-here",
        "use a dependency with yield to open a database session and close it after the response",
    ):
        assert preview(text, query) == reference_preview(text, query)


# -- best line ------------------------------------------------------------------------------------


def reference_best_line(lines, terms, start=0, end=None):
    wanted = {normalize(t) for t in terms if t}
    best_index, best_count = None, 0
    for index in range(max(start, 0), len(lines) if end is None else min(end, len(lines))):
        count = len(wanted & set(tokenize(lines[index], drop_stopwords=False)))
        if count > best_count:
            best_index, best_count = index, count
    return best_index


def test_best_line_matches_tokenizing_every_line():
    rng = random.Random(5)
    for _ in range(5000):
        lines = [
            rng.choice(["", "    "]) + " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))
            for _ in range(rng.randint(0, 12))
        ]
        terms = [rng.choice(WORDS) for _ in range(rng.randint(0, 4))]
        start, end = rng.randint(-1, 5), rng.choice([None, rng.randint(0, 14)])
        assert best_line(lines, terms, start, end) == reference_best_line(lines, terms, start, end)


@pytest.mark.parametrize("first_slice", [1, 2, 5])
def test_best_line_screening_in_slices_matches_tokenizing_every_line(monkeypatch, first_slice):
    # Small slices, so that ranges of a dozen lines are screened slice by slice and the scan
    # stops early whenever a line holds every term that occurs in the range.
    monkeypatch.setattr(snippets_module, "FIRST_SLICE", first_slice)
    rng = random.Random(first_slice)
    for _ in range(3000):
        lines = [
            rng.choice(["", "    "]) + " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5)))
            for _ in range(rng.randint(0, 14))
        ]
        terms = [rng.choice(WORDS) for _ in range(rng.randint(0, 4))]
        start, end = rng.randint(-1, 5), rng.choice([None, rng.randint(0, 16)])
        assert best_line(lines, terms, start, end) == reference_best_line(lines, terms, start, end)


def test_best_line_with_a_shared_memo_matches_tokenizing_every_line(monkeypatch):
    # One memo across many texts and term sets, keyed by each text's content, as searches
    # share it: what one call screened must serve the next exactly.
    monkeypatch.setattr(snippets_module, "FIRST_SLICE", 3)
    memo = snippets_module.ScreenMemo(limit=500, max_items=2_000)  # small: emptied now and then
    rng = random.Random(11)
    texts = [
        [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5))) for _ in range(n)]
        for n in (0, 4, 9, 14, 14)
    ]
    for _ in range(4000):
        lines = rng.choice(texts)
        key = hashlib.sha256("\n".join(lines).encode()).hexdigest()
        terms = [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]
        start, end = rng.randint(-1, 5), rng.choice([None, rng.randint(0, 16)])
        expected = reference_best_line(lines, terms, start, end)
        assert best_line(lines, terms, start, end, memo=memo, key=key) == expected


def test_screen_memo_is_bounded_by_entries_and_by_line_numbers_held():
    memo = snippets_module.ScreenMemo(limit=3, max_items=10)
    memo.put(("a",), (1, 2, 3, 4))
    memo.put(("b",), (5, 6, 7, 8))
    assert memo.get(("a",)) == (1, 2, 3, 4)
    memo.put(("c",), (9, 10, 11))  # 11 line numbers: over the cap, so the table starts again
    assert memo.get(("a",)) is None and memo.get(("b",)) is None
    assert memo.get(("c",)) == (9, 10, 11)
    memo.put(("d",), True)
    memo.put(("e",), ())
    memo.put(("f",), ())  # a fourth entry: over the entry cap
    assert [memo.get((k,)) for k in "cdef"] == [None, None, None, ()]
    screen = object()  # a range's compiled screen, weighed by its bytes
    memo.put(("g",), screen, 9)
    assert memo.get(("f",)) == () and memo.get(("g",)) is screen
    memo.put(("h",), (1, 2))  # 2 more line numbers than the screen's weight leaves room for
    assert memo.get(("g",)) is None and memo.get(("h",)) == (1, 2)


def test_best_line_on_a_long_class_matches_tokenizing_every_line(fastapi_corpus):
    # fastapi/applications.py: the FastAPI class is one block of about 4,700 lines, with a few
    # non-ASCII lines; the answer is early for some queries, late or absent for others.
    lines = (CORPUS / "fastapi" / "applications.py").read_text("utf-8").split("\n")
    for terms in (
        ["fastapi", "fast", "api"],
        ["openapi_url", "openapi", "url"],
        ["redirect", "slashes"],
        ["lifespan", "shutdown", "deprecated"],
        ["websocket", "route", "nothingatall"],
        ["nothingatall"],
    ):
        assert best_line(lines, terms, 10) == reference_best_line(lines, terms, 10), terms


def test_best_line_skips_substrings_that_are_not_tokens():
    lines = ["response = build()", "def respons_helper(): pass", "x = Response()"]
    # "respons" (a stem) is a substring of every line but a token of the second only.
    assert best_line(lines, ["respons"]) == 1


# -- tokenizer ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "tokens"),
    [
        ("Parameters", ("parameters",)),
        ("HTTP", ("http",)),
        ("oauth2", ("oauth2", "oauth")),
        ("straße", ("strasse",)),
        ("ᗉЏ", ("ᗉџ", "ᗉ", "џ")),  # an uncased letter counts as lower case for camelCase
        ("HTTPException", ("httpexception", "http", "exception")),
    ],
)
def test_plain_words_take_the_short_path_with_the_same_tokens(word, tokens):
    assert tokenize_module._analyse(word, False, False) == tokens


def test_cache_turnover_keeps_results_and_bounds_memory(monkeypatch):
    monkeypatch.setattr(tokenize_module, "_CACHE_LIMIT", 64)
    monkeypatch.setattr(tokenize_module, "_caches", {})
    texts = [f"alpha{i} beta_{i} Gamma{i}Delta shared words" for i in range(300)]
    # The Python tokenizer's memo (the compiled one keeps its own).
    first = [tokenize_module.python_tokenize(t, True, False, True, True) for t in texts]
    again = [tokenize_module.python_tokenize(t, True, False, True, True) for t in texts]
    assert first == again == [tokenize(t) for t in texts]
    young, old = tokenize_module._caches[(True, False, True, True)]
    assert len(young) <= 64 + 8 and len(old) <= 64 + 8
    assert "shared" in young  # in use at every turnover, so it moved back into the young table


# -- generations ----------------------------------------------------------------------------------


@pytest.fixture
def small_corpus(fastapi_corpus, tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS / "docs/en/docs/tutorial/security", corpus / "docs/en/docs/tutorial")
    shutil.copytree(CORPUS / "fastapi/security", corpus / "fastapi/security")
    for empty in ("docs/ja/docs", "docs/zh/docs", "docs_src"):
        (corpus / empty).mkdir(parents=True)
    return corpus


def test_an_update_matches_a_fresh_load_and_records_true_checksums(tmp_path, small_corpus):
    config = write_fastapi_config(tmp_path / "c.toml", small_corpus)
    engine = LocalEngine(load_settings(config, state_dir=str(tmp_path / "state")), load_registry())
    engine.indexer.load_or_build()
    page = small_corpus / "docs/en/docs/tutorial/first-steps.md"
    page.write_text(page.read_text("utf-8") + "\n\n## Zqmarker\n\nzqmarker text\n", "utf-8")
    (small_corpus / "docs/en/docs/tutorial/get-current-user.md").unlink()
    assert engine.indexer.reconcile() is not None
    snapshot = engine.indexer.snapshot
    fresh = Snapshot.load(engine.indexer.store, snapshot.manifest)
    assert {k: (d.path, d.content_hash, i) for k, (d, i) in snapshot.blocks.items()} == {
        k: (d.path, d.content_hash, i) for k, (d, i) in fresh.blocks.items()
    }
    outcome = engine.searching.search_local(
        engine.searching.make_query(SearchParams(query="zqmarker"))
    )
    assert outcome.hits[0].location == "tutorial/first-steps#zqmarker"
    index_dir = engine.indexer.store.generation_dir(snapshot.generation) / "index"
    for rel, (size, digest) in snapshot.manifest.index_files.items():
        data = (index_dir / rel).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (size, digest)


def test_a_damaged_file_shared_with_the_parent_is_still_refused(tmp_path, small_corpus):
    config = write_fastapi_config(tmp_path / "c.toml", small_corpus)
    engine = LocalEngine(load_settings(config, state_dir=str(tmp_path / "state")), load_registry())
    engine.indexer.load_or_build()
    page = small_corpus / "docs/en/docs/tutorial/first-steps.md"
    page.write_text(page.read_text("utf-8") + "\n\nmore\n", "utf-8")
    # An edit the watch lands, below the share of deleted blocks that writes the index again
    # from the roots: the new generation shares its parent's files.
    engine.indexer.settings.rewrite_deleted_share = 1.0
    changed = {"en": ["tutorial/first-steps.md"]}
    manifest = engine.indexer.reconcile(changed) and engine.indexer.snapshot.manifest
    index_dir = engine.indexer.store.generation_dir(manifest.generation) / "index"
    linked = [p for p in index_dir.iterdir() if p.is_file() and p.stat().st_nlink > 1]
    victim = max(linked, key=lambda p: p.stat().st_size)
    # Flipped in place: truncating a file the engine has memory-mapped would fault its reads.
    with victim.open("r+b") as handle:
        handle.seek(-1, os.SEEK_END)
        last = handle.read(1)[0]
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([last ^ 0xFF]))
    with pytest.raises(Exception, match="checksum"):
        GenerationStore(tmp_path / "state").load_manifest(manifest.generation)


def test_file_tables_read_back_and_an_unchanged_table_is_not_encoded_again(
    tmp_path, small_corpus, monkeypatch
):
    from scriptorium.index import manifest as M

    config = write_fastapi_config(tmp_path / "c.toml", small_corpus)
    engine = LocalEngine(load_settings(config, state_dir=str(tmp_path / "state")), load_registry())
    engine.indexer.load_or_build()
    manifest = engine.indexer.snapshot.manifest
    loaded = GenerationStore(tmp_path / "state").load_manifest(manifest.generation)
    for name, source in manifest.sources.items():
        again = loaded.sources[name]
        assert (again.kind, again.root, again.fingerprint) == (
            source.kind,
            source.root,
            source.fingerprint,
        )
        assert len(again) == len(source) and again.totals() == source.totals()
        assert list(again.files.items()) == list(source.files.items())  # order kept
    # A table kept from the previous generation reuses its encoding; a changed one does not.
    encoded = []
    encode = M.encode_table
    monkeypatch.setattr(M, "encode_table", lambda files: encoded.append(1) or encode(files))
    fragments = TableFragments()
    manifest.serialize(fragments)
    assert len(encoded) == len(manifest.sources)
    name, source = next(iter(manifest.sources.items()))
    path, entry = next(iter(source.files.items()))
    manifest.sources[name] = SourceEntry(
        source.kind, source.root, source.fingerprint, {**source.files}
    )
    manifest.sources[name].files[path] = dataclasses.replace(entry, size=entry.size + 1)
    text, tables = manifest.serialize(fragments)
    assert len(encoded) == len(manifest.sources) + 1
    start, length, _ = json.loads(text)["sources"][name]["table"]
    assert M.decode_table(tables[start : start + length])[path].size == entry.size + 1


def test_blob_put_creates_its_shard_once_missing(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    store.put("ab" + "0" * 62, b"one")
    store.put("ab" + "1" * 62, b"two")
    assert store.path("ab" + "1" * 62).read_bytes() == b"two"
    assert not [p for p in (tmp_path / "blobs/ab").iterdir() if p.name.startswith(".")]


def test_snapshot_memo_is_emptied_at_its_cap(tmp_path, small_corpus):
    config = write_fastapi_config(tmp_path / "c.toml", small_corpus)
    engine = LocalEngine(load_settings(config, state_dir=str(tmp_path / "state")), load_registry())
    engine.indexer.load_or_build()
    snapshot = engine.indexer.snapshot
    for i in range(MEMO_LIMIT + 1):
        snapshot.remember(("k", i), i)
    assert len(snapshot.memo) == 1 and snapshot.memo[("k", MEMO_LIMIT)] == MEMO_LIMIT


# -- responses ------------------------------------------------------------------------------------


def test_results_filled_in_place_serialize_like_keyword_construction():
    hit = SearchHit(
        ref_id="r1.x",
        kind=RefKind.CODE,
        location="fastapi/routing.py#L10",
        url="file:///x#L10",
        title="APIRouter",
        section_path=["routing", "APIRouter"],
        start_line=3,
        end_line=40,
        snippet="class APIRouter:",
        preview="...APIRouter...",
        score=0.5,
        scores=Scores(),  # all zero: the message must still be present
        reasons=[],
        source="code",
        doc_version="abc",
        source_class="product",
        superseded_by="",
        effective_from=None,
        effective_to=None,
        parse_confidence=1.0,
        language="python",
        anchor_line=10,
    )
    expected = pb.SearchResult(
        ref_id=hit.ref_id,
        kind=pb.REF_KIND_CODE,
        location=hit.location,
        url=hit.url,
        title=hit.title,
        section_path=hit.section_path,
        start_line=3,
        end_line=40,
        snippet=hit.snippet,
        preview=hit.preview,
        score=0.5,
        scores=pb.Scores(),
        source="code",
        doc_version="abc",
        source_class="product",
        parse_confidence=1.0,
        language="python",
        anchor_line=10,
    )
    built = convert.search_result_to_pb(hit)
    assert built.HasField("scores")
    assert built.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )


def test_a_start_serves_without_decoding_file_tables_or_making_the_resolver(tmp_path, small_corpus):
    """Opening a generation decodes no file table and makes no resolver: the counts
    ListSources reports come from the raw tables, and the catch-up decodes and makes them."""
    config = write_fastapi_config(tmp_path / "c.toml", small_corpus)
    settings = load_settings(config, state_dir=str(tmp_path / "state"))
    built = LocalEngine(settings, load_registry())
    built.indexer.load_or_build()
    expected = {r.name: (r.document_count, r.block_count, r.bytes) for r in built.list_sources()}
    engine = LocalEngine(settings, load_registry())
    assert engine.indexer.open_newest()
    tables = engine.indexer.snapshot.manifest.sources.values()
    assert all(table._files is None for table in tables if len(table))
    assert engine.indexer._resolver is None
    reports = engine.list_sources()
    assert {r.name: (r.document_count, r.block_count, r.bytes) for r in reports} == expected
    assert all(table._files is None for table in tables if len(table))
    assert engine.indexer.catch_up() is None  # nothing changed on disk
    assert engine.indexer._resolver is not None
    assert all(table._files is not None for table in tables if len(table))
    assert {r.state for r in engine.list_sources()} == {"ready"}


def test_a_generation_of_the_previous_format_is_skipped_and_built_again(tmp_path, small_corpus):
    from scriptorium.index.generation import MANIFEST, MANIFEST_DIGEST

    config = write_fastapi_config(tmp_path / "c.toml", small_corpus)
    settings = load_settings(config, state_dir=str(tmp_path / "state"))
    LocalEngine(settings, load_registry()).indexer.load_or_build()
    gen_dir = GenerationStore(tmp_path / "state").generation_dir(1)
    data = json.loads((gen_dir / MANIFEST).read_text("utf-8"))
    data["format_version"] = 1  # as a generation written before the file tables moved out
    text = json.dumps(data)
    (gen_dir / MANIFEST).write_text(text, "utf-8")
    (gen_dir / MANIFEST_DIGEST).write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")
    indexer = LocalEngine(settings, load_registry()).indexer
    assert indexer.open_newest() is False  # not served, not refused as corrupt either
    assert gen_dir.is_dir()
    summary = indexer.load_or_build()
    assert summary is not None and summary.generation == 2
    assert indexer.snapshot.generation == 2
    assert indexer.snapshot.manifest.document_count == summary.documents > 0
