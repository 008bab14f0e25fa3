"""Index generations: atomic writes, checksums, incremental hard-linked updates, retention."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument
from scriptorium.index.catalog import Snapshot
from scriptorium.index.generation import (
    Change,
    CorruptGenerationError,
    FileEntry,
    GenerationStore,
    SourceEntry,
)
from scriptorium.index.searcher import FieldWeights, lexical_search
from scriptorium.index.store import blob_name
from scriptorium.sources.base import content_hash

FINGERPRINT = "test=1"


def make_doc(path: str, text: str) -> SourceDocument:
    lines = text.splitlines()
    block = Block(RefKind.DOC, 1, len(lines), path, (path,), "", text)
    return SourceDocument("s", path, text, Corpus.DOCS, content_hash(text), blocks=(block,))


def tokens_for(doc, block):
    return " ".join(block.body.lower().split()), "", doc.path


def write(store: GenerationStore, parent, docs, removed=()):
    files = dict(parent.sources["s"].files) if parent else {}
    for path, _ in removed:
        files.pop(path, None)
    for doc in docs:
        files[doc.path] = FileEntry(
            doc.content_hash, len(doc.text), 0, blob_name(doc, FINGERPRINT), 1
        )
    sources = {"s": SourceEntry("markdown", "/x", "fp", files)}
    change = Change(removed=[("s", p) for p, _ in removed], added=list(docs))
    return store.write(
        parent=parent, change=change, sources=sources, extractors=FINGERPRINT, tokens_for=tokens_for
    )


def search(store, manifest, term):
    snapshot = Snapshot.load(store, manifest)
    return sorted(h.doc.path for h in lexical_search(snapshot, [term], FieldWeights(), 10))


def test_full_then_incremental_generation(tmp_path):
    store = GenerationStore(tmp_path)
    first = write(
        store, None, [make_doc("a.md", "apple banana"), make_doc("b.md", "banana cherry")]
    )
    assert first.generation == 1
    assert search(store, first, "banana") == ["a.md", "b.md"]
    second = write(
        store,
        first,
        [make_doc("a.md", "apple durian")],
        removed=[("a.md", None), ("b.md", None)],
    )
    assert second.generation == 2 and second.parent == 1
    assert search(store, second, "banana") == []
    assert search(store, second, "durian") == ["a.md"]
    # The parent generation is untouched by the increment.
    assert search(store, store.load_manifest(1), "banana") == ["a.md", "b.md"]


def test_corrupt_index_file_is_refused(tmp_path):
    store = GenerationStore(tmp_path)
    manifest = write(store, None, [make_doc("a.md", "apple " * 100)])
    index_dir = store.generation_dir(manifest.generation) / "index"
    victim = max((p for p in index_dir.iterdir() if p.is_file()), key=lambda p: p.stat().st_size)
    with victim.open("r+b") as handle:  # in place: the file may be memory-mapped
        handle.seek(-1, os.SEEK_END)
        last = handle.read(1)[0]
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([last ^ 0xFF]))
    with pytest.raises(CorruptGenerationError, match="checksum"):
        store.load_manifest(manifest.generation)


def test_tampered_manifest_is_refused(tmp_path):
    store = GenerationStore(tmp_path)
    manifest = write(store, None, [make_doc("a.md", "apple")])
    path = store.generation_dir(manifest.generation) / "MANIFEST.json"
    data = json.loads(path.read_text())
    data["parent"] = 7  # the recorded checksum stays as it was
    path.write_text(json.dumps(data))
    with pytest.raises(CorruptGenerationError, match="manifest checksum"):
        store.load_manifest(manifest.generation)


def test_partial_generations_are_cleaned_up_and_never_listed(tmp_path):
    store = GenerationStore(tmp_path)
    write(store, None, [make_doc("a.md", "apple")])
    partial = store.generations_dir / ".tmp-000002-deadbeef"
    (partial / "index").mkdir(parents=True)
    assert store.complete_generations() == [1]
    assert store.cleanup_partials() == 1
    assert not partial.exists()


def test_prune_keeps_newest_and_referenced_blobs(tmp_path):
    store = GenerationStore(tmp_path)
    manifest = None
    for i in range(5):
        manifest = write(store, manifest, [make_doc(f"p{i}.md", f"word{i}")])
    store.prune(keep=2)
    assert store.complete_generations() == [5, 4]
    latest = store.load_manifest(5)
    assert search(store, latest, "word0") == ["p0.md"]


def test_one_writer_at_a_time_and_a_live_partial_is_never_cleared(tmp_path, monkeypatch):
    import fcntl
    import threading

    from scriptorium.index import locks as G

    first, second = GenerationStore(tmp_path), GenerationStore(tmp_path)
    write(first, None, [make_doc("a.md", "apple")])
    live = first.generations_dir / ".tmp-000002-cafebabe"
    (live / "index").mkdir(parents=True)
    asking, wrote = threading.Event(), threading.Event()
    real_flock = fcntl.flock

    def flock(handle, operation):
        if operation == fcntl.LOCK_EX and threading.current_thread() is not main:
            asking.set()  # the second writer asks for the lock, ready to wait for it
        return real_flock(handle, operation)

    main = threading.current_thread()
    monkeypatch.setattr(G.fcntl, "flock", flock)

    def second_writer() -> None:
        write(second, second.load_manifest(1), [make_doc("b.md", "banana")])
        wrote.set()

    with first.writing() as held:
        assert held
        # A daemon starting meanwhile keeps the other process's half-written generation ...
        assert second.cleanup_partials() == 0 and live.is_dir()
        with second.writing(wait=False) as also:
            assert not also
        # ... and its writes wait for the lock.
        writer = threading.Thread(target=second_writer)
        writer.start()
        assert asking.wait(60), "the second writer never asked for the lock"
        assert not wrote.is_set()
    writer.join(60)
    assert wrote.is_set()
    assert second.complete_generations() == [2, 1]
    # Once nobody writes, a partial is a crash's leftover and goes.
    assert second.cleanup_partials() == 1 and not live.exists()


def test_verifying_a_manifest_hashes_its_bytes_and_decodes_no_file_table(tmp_path, monkeypatch):
    from scriptorium.index import generation as G
    from scriptorium.index import verify as V  # where the tables are decoded
    from scriptorium.index.generation import MANIFEST, MANIFEST_DIGEST

    written = write(GenerationStore(tmp_path), None, [make_doc("a.md", "apple")])
    gen_dir = GenerationStore(tmp_path).generation_dir(written.generation)
    decoded = []
    decode = V.decode_table
    monkeypatch.setattr(V, "decode_table", lambda data: decoded.append(1) or decode(data))
    store = GenerationStore(tmp_path)  # a fresh process
    loaded = store.load_manifest(written.generation)
    assert decoded == []  # counts come from the manifest: no table is read to serve
    assert loaded.document_count == 1 and loaded.block_count == 1
    assert loaded.checksum == (gen_dir / MANIFEST_DIGEST).read_text().strip()
    assert decoded == []
    assert loaded.sources["s"].files == written.sources["s"].files
    assert decoded == [1]
    # One byte changed in the file: refused.
    raw = (gen_dir / MANIFEST).read_bytes()
    (gen_dir / MANIFEST).write_bytes(raw.replace(b'"documents":1', b'"documents":2', 1))
    with pytest.raises(CorruptGenerationError, match="manifest checksum"):
        GenerationStore(tmp_path).load_manifest(written.generation)
    (gen_dir / MANIFEST).write_bytes(raw)
    # Without its digest file a manifest is refused too.
    digest = (gen_dir / MANIFEST_DIGEST).read_bytes()
    (gen_dir / MANIFEST_DIGEST).unlink()
    with pytest.raises(CorruptGenerationError, match="manifest checksum"):
        GenerationStore(tmp_path).load_manifest(written.generation)
    (gen_dir / MANIFEST_DIGEST).write_bytes(digest)
    # A damaged file table is found when it is read, and by the check after serving.
    table = gen_dir / G.FILES_TABLE
    data = bytearray(table.read_bytes())
    data[-1] ^= 0xFF
    table.write_bytes(bytes(data))
    fresh = GenerationStore(tmp_path)
    damaged = fresh.load_manifest(written.generation)  # opening does not read it
    failed = fresh.verify_rest(damaged)
    assert failed is not None and failed[0] == G.FILES_TABLE
    with pytest.raises(CorruptGenerationError, match="file table"):
        damaged.sources["s"].files  # noqa: B018


def test_a_manifest_of_the_previous_format_is_parsed_but_not_verified(tmp_path):
    from scriptorium.index.generation import FORMAT_VERSION, MANIFEST

    written = write(GenerationStore(tmp_path), None, [make_doc("a.md", "apple")])
    gen_dir = GenerationStore(tmp_path).generation_dir(written.generation)
    entry = next(iter(written.sources["s"].files.values()))
    old = {  # format 1: the file tables inline, a checksum inside
        "generation": 1,
        "created_at": 0.0,
        "parent": 0,
        "extractors": FINGERPRINT,
        "sources": {
            "s": {
                "kind": "markdown",
                "root": "/x",
                "fingerprint": "fp",
                "files": {"a.md": dataclasses.asdict(entry)},
            }
        },
        "index_files": {},
        "format_version": 1,
        "schema_version": written.schema_version,
        "checksum": "0" * 64,
    }
    (gen_dir / MANIFEST).write_text(json.dumps(old))
    loaded = GenerationStore(tmp_path).load_manifest(1)
    assert loaded.format_version == 1 != FORMAT_VERSION  # the indexer does not serve it
    assert loaded.sources["s"].files["a.md"] == entry  # pruning still reads its blob names


def test_native_heap_is_handed_back_after_each_update(tmp_path, monkeypatch):
    import ctypes.util

    from scriptorium.index import builder as indexer
    from scriptorium.index import native

    if ctypes.util.find_library("c") and "libc.so" in ctypes.util.find_library("c"):
        assert native.release_free_memory() is True  # glibc: malloc_trim is there
    calls = []
    monkeypatch.setattr(indexer, "release_free_memory", lambda: calls.append(1) or True)
    from scriptorium.engine.local import LocalEngine
    from scriptorium.plugins import load_registry
    from scriptorium.settings.config import load_settings

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\napple\n", "utf-8")
    settings = load_settings(None, paths=[str(docs)], state_dir=str(tmp_path / "state"))
    engine = LocalEngine(settings, load_registry())
    engine.indexer.load_or_build()
    (docs / "a.md").write_text("# A\n\napricot\n", "utf-8")
    engine.indexer.reconcile()
    assert len(calls) == 2  # the first build and the update
    assert (
        engine.indexer.reconcile() is None and len(calls) == 2
    )  # nothing written, nothing to hand back
