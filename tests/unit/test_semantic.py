"""The semantic retriever's parts that need no model: vector files, the partial file, passages
and the hybrid score."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json

import numpy as np
import pytest

from scriptorium.domain.model import Block, RefKind
from scriptorium.semantic import scan
from scriptorium.semantic import vectors as V
from scriptorium.semantic.passages import name_words, passage
from scriptorium.semantic.retriever import _rescore
from scriptorium.text.compiled import native_part
from tests.support.vector_files import format_2


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _index(count: int = 6, dims: int = 8) -> V.VectorIndex:
    rng = np.random.default_rng(7)
    bids = np.arange(10, 10 + count, dtype=np.int64) * 3
    corpora = np.array([V.DOCS, V.CODE] * (count // 2), dtype=np.uint8)
    return V.VectorIndex("m", 4, bids, corpora, _unit(rng.normal(size=(count, dims))))


def test_a_vector_file_reads_back_mapped(tmp_path):
    index = _index()
    path = tmp_path / "gen-4.vec"
    V.write(path, index)
    read = V.read(path)
    assert read.generation == 4 and read.model == "m"
    assert isinstance(read.matrix.base, np.memmap)  # mapped, served as a plain array
    assert not read.matrix.flags.writeable
    assert np.array_equal(read.bids, index.bids)
    assert np.allclose(read.matrix, index.matrix)
    assert not list(tmp_path.glob(".tmp-*"))


def test_passage_hashes_are_kept_and_a_first_format_file_still_reads(tmp_path):
    index = _index()
    hashes = np.array([V.text_hash(f"passage {i}") for i in range(len(index))], dtype=np.int64)
    hashed = V.VectorIndex("m", 4, index.bids, index.corpora, index.matrix, hashes)
    V.write(tmp_path / "gen-4.vec", hashed)
    assert np.array_equal(V.read(tmp_path / "gen-4.vec").texts, hashes)
    assert 0 not in hashes.tolist() and V.text_hash("a") == V.text_hash("a")
    # The first format: ids, corpora and rows, no hashes.
    parts = [index.bids.tobytes(), index.corpora.tobytes(), index.matrix.tobytes()]
    digest = hashlib.sha256(b"".join(parts)).hexdigest()
    meta = {"model": "m", "generation": 3, "count": 6, "dimensions": 8, "sha256": digest}
    data = bytearray(V.MAGIC_1 + json.dumps(meta).encode() + b"\n")
    for part in parts:
        data += b"\0" * (-len(data) % V.ALIGN) + part
    (tmp_path / "gen-3.vec").write_bytes(bytes(data))
    old = V.read(tmp_path / "gen-3.vec")
    assert old.texts is None and np.array_equal(old.matrix, index.matrix)


def test_a_vector_file_holds_rows_only_for_blocks_with_a_vector_and_serves_the_same(tmp_path):
    exact = _clustered(600, dims=16)  # every 50th block has no vector
    none = exact.corpora == V.NONE
    V.write(tmp_path / "gen-1.vec", exact)
    (tmp_path / "gen-0.vec").write_bytes(format_2(exact))
    compact, full = V.read(tmp_path / "gen-1.vec"), V.read(tmp_path / "gen-0.vec")
    assert compact.matrix.shape == (600 - int(none.sum()), 16) and full.dense is None
    assert (tmp_path / "gen-1.vec").stat().st_size < (tmp_path / "gen-0.vec").stat().st_size
    rows = np.arange(600)
    assert np.array_equal(compact.vectors(rows), full.vectors(rows))
    assert not compact.vectors(rows)[none].any()
    assert np.array_equal(compact.vectors(rows)[~none], exact.matrix[~none])
    coded, coded_full = compact.with_codes(), full.with_codes()
    assert np.array_equal(coded.codes, coded_full.codes)
    assert np.array_equal(coded.scales, coded_full.scales)
    rng = np.random.default_rng(5)
    for _ in range(10):
        query = _unit(exact.matrix[rng.integers(0, 600)] + 0.2 * rng.normal(size=(1, 16)))[0]
        for corpus in (V.DOCS, V.CODE, None):
            assert list(coded.nearest(query, 20, corpus)) == list(
                coded_full.nearest(query, 20, corpus)
            )
        bids = exact.bids[rng.integers(0, 600, size=40)]
        assert np.array_equal(
            coded.similarity(query, bids), coded_full.similarity(query, bids), equal_nan=True
        )
    # The header's count of vectors must agree with the blocks' corpora.
    data = (tmp_path / "gen-1.vec").read_bytes()
    count = int(json.loads(data[len(V.MAGIC) : data.index(b"\n", len(V.MAGIC))])["vectors"])
    (tmp_path / "gen-2.vec").write_bytes(
        data.replace(f'"vectors": {count}'.encode(), f'"vectors": {count - 1}'.encode(), 1)
    )
    with pytest.raises(V.CorruptVectorsError, match="do not match"):
        V.read(tmp_path / "gen-2.vec", verify=False)


def test_a_flipped_byte_refuses_the_file(tmp_path):
    path = tmp_path / "gen-4.vec"
    V.write(path, _index())
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(V.CorruptVectorsError, match="checksum"):
        V.read(path)
    path.write_bytes(bytes(data[:100]))
    with pytest.raises(V.CorruptVectorsError):
        V.read(path)


def test_nearest_and_similarity_follow_the_corpus_and_skip_unread_blocks():
    index = _index()
    query = index.matrix[2]
    first, score = next(index.nearest(query, 3))
    assert first == index.bids[2] and score == pytest.approx(1.0, abs=1e-5)
    code_only = [bid for bid, _ in index.nearest(query, 10, V.CODE)]
    assert set(code_only) == set(index.bids[index.corpora == V.CODE].tolist())
    index.corpora[2] = V.NONE
    assert index.bids[2] not in [bid for bid, _ in index.nearest(query, 10)]
    sims = index.similarity(query, np.array([index.bids[2], index.bids[4], 1], dtype=np.int64))
    assert np.isnan(sims[0]) and not np.isnan(sims[1]) and np.isnan(sims[2])


def test_nearest_reads_on_past_its_limit_in_cosine_order():
    index = _index(count=40)
    query = index.matrix[5]
    expected = np.argsort(-(index.matrix @ query), kind="stable")
    read = [bid for bid, _ in index.nearest(query, 4)]
    assert read == index.bids[expected].tolist()
    scores = [score for _, score in index.nearest(query, 4)]
    assert scores == sorted(scores, reverse=True)
    (head,) = index.heads(query, 4, [V.CODE])
    assert [bid for bid, _ in index.nearest(query, 4, V.CODE, head)] == [
        bid for bid, _ in index.nearest(query, 4, V.CODE)
    ]


def _clustered(count: int, dims: int = 384, seed: int = 3) -> V.VectorIndex:
    """Unit rows in a few tight clusters: near neighbours close together, as a corpus's are."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(8, dims))
    rows = centers[rng.integers(0, 8, size=count)] + 0.35 * rng.normal(size=(count, dims))
    corpora = rng.integers(0, 2, size=count).astype(np.uint8)
    corpora[::50] = V.NONE
    bids = np.arange(count, dtype=np.int64) * 7 + 1
    return V.VectorIndex("m", 1, bids, corpora, _unit(rows))


def test_the_nearest_over_int8_codes_are_the_exact_nearest_with_exact_cosines():
    exact = _clustered(3000)
    coded = exact.with_codes()
    assert coded.codes is not None and coded.codes.dtype == np.int8
    rng = np.random.default_rng(11)
    for _ in range(20):
        query = _unit(exact.matrix[rng.integers(0, 3000)] + 0.2 * rng.normal(size=(1, 384)))[0]
        for corpus in (V.DOCS, V.CODE, None):
            wanted = [r for r in zip(range(50), exact.nearest(query, 50, corpus), strict=False)]
            got = [r for r in zip(range(50), coded.nearest(query, 50, corpus), strict=False)]
            assert [b for _, (b, _) in got] == [b for _, (b, _) in wanted]
            assert np.allclose([c for _, (_, c) in got], [c for _, (_, c) in wanted], atol=1e-6)
    # One pass over the codes serves several corpora.
    docs_head, code_head = coded.heads(query, 5, [V.DOCS, V.CODE])
    assert list(coded.nearest(query, 5, V.CODE, code_head)) == list(coded.nearest(query, 5, V.CODE))
    assert list(coded.nearest(query, 5, V.DOCS, docs_head)) == list(coded.nearest(query, 5, V.DOCS))


def test_a_query_asked_again_takes_the_rows_its_index_chose_without_a_pass(monkeypatch):
    coded = _clustered(3000).with_codes()
    passes = []
    best_rows = scan.best_rows
    monkeypatch.setattr(
        scan, "best_rows", lambda *args: passes.append(args[-2:]) or best_rows(*args)
    )
    rng = np.random.default_rng(3)
    query, other = _unit(rng.normal(size=(2, 384)))
    first = list(coded.nearest(query, 50, V.CODE))
    assert list(coded.nearest(query, 50, V.CODE)) == first and len(passes) == 1
    # Another query, another limit or other corpora: a pass of its own.
    coded.heads(other, 50, [V.CODE])
    coded.heads(query, 60, [V.CODE])
    coded.heads(query, 50, [V.DOCS, V.CODE])
    assert len(passes) == 4
    # The rows are shared by every search that asks again: nobody may write into them.
    (head,) = coded.heads(query, 50, [V.CODE])
    with pytest.raises(ValueError):
        head[0] = 0
    # A new generation's index (made from the same vectors here) remembers nothing.
    renewed = dataclasses.replace(coded, generation=coded.generation + 1)
    assert list(renewed.nearest(query, 50, V.CODE)) == first and len(passes) == 5
    # Bounded: the queries asked last are kept.
    for row in _unit(rng.normal(size=(V.HEADS_MEMO + 10, 384))):
        renewed.heads(row, 50, [V.CODE])
    assert len(renewed.chosen._chosen) == V.HEADS_MEMO


def test_a_query_asked_again_reads_none_of_its_heads_rows(monkeypatch):
    """The order the head's rows were read in is kept with the rows the memo holds: a query
    asked again yields the same blocks and cosines without reading a row; another query, or
    a new generation's index, reads its own."""
    coded = _clustered(3000).with_codes()
    reads = []
    vectors = V.VectorIndex.vectors
    monkeypatch.setattr(
        V.VectorIndex, "vectors", lambda self, rows: reads.append(len(rows)) or vectors(self, rows)
    )
    rng = np.random.default_rng(5)
    query, other = _unit(rng.normal(size=(2, 384)))
    first = list(itertools.islice(coded.nearest(query, 50, V.CODE), 50))
    assert len(reads) == 1
    assert list(itertools.islice(coded.nearest(query, 50, V.CODE), 50)) == first
    assert len(reads) == 1
    list(itertools.islice(coded.nearest(other, 50, V.CODE), 50))
    assert len(reads) == 2
    renewed = dataclasses.replace(coded, generation=coded.generation + 1)
    assert list(itertools.islice(renewed.nearest(query, 50, V.CODE), 50)) == first
    assert len(reads) == 3
    # Read on past the head: the rest is read, as before.
    assert len(list(coded.nearest(query, 50, V.CODE))) > 50 and len(reads) == 4


@pytest.mark.parametrize(
    ("rows", "count"),
    # 40,000 rows: the compiled pass splits them between two threads (from 32,768); 25,000
    # kept is more than either half holds, so the merge keeps every row of one half.
    [
        *[(6000, count) for count in (0, 1, 7, 200, 5000)],
        *[(40_000, count) for count in (1, 200, 25_000)],
    ],
)
def test_the_compiled_choice_of_best_rows_is_the_reference_one(rows, count):
    if native_part("int8_best_rows") is None:
        pytest.skip("the compiled extension is not installed")
    rng = np.random.default_rng(5)
    codes, scales = scan.quantize(_unit(rng.normal(size=(rows, 48))).astype(np.float32))
    corpora = rng.integers(0, 2, size=rows).astype(np.uint8)
    corpora[::50] = V.NONE
    # Duplicated rows: equal scores at the margin, where the lower row is kept (over 40,000
    # rows some pairs lie on both sides of where the pass is split).
    half = rows // 2
    codes[half : half + 600], scales[half : half + 600] = (
        codes[half - 600 : half],
        scales[half - 600 : half],
    )
    wanted = [V.DOCS, V.CODE, None]
    for _ in range(10):
        query = scan.query_code(_unit(rng.normal(size=(1, 48)))[0])
        scores = scan.dots(codes, query) * scales
        expected = scan.reference_best_rows(scores, corpora, wanted, count)
        got = scan.best_rows(codes, query, scales, corpora, wanted, count)
        for corpus, corpus_rows, wanted_rows in zip(wanted, got, expected, strict=True):
            assert corpus_rows.tolist() == wanted_rows.tolist()
            of_corpus = np.flatnonzero(corpora != V.NONE if corpus is None else corpora == corpus)
            assert len(corpus_rows) == min(count, len(of_corpus))
            assert set(corpus_rows.tolist()) <= set(of_corpus.tolist())


def test_reading_on_past_the_codes_head_gives_every_row_once_by_exact_cosine():
    coded = _clustered(600, dims=16).with_codes()
    docs = coded.corpora == V.DOCS
    row = int(np.flatnonzero(docs)[0])
    query = coded.matrix[row]
    read = list(coded.nearest(query, 2, V.DOCS))  # a head of 200 rows, then the rest
    assert len(read) == int(docs.sum()) > 200
    assert sorted(b for b, _ in read) == sorted(coded.bids[docs].tolist())
    tail = [c for _, c in read[200:]]
    assert tail == sorted(tail, reverse=True)
    assert read[0] == (int(coded.bids[row]), pytest.approx(1.0, abs=1e-5))


def test_a_querys_code_is_its_code_as_a_row():
    from scriptorium.semantic import scan

    rng = np.random.default_rng(11)
    queries = [rng.normal(size=384).astype(np.float32) for _ in range(2000)]
    queries += [
        np.zeros(384, np.float32),
        np.full(384, 1e-30, np.float32),
        _unit(np.ones((1, 8)))[0],
    ]
    for query in queries:
        codes, _ = scan.quantize(query.reshape(1, -1))
        made = scan.query_code(query)
        assert made.dtype == np.int8 and np.array_equal(made, codes[0])


def test_the_compiled_scan_gives_the_reference_integers():
    from scriptorium.semantic import scan

    compiled = scan._compiled()
    if compiled is None:
        pytest.skip("the compiled extension (native/) is not installed")
    rng = np.random.default_rng(5)
    for count, dims in ((1, 1), (9, 3), (500, 384), (33, 385)):
        codes, _ = scan.quantize(rng.normal(size=(count, dims)).astype(np.float32))
        codes[0, 0] = 127
        query = scan.query_code(rng.normal(size=dims).astype(np.float32))
        query[0] = -127
        assert (scan.dots(codes, query) == scan.reference_dots(codes, query)).all()
    # Any int8 codes, not only quantized ones: -128 in the rows, in the query (the byte
    # multiply-add path cannot take it there) and at the extremes, rows 32 bytes wide and not.
    for count, dims in ((64, 384), (5, 33), (3, 31), (2, 64)):
        codes = rng.integers(-128, 128, size=(count, dims), dtype=np.int8)
        codes[0, :] = -128
        for query in (
            rng.integers(-127, 128, size=dims, dtype=np.int8),
            np.full(dims, 127, dtype=np.int8),
            np.full(dims, -127, dtype=np.int8),
            np.full(dims, -128, dtype=np.int8),
        ):
            assert (scan.dots(codes, query) == scan.reference_dots(codes, query)).all()
    with pytest.raises(ValueError, match="not 3 rows"):
        compiled(codes, query, np.empty(3, dtype=np.int32))
    with pytest.raises(ValueError, match="contiguous"):
        compiled(codes[:, ::2], query[::2], np.empty(len(codes), dtype=np.int32))


def test_the_partial_file_keeps_whole_chunks_and_drops_a_torn_one(tmp_path):
    path = tmp_path / "partial.vec"
    index = _index()
    V.append_partial(path, index.bids[:2], index.corpora[:2], index.matrix[:2])
    V.append_partial(path, index.bids[2:4], index.corpora[2:4], index.matrix[2:4])
    whole = path.read_bytes()
    path.write_bytes(whole[:-7])  # the second chunk torn by a crash
    found = V.read_partial(path, 8)
    assert sorted(found) == sorted(index.bids[:2].tolist())
    corpus, row = found[int(index.bids[1])]
    assert corpus == index.corpora[1] and np.allclose(row, index.matrix[1])


def test_a_definition_is_spelled_out_in_words():
    assert name_words("EmailStr") == "email str"
    assert name_words("getUserName") == "get user name"
    assert name_words("httpx/_client") == "httpx client"
    block = Block(
        RefKind.CODE,
        10,
        20,
        "EmailStr",
        ("networks",),
        "EmailStr",
        "class EmailStr:\n    ...",
        symbol="EmailStr",
        symbol_kind="class",
    )
    text = passage("pydantic/networks.py", block)
    assert text.startswith("pydantic networks: class networks.EmailStr (networks email str)")
    doc = Block(RefKind.DOC, 1, 5, "Extra data", ("Models", "Extra data"), "extra-data", "Body")
    assert passage("docs/concepts/models.md", doc) == "Models > Extra data\nBody"


class _Hit:
    def __init__(self, score: float) -> None:
        self.score, self.dense, self.lexical = score, 0.0, None


def test_the_hybrid_score_mixes_on_the_corpus_bm25_scale():
    hits = [_Hit(10.0), _Hit(5.0), _Hit(0.0), _Hit(8.0)]
    cosines = np.array([0.5, 0.7, 0.9, np.nan], dtype=np.float32).tolist()
    _rescore([0, 1, 2, 3], hits, cosines, 0.5)  # type: ignore[arg-type]
    assert [h.lexical for h in hits] == [10.0, 5.0, 0.0, 8.0]
    assert hits[0].score == pytest.approx(10 * 0.5)  # lexical best, lowest cosine
    assert hits[1].score == pytest.approx(10 * (0.25 + 0.25))
    assert hits[2].score == pytest.approx(10 * 0.5)  # found by meaning alone
    assert hits[2].dense == pytest.approx(0.9)
    assert hits[3].score == pytest.approx(8 * 0.5) and hits[3].dense == 0.0  # no vector


def test_a_floor_at_the_nearest_blocks_sharpens_the_cosine():
    hits = [_Hit(10.0), _Hit(5.0), _Hit(0.0)]
    cosines = np.array([0.5, 0.7, 0.9], dtype=np.float32).tolist()
    _rescore([0, 1, 2], hits, cosines, 0.5, floor=0.8)  # type: ignore[arg-type]
    assert hits[0].score == pytest.approx(10 * 0.5)  # below the floor: its cosine counts 0
    assert hits[1].score == pytest.approx(10 * 0.25)
    assert hits[2].score == pytest.approx(10 * 0.5)


def test_only_a_one_line_question_naming_an_identifier_is_a_lookup():
    from scriptorium.semantic.retriever import _looks_up_name

    assert _looks_up_name("what does include_router take")
    assert not _looks_up_name("how do I add a router to an app")
    problem = "How do I get the index of the minimum?\na = np.array([[1, 2], [3, 0]])\n"
    assert not _looks_up_name(problem)


def test_a_question_about_using_a_name_may_read_the_cosine_as_a_question_does():
    from scriptorium.domain.model import Corpus
    from scriptorium.semantic.retriever import SemanticCandidates
    from scriptorium.settings.ranking import RankingSettings

    usage, lookup = "use ConfigDict to forbid extra fields", "where is ConfigDict defined"
    acronyms = "serialize a model to JSON"
    for which in ("off", "names", "all"):
        settings = RankingSettings(semantic_usage_questions=which)
        candidates = SemanticCandidates(None, settings)  # type: ignore[arg-type]
        question = settings.semantic_weight
        assert candidates.weight(usage, Corpus.DOCS, 1.0) == (0.0 if which == "off" else question)
        assert candidates.weight(acronyms, Corpus.DOCS, 1.0) == (question if which == "all" else 0)
        assert candidates.weight(lookup, Corpus.DOCS, covered=1.0) == 0.0


def test_a_short_snippet_of_several_lines_takes_a_pasted_texts_weight():
    from scriptorium.domain.model import Corpus
    from scriptorium.semantic.retriever import SemanticCandidates
    from scriptorium.settings.ranking import RankingSettings

    snippet = "import matplotlib.pyplot as plt\nplt.scatter(x, y)\n\n# how to turn on minor ticks\n"
    question = "how do I turn on minor ticks in a scatter plot"
    wrapped = "how do I turn on minor ticks\nin a scatter plot"
    settings = RankingSettings()
    assert len(snippet) < settings.long_query_chars
    assert settings.is_pasted(snippet)
    assert not settings.is_pasted(question) and not settings.is_pasted(wrapped)
    assert not RankingSettings(pasted_lines=0).is_pasted(snippet)  # length alone decides
    candidates = SemanticCandidates(None, settings)  # type: ignore[arg-type]
    # A pasted text's share is fixed; a question's follows how much of it the words found.
    assert candidates.weight(snippet, Corpus.DOCS, covered=1.0) == settings.semantic_weight_long
    assert candidates.weight(question, Corpus.DOCS, covered=1.0) == settings.semantic_weight


def test_a_block_is_read_with_its_page_opening():
    from types import SimpleNamespace

    from scriptorium.index.generation import block_id
    from scriptorium.semantic.retriever import _in_context

    page = SimpleNamespace(source="docs", path="guide.md", content_hash="h1")
    other = SimpleNamespace(source="docs", path="other.md", content_hash="h2")
    bids = np.array(
        sorted([block_id("docs", "guide.md", "h1", i) for i in range(2)]), dtype=np.int64
    )
    opening, later = block_id("docs", "guide.md", "h1", 0), block_id("docs", "guide.md", "h1", 1)
    rows = _unit(np.array([[1.0, 0.0], [0.0, 1.0]]))
    order = [opening, later]
    matrix = rows[[order.index(b) for b in bids.tolist()]]
    index = V.VectorIndex("m", 1, bids, np.zeros(2, dtype=np.uint8), matrix)
    query = _unit(np.array([[1.0, 0.0]]))[0]
    hits = [SimpleNamespace(doc=page, bid=later), SimpleNamespace(doc=other, bid=7)]
    cosines = np.array([0.0, 0.4], dtype=np.float32)
    mixed = _in_context(index, query, hits, cosines, 0.5)  # type: ignore[arg-type]
    assert mixed[0] == pytest.approx(0.5)  # half its own 0, half its opening's 1
    assert mixed[1] == pytest.approx(0.4)  # a page with no vectors keeps its own


def test_a_passage_gets_the_same_vector_alone_as_among_others():
    """The vectors of a tree reached through edits are those of its fresh build: a passage's
    vector depends on its text alone, not on the passages encoded with it."""
    from scriptorium.semantic.encoder import OnnxEncoder
    from scriptorium.semantic.model import ModelMissing, find_model

    try:
        model = find_model()
    except ModelMissing as exc:
        pytest.fail(f"make venv installs the encoder: {exc}")
    encoder = OnnxEncoder(model)
    target = "Declare a request body with a Pydantic model and read it in a path operation."
    others = [
        "x",
        "A much longer passage " * 60,
        "def read_items(q: str | None = None):\n    return {'q': q}",
        "Dependencies with yield run code after the response is sent.",
    ]
    try:
        alone = encoder.passages([target])[0]
        among = encoder.passages([*others[:2], target, *others[2:]])
        encoder.release()
        again = encoder.passages([others[3], target])
    finally:
        encoder.release()
    assert np.array_equal(alone, among[2])
    assert np.array_equal(alone, again[1])
    assert abs(float(np.linalg.norm(alone)) - 1.0) < 1e-5
    # Each text's own vector: the rows are not copies of one another.
    assert float(among[0] @ among[2]) < 0.99


def test_a_long_passage_is_read_twice_and_its_later_text_counts():
    """A passage past semantic_tokens also gets a longer reading: what its later text says
    moves its vector, a short passage's vector is its one reading, and the readings name the
    vector folder (other readings' vectors are never reused)."""
    from scriptorium.semantic.encoder import OnnxEncoder
    from scriptorium.semantic.model import ModelMissing, find_model

    try:
        model = find_model()
    except ModelMissing as exc:
        pytest.fail(f"make venv installs the encoder: {exc}")
    one = OnnxEncoder(model, passage_tokens=64)
    two = OnnxEncoder(model, passage_tokens=64, long_tokens=256)
    assert one.name != two.name and "64+256" in two.name
    # An introduction of about 100 tokens, then what the section is for.
    opening = "This page describes the configuration file and its sections in detail. " * 8
    later = (
        "To stop a server gracefully, send it SIGTERM: it finishes the requests in flight, "
        "closes its listening sockets and exits with status zero."
    )
    short = "Declare a request body with a Pydantic model."
    try:
        long_one, short_one = one.passages([opening + later, short])
        long_two, short_two = two.passages([opening + later, short])
        question = two.query("how do I shut the daemon down without dropping requests")
    finally:
        one.release()
        two.release()
    assert np.array_equal(short_one, short_two)
    assert abs(float(np.linalg.norm(long_two)) - 1.0) < 1e-5
    # The second reading sees the shutdown text the first cut off.
    assert float(question @ long_two) > float(question @ long_one) + 0.02
    # Not the longer reading alone: the mean of the two.
    longer = OnnxEncoder(model, passage_tokens=256)
    try:
        alone = longer.passages([opening + later])[0]
    finally:
        longer.release()
    mean = (long_one + alone) / np.linalg.norm(long_one + alone)
    assert np.allclose(long_two, mean, atol=1e-6)


def _mixing(count: int, lexical: int, **levers):
    """A retriever over ``count`` docs blocks (block i's cosine with the query falling with i)
    whose lexical pool holds the last ``lexical`` of them; returns a function of the query's
    text giving the bids of the candidates after mixing and each one's score."""
    from types import SimpleNamespace

    from scriptorium.domain.model import Corpus, Query
    from scriptorium.index.searcher import LexicalHit
    from scriptorium.semantic.retriever import SemanticCandidates
    from scriptorium.settings.ranking import RankingSettings

    dims = 4
    angles = np.linspace(0.0, 1.2, count)
    rows = np.zeros((count, dims), dtype=np.float32)
    rows[:, 0], rows[:, 1] = np.cos(angles), np.sin(angles)
    bids = np.arange(1, count + 1, dtype=np.int64)
    index = V.VectorIndex("m", 1, bids, np.full(count, V.DOCS, dtype=np.uint8), rows)
    page = SimpleNamespace(source="docs", path="p.md", content_hash="h", corpus=Corpus.DOCS)
    # No index beside the vectors: the nearest blocks have no address, and are ranked by body.
    snapshot = SimpleNamespace(
        blocks={int(b): (page, 0) for b in bids},
        searcher=object(),
        block_addresses=lambda: SimpleNamespace(get=lambda _bid: None),
    )
    query_vector = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    builder = SimpleNamespace(index=index, encoder=SimpleNamespace(query=lambda _t: query_vector))
    settings = RankingSettings(semantic_page_context=0.0, **levers)
    retriever = SemanticCandidates(builder, settings)  # type: ignore[arg-type]

    def mixed(text: str, top_k: int = 10) -> dict[int, float]:
        pool = [LexicalHit(1.0 + i, page, 0, None, int(b)) for i, b in enumerate(bids[-lexical:])]
        query = Query(text, ("words",), top_k=top_k, corpora=frozenset({Corpus.DOCS}))
        hits = retriever.mix(snapshot, query, pool, lambda _hit: True)  # type: ignore[arg-type]
        return {hit.bid: hit.score for hit in hits}

    return mixed


def test_a_search_takes_the_first_of_the_nearest_by_its_cosine_share_at_the_same_floor():
    # 50 nearest read; a matched question's share is 0.2 of the largest (1.0): 10 join.
    levers = {"semantic_candidates": 50, "min_candidates": 20, "over_fetch": 1, "stable_window": 10}
    levers["semantic_weight"] = 0.2
    share = _mixing(120, lexical=20, **levers)
    every = _mixing(120, lexical=20, semantic_added="all", **levers)
    question = "how do I read the settings"
    some, all_of_them = share(question), every(question)
    assert sorted(some) == [*range(1, 11), *range(101, 121)]
    assert len(all_of_them) == 70
    # The floor is still the 50th nearest's: every candidate both keep scores the same.
    assert all(all_of_them[bid] == pytest.approx(score) for bid, score in some.items())
    # A pasted text's share over docs is 0.7: 35 of the 50 join.
    pasted = "Traceback (most recent call last):\n  File 'app.py'\nKeyError: 'x'\n"
    assert sorted(share(pasted)) == [*range(1, 36), *range(101, 121)]


def test_a_question_whose_words_found_few_blocks_takes_every_one_of_the_nearest():
    levers = {"semantic_candidates": 50, "min_candidates": 20, "over_fetch": 1, "stable_window": 10}
    few = _mixing(120, lexical=5, **levers)  # the pool holds 20; the words found 5
    assert len(few("how do I read the settings")) == 55


def test_the_compiled_choice_refuses_arrays_that_do_not_fit():
    compiled = native_part("int8_best_rows")
    if compiled is None:
        pytest.skip("the compiled extension is not installed")
    codes = np.zeros((10, 8), dtype=np.int8)
    query = np.ones(8, dtype=np.int8)
    scales, corpora = np.ones(10, dtype=np.float32), np.zeros(10, dtype=np.uint8)
    with pytest.raises(ValueError, match="out holds"):
        compiled(codes, query, scales, corpora, [0], 4, np.empty(3, dtype=np.int64))
    with pytest.raises(ValueError, match="corpus bytes"):
        compiled(codes, query, scales, corpora[:9], [0], 4, np.empty(4, dtype=np.int64))
    out = np.empty(4, dtype=np.int64)
    assert compiled(codes, query, scales, corpora, [0], 4, out) == [4]
