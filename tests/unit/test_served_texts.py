"""The served index holds metadata, not text: texts are read on demand through a bounded cache,
and a generation's document pack gives, at cold start, what reading every blob gave."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.index.catalog import Snapshot
from scriptorium.index.generation import GenerationStore
from scriptorium.index.pack import PACK_FILE
from scriptorium.index.texts import DamagedText, StoredDocument, TextCache
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from tests.support.blobs import damage_blob
from tests.support.daemon import copy_tutorial_slice, write_fastapi_config


@pytest.fixture
def small_corpus(fastapi_corpus, tmp_path: Path) -> Path:
    return copy_tutorial_slice(tmp_path / "corpus")


def _engine(tmp_path: Path, corpus: Path, cache_bytes: int | None = None) -> LocalEngine:
    tmp_path.mkdir(parents=True, exist_ok=True)
    config = write_fastapi_config(tmp_path / "c.toml", corpus)
    if cache_bytes is not None:
        text = config.read_text("utf-8")
        if "[server]" in text:
            text = text.replace("[server]", f"[server]\ntext_cache_bytes = {cache_bytes}", 1)
        else:
            text = f"[server]\ntext_cache_bytes = {cache_bytes}\n\n" + text
        config.write_text(text, "utf-8")
    settings = load_settings(config, state_dir=str(tmp_path / "state"))
    engine = LocalEngine(settings, load_registry())
    engine.indexer.load_or_build()
    return engine


def test_served_documents_hold_no_text_and_read_it_from_disk(tmp_path, small_corpus):
    engine = _engine(tmp_path, small_corpus)
    snapshot = engine.indexer.snapshot
    docs = list(snapshot.docs.values())
    assert docs and all(isinstance(d, StoredDocument) for d in docs)
    # Metadata only: no slot for the text or the bodies, no per-instance dict to hide them in.
    assert "text" not in StoredDocument.__slots__ and not hasattr(docs[0], "__dict__")
    # A fresh process: nothing read yet, then each text and body read back exactly.
    store = engine.indexer.store
    fresh = Snapshot.load(store, snapshot.manifest, cache=TextCache(store.blobs.texts, 0))
    assert fresh.cache.reads == 0
    for doc in fresh.docs.values():
        assert doc.text == engine.indexer.by_name[doc.source].load(doc.path).text
        for block, original in zip(
            doc.blocks, snapshot.docs[(doc.source, doc.path)].blocks, strict=True
        ):
            assert block.body == original.body
    assert fresh.cache.reads >= len(fresh.docs)


def test_the_cache_stays_within_its_byte_bound(tmp_path, small_corpus):
    bound = 20_000
    engine = _engine(tmp_path, small_corpus, cache_bytes=bound)
    cache = engine.indexer.cache
    assert cache.limit == bound
    docs = list(engine.indexer.snapshot.docs.values())
    total = 0
    for doc in docs:
        total += len(doc.text) + sum(len(b.body) for b in doc.blocks) + len(doc.lines)
        # One entry larger than the bound is kept alone; otherwise the bound holds.
        assert cache.bytes <= bound or len(cache._entries) == 1
    assert total > 5 * bound  # the corpus did not fit: the bound is what limited the cache
    reads = cache.reads
    assert docs[-1].text  # the most recent entry is served from memory
    assert cache.reads == reads
    assert docs[0].text  # the oldest was dropped, and is read again
    assert cache.reads == reads + 1


def test_search_results_do_not_depend_on_the_cache_bound(tmp_path, small_corpus):
    def results(engine: LocalEngine) -> list[tuple]:
        out = []
        for query in ("OAuth2 password bearer", "依存関係", "get current user", "scopes"):
            outcome = engine.searching.search_local(
                engine.searching.make_query(SearchParams(query=query))
            )
            out += [
                (h.location, h.snippet, h.preview, h.start_line, h.end_line) for h in outcome.hits
            ]
        return out

    big = results(_engine(tmp_path / "big", small_corpus))
    small = results(_engine(tmp_path / "small", small_corpus, cache_bytes=0))
    assert big and big == small


def test_cold_start_reads_the_pack_not_the_blobs(tmp_path, small_corpus):
    engine = _engine(tmp_path, small_corpus)
    store: GenerationStore = engine.indexer.store
    snapshot = engine.indexer.snapshot
    assert (store.generation_dir(snapshot.generation) / "index" / PACK_FILE).is_file()
    blobs = []
    store.blobs.get = lambda name, source: blobs.append(name)  # type: ignore[method-assign]
    fresh = Snapshot.load(store, store.load_manifest(snapshot.generation))
    assert blobs == []
    assert list(fresh.docs) == list(snapshot.docs)
    for key, doc in fresh.docs.items():
        old = snapshot.docs[key]
        assert (doc.content_hash, doc.blob, doc.meta, doc.includes) == (
            old.content_hash,
            old.blob,
            old.meta,
            old.includes,
        )
        assert [
            (b.kind, b.start_line, b.end_line, b.title, b.section_path, b.anchor, b.symbol)
            for b in doc.blocks
        ] == [
            (b.kind, b.start_line, b.end_line, b.title, b.section_path, b.anchor, b.symbol)
            for b in old.blocks
        ]
    assert {k: (d.path, i) for k, (d, i) in fresh.blocks.items()} == {
        k: (d.path, i) for k, (d, i) in snapshot.blocks.items()
    }


def test_a_generation_without_a_pack_is_read_from_its_blobs(tmp_path, small_corpus):
    engine = _engine(tmp_path, small_corpus)
    store = engine.indexer.store
    snapshot = engine.indexer.snapshot
    index_dir = store.generation_dir(snapshot.generation) / "index"
    (index_dir / PACK_FILE).unlink()
    manifest = snapshot.manifest
    del manifest.index_files[PACK_FILE]
    fresh = Snapshot.load(store, manifest)
    assert list(fresh.docs) == list(snapshot.docs)
    assert set(fresh.blocks) == set(snapshot.blocks)


def test_a_damaged_blob_is_reported_when_read(tmp_path, small_corpus):
    engine = _engine(tmp_path, small_corpus, cache_bytes=0)
    store = engine.indexer.store
    doc = next(iter(engine.indexer.snapshot.docs.values()))
    damage_blob(store.blobs, doc.blob)
    seen = []
    engine.indexer.cache.on_damage = seen.append
    with pytest.raises(DamagedText) as failed:
        _ = doc.text
    assert seen == [failed.value]
    assert failed.value.code == "UNAVAILABLE" and doc.path in str(failed.value)


def test_cold_start_makes_no_document_and_decodes_no_file_table(
    tmp_path, small_corpus, monkeypatch
):
    """Opening a generation reads the pack's keys and offsets only: a document is made from
    its record when first asked for (then kept), and the file tables wait for the reconcile."""
    from scriptorium.index import doctable

    built = _engine(tmp_path, small_corpus)
    expected = list(built.indexer.snapshot.docs)
    made = []
    make = doctable.from_record
    monkeypatch.setattr(doctable, "from_record", lambda r, t: made.append(r[1]) or make(r, t))
    settings = load_settings(tmp_path / "c.toml", state_dir=str(tmp_path / "state"))
    engine = LocalEngine(settings, load_registry())
    assert engine.indexer.open_newest()
    snapshot = engine.indexer.snapshot
    assert made == []
    assert all(source._files is None for source in snapshot.manifest.sources.values())
    assert list(snapshot.docs) == expected and len(snapshot.docs) == len(expected)
    hits = engine.searching.search_local(
        engine.searching.make_query(SearchParams(query="OAuth2 password bearer"))
    )
    assert hits and 0 < len(made) < len(expected)  # the candidates' documents only
    key = expected[0]
    assert snapshot.docs[key] is snapshot.docs[key]
    # The reconcile decodes the tables and, finding nothing changed, keeps this generation.
    assert engine.indexer.catch_up() is None
    tables = snapshot.manifest.sources.values()
    assert all(source._files is not None for source in tables if len(source))
    assert engine.indexer.snapshot is snapshot


def test_a_pack_record_damaged_when_first_read_refuses_its_generation(
    tmp_path, small_corpus, monkeypatch
):
    """Large files are hashed after serving; a record read before that and found undecodable
    is reported as UNAVAILABLE and refuses the generation (here the only one: rebuilt)."""
    import time

    from scriptorium import faults
    from scriptorium.domain.outcomes import Unavailable
    from scriptorium.index import verify as V
    from scriptorium.index.pack import PackRecords

    built = _engine(tmp_path, small_corpus)
    first = next(iter(built.indexer.snapshot.docs))
    pack = built.indexer.store.generation_dir(1) / "index" / PACK_FILE
    data = bytearray(pack.read_bytes())
    records = PackRecords.of_bytes(bytes(data))
    start = records._base + records._offsets[0]
    end = records._base + records._offsets[1]
    data[start:end] = b"\xff" * (end - start)  # the first record no longer decodes
    pack.write_bytes(bytes(data))
    monkeypatch.setattr(V, "EAGER_VERIFY_BYTES", 0)  # as for a large pack: not hashed at open
    monkeypatch.setitem(faults._POINTS, "start.verify", tmp_path / "never")  # hold the check
    settings = load_settings(tmp_path / "c.toml", state_dir=str(tmp_path / "state"))
    indexer = LocalEngine(settings, load_registry()).indexer
    try:
        assert indexer.open_newest() and indexer.snapshot.generation == 1
        with pytest.raises(Unavailable, match="damaged"):
            indexer.snapshot.docs[first]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            current = indexer.current
            if current is not None and current.generation == 2:
                break
            time.sleep(0.05)
        assert indexer.snapshot.generation == 2  # rebuilt from the roots
        assert indexer.snapshot.docs[first].path == first[1]
    finally:
        indexer.cancel_builds()


@pytest.mark.parametrize(
    "text", ["x = 1\n\ny = 2\n", "x = 1\r\nsmile 😀\n\nkana かな\nlast", "", "\n\n", "é\nab\n"]
)
def test_a_line_table_is_counted_at_what_it_holds(text):
    """The cache counts a document's lines without asking each its size: the same figure."""
    import sys

    from scriptorium.index.texts import _lines_size
    from scriptorium.text.normalize import split_lines

    lines = split_lines(text)
    assert _lines_size(text, lines) == sys.getsizeof(lines) + sum(sys.getsizeof(x) for x in lines)
