"""Blob bundles: a write of many documents fills one bundle, findable only once its table is
written; damage, removal, pruning and another process's compaction keep every read right."""

from __future__ import annotations

import errno
import logging

import pytest

from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument
from scriptorium.index.blobwriter import BUNDLE_FROM, BlobWriter
from scriptorium.index.bundles import BUNDLE_SUFFIX, TABLE_SUFFIX, BundleWriter
from scriptorium.index.generation import GenerationStore, GenerationWriteError
from scriptorium.index.store import BlobStore, CorruptBlobError, blob_name
from scriptorium.sources.base import content_hash
from tests.support.generations import FINGERPRINT, write_first


def make_doc(i: int, words: str = "about capybaras") -> SourceDocument:
    text = f"# Page {i}\n\npage {i} {words} " * 20
    block = Block(RefKind.DOC, 1, 3, f"Page {i}", (f"Page {i}",), f"page-{i}", text)
    return SourceDocument(
        "docs", f"p{i}.md", text, Corpus.DOCS, content_hash(text), blocks=(block,)
    )


def write_blobs(store: BlobStore, docs: list[SourceDocument]) -> list[str]:
    names = [blob_name(d, FINGERPRINT) for d in docs]
    with BlobWriter(store) as writer:
        for name, doc in zip(names, docs, strict=True):
            writer.put(name, doc)
    return names


def files(store: BlobStore) -> tuple[list[str], list[str]]:
    """The loose blobs, and the bundles' files."""
    loose = sorted(p.name for p in store.root.glob("??/*"))
    bundled = sorted(p.name for p in store.bundles.glob("*")) if store.bundles.is_dir() else []
    return loose, bundled


DOCS = [make_doc(i) for i in range(3 * BUNDLE_FROM)]


def test_a_write_of_many_blobs_fills_one_bundle_and_each_reads_back(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    names = write_blobs(store, DOCS)
    loose, bundled = files(store)
    assert loose == []
    assert len(bundled) == 2  # the bundle and its table
    assert {p.rsplit(".", 1)[1] for p in bundled} == {"bundle", "table"}
    for name, doc in zip(names, DOCS, strict=True):
        assert store.exists(name)
        assert store.texts(name) == (doc.text, (doc.text,))
        assert store.get(name, "docs").blocks == doc.blocks
    # Another store over the same directory (another process) finds them too.
    other = BlobStore(tmp_path / "blobs")
    assert other.texts(names[-1])[0] == DOCS[-1].text


def test_a_write_of_a_few_blobs_leaves_loose_files(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    names = write_blobs(store, DOCS[: BUNDLE_FROM - 1])
    loose, bundled = files(store)
    assert loose == sorted(names)
    assert bundled == []
    assert all(store.texts(n)[0] == d.text for n, d in zip(names, DOCS, strict=False))


def test_blobs_already_stored_are_not_written_again(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    write_blobs(store, DOCS)
    again = BlobStore(tmp_path / "blobs")
    with BlobWriter(again) as writer:
        for doc in DOCS:
            writer.put(blob_name(doc, FINGERPRINT), doc)
    assert writer.created == []
    assert len(files(again)[1]) == 2


def test_a_bundle_without_its_table_holds_nothing_and_pruning_removes_it(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    cut_short = BundleWriter(store.bundles)
    cut_short.append(blob_name(DOCS[0], FINGERPRINT), b"bytes of a write cut short")
    cut_short._handle.close()  # the process died before the table was written
    assert not store.exists(blob_name(DOCS[0], FINGERPRINT))
    names = write_blobs(store, DOCS[1:])
    store.prune(set(names))
    assert not cut_short.path.exists()
    assert store.texts(names[0])[0] == DOCS[1].text


def test_a_damaged_table_is_not_read_so_its_blobs_are_missing(tmp_path, caplog):
    store = BlobStore(tmp_path / "blobs")
    names = write_blobs(store, DOCS)
    (table,) = store.bundles.glob(f"*{TABLE_SUFFIX}")
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF
    table.write_bytes(bytes(data))
    fresh = BlobStore(tmp_path / "blobs")
    with caplog.at_level(logging.WARNING), pytest.raises(CorruptBlobError, match="missing blob"):
        fresh.texts(names[0])
    assert "damaged" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING), pytest.raises(CorruptBlobError):
        fresh.texts(names[1])  # read again: said once
    assert "damaged" not in caplog.text
    fresh.prune(set(names))  # nothing of the damaged bundle is left, its table neither
    assert files(fresh)[1] == []


def test_a_damaged_blob_in_a_bundle_is_refused_on_read(tmp_path):
    from tests.support.blobs import damage_blob

    store = BlobStore(tmp_path / "blobs")
    names = write_blobs(store, DOCS)
    damage_blob(store, names[5])
    with pytest.raises(CorruptBlobError):
        store.texts(names[5])
    assert store.texts(names[6])[0] == DOCS[6].text


def test_removing_bundled_blobs_rewrites_the_table_and_the_last_takes_the_bundle(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    names = write_blobs(store, DOCS)
    store.remove(names[:10])
    assert not any(store.exists(n) for n in names[:10])
    assert all(store.texts(n)[0] == d.text for n, d in zip(names[10:], DOCS[10:], strict=True))
    assert not BlobStore(tmp_path / "blobs").exists(names[0])  # on disk, not just here
    store.remove(names[10:])
    assert files(store) == ([], [])


def test_pruning_copies_a_mostly_dead_bundle_and_drops_an_unreferenced_one(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    first = write_blobs(store, DOCS)
    (old,) = store.bundles.glob(f"*{BUNDLE_SUFFIX}")
    second = write_blobs(store, [make_doc(i, "other words") for i in range(BUNDLE_FROM)])
    kept = first[:5]  # under half of the first bundle's bytes
    reader = BlobStore(tmp_path / "blobs")  # another process, its tables read before
    assert reader.texts(kept[0])[0] == DOCS[0].text
    assert store.prune(set(kept)) == len(first) - 5 + len(second)
    assert all(store.texts(n)[0] == d.text for n, d in zip(kept, DOCS, strict=False))
    assert not any(store.exists(n) for n in first[5:] + second)
    (bundle,) = store.bundles.glob(f"*{BUNDLE_SUFFIX}")
    assert bundle != old and not old.exists()
    assert bundle.stat().st_size < sum(len(d.text) for d in DOCS[:5])  # compressed, 5 only
    # The other process finds the old bundle gone, reads the tables again, and the new one.
    assert reader.texts(kept[1])[0] == DOCS[1].text
    assert BlobStore(tmp_path / "blobs").texts(kept[2])[0] == DOCS[2].text


def test_pruning_keeps_a_mostly_live_bundle_as_it_is(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    names = write_blobs(store, DOCS)
    (bundle,) = store.bundles.glob(f"*{BUNDLE_SUFFIX}")
    store.prune(set(names[2:]))
    assert list(store.bundles.glob(f"*{BUNDLE_SUFFIX}")) == [bundle]
    assert not store.exists(names[0]) and store.exists(names[2])


def test_a_failed_write_into_a_bundle_leaves_no_bundle(tmp_path, monkeypatch):
    store = GenerationStore(tmp_path / "state")
    appended = []
    real_append = BundleWriter.append

    def append(self, name, data):
        appended.append(name)
        if len(appended) == BUNDLE_FROM + 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_append(self, name, data)

    monkeypatch.setattr(BundleWriter, "append", append)
    with pytest.raises(GenerationWriteError, match="no space left on device"):
        write_first(store, DOCS)
    left = [p for p in store.state_dir.rglob("*") if p.is_file() and p.name != "writer.lock"]
    assert left == []


def test_a_write_that_fails_after_its_bundle_is_finished_removes_the_bundle(tmp_path, monkeypatch):
    store = GenerationStore(tmp_path / "state")

    def fail(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("scriptorium.index.generation.fsync_dir", fail)
    with pytest.raises(GenerationWriteError):
        write_first(store, DOCS)
    assert files(store.blobs) == ([], [])
    assert store.complete_generations() == []


def test_a_generation_of_many_documents_serves_them_from_its_bundle(tmp_path):
    store = GenerationStore(tmp_path / "state")
    manifest = write_first(store, DOCS)
    assert files(store.blobs)[0] == []
    entry = manifest.sources["docs"].files["p7.md"]
    assert GenerationStore(tmp_path / "state").blobs.texts(entry.blob)[0] == DOCS[7].text
