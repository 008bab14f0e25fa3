"""A document's blob: bodies stored as spans of its text, and blobs written before spans."""

from __future__ import annotations

import json
import zlib

import pytest

from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument
from scriptorium.index.store import (
    COMPRESS_LEVEL,
    CorruptBlobError,
    decode_document,
    decode_texts,
    encode_document,
)
from scriptorium.sources.base import content_hash
from tests.support.daemon import CORPUS

TEXT = "# Title\n\nIntro 日本語 text.\n\n## Twice\n\nsame words\n\n## Again\n\nsame words\n"


def make_doc(text: str, bodies: list[str]) -> SourceDocument:
    blocks = tuple(
        Block(RefKind.DOC, 1, 2, f"b{i}", ("T", f"b{i}"), f"b{i}", body)
        for i, body in enumerate(bodies)
    )
    return SourceDocument("s", "p.md", text, Corpus.DOCS, content_hash(text), blocks=blocks)


def stored_bodies(blob: bytes) -> list:
    return [b[6] for b in json.loads(zlib.decompress(blob))["blocks"]]


def test_bodies_that_are_slices_are_stored_as_spans_and_come_back_equal():
    # Nested (the whole page, then its sections), repeated, empty, and a body the text
    # does not hold (an extractor may rewrite one): each decodes to what was encoded.
    bodies = [TEXT, "## Twice\n\nsame words", "same words", "", "rewritten body", "日本語"]
    doc = make_doc(TEXT, bodies)
    blob = encode_document(doc)
    fields = stored_bodies(blob)
    assert fields[0] == [0, len(TEXT)]
    assert fields[4] == "rewritten body"
    assert all(isinstance(f, list) for i, f in enumerate(fields) if i != 4)
    again = decode_document(blob, "s")
    assert again.blocks == doc.blocks
    assert decode_texts(blob) == (TEXT, tuple(bodies))


def test_every_page_of_the_corpus_round_trips(fastapi_corpus):
    from scriptorium.plugins import load_registry
    from scriptorium.sources.base import SourceConfig, SourceContext

    registry = load_registry()
    config = SourceConfig(name="en", kind="markdown", root=CORPUS / "docs" / "en" / "docs")
    source = registry.source_factory("markdown")(
        config, SourceContext(extractors=registry.extractor_chain)
    )
    docs = [d for stat in source.list_files() if (d := source.load(stat.path)) is not None]
    assert len(docs) > 100
    for doc in docs:
        blob = encode_document(doc)
        assert all(isinstance(f, list) for f in stored_bodies(blob)), doc.path
        assert decode_document(blob, "en").blocks == doc.blocks, doc.path
        assert decode_texts(blob)[1] == tuple(b.body for b in doc.blocks), doc.path


def test_a_blob_written_before_spans_still_decodes():
    doc = make_doc(TEXT, ["same words", TEXT])
    record = json.loads(zlib.decompress(encode_document(doc)))
    for block, body in zip(record["blocks"], ["same words", TEXT], strict=True):
        block[6] = body  # the body itself, as every blob held before
    blob = zlib.compress(json.dumps(record, ensure_ascii=False).encode(), COMPRESS_LEVEL)
    assert decode_document(blob, "s").blocks == doc.blocks
    assert decode_texts(blob) == (TEXT, ("same words", TEXT))


@pytest.mark.parametrize("span", [[0, len(TEXT) + 1], [5, 2], [-1, 3], ["0", 3], [1], 7])
def test_a_span_outside_the_text_is_a_corrupt_blob(span):
    record = json.loads(zlib.decompress(encode_document(make_doc(TEXT, ["same words"]))))
    record["blocks"][0][6] = span
    blob = zlib.compress(json.dumps(record).encode(), COMPRESS_LEVEL)
    with pytest.raises(CorruptBlobError):
        decode_document(blob, "s")
    with pytest.raises(CorruptBlobError):
        decode_texts(blob)


def test_two_threads_writing_one_loose_blob_both_succeed(tmp_path, monkeypatch):
    """Two threads may put the same loose blob at the same moment (two processes' writers,
    or two threads of one): both succeed and one file is left."""
    import os
    import threading

    from scriptorium.index.store import BlobStore, blob_name

    store = BlobStore(tmp_path / "blobs")
    doc = make_doc(TEXT, ["same words"])
    name = blob_name(doc, "fp")
    data = encode_document(doc)
    # Both threads have written their temporary file before either renames it.
    both_written = threading.Barrier(2, timeout=30)
    replace = os.replace

    def replace_when_both_wrote(src, dst):
        if str(tmp_path) in str(dst):
            both_written.wait()
        replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_when_both_wrote)
    failures = []

    def put() -> None:
        try:
            store.put(name, data)
        except Exception as exc:
            failures.append(exc)

    threads = [threading.Thread(target=put) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert decode_document(store.path(name).read_bytes(), "s").blocks == doc.blocks
    assert sorted(p.name for p in store.path(name).parent.iterdir()) == [name]


def test_a_blob_two_documents_share_is_written_once(tmp_path, monkeypatch):
    """The same page at the same path in two sources: one write of one blob."""
    from scriptorium.index.blobwriter import BlobWriter
    from scriptorium.index.store import BlobStore, blob_name

    store = BlobStore(tmp_path / "blobs")
    doc = make_doc(TEXT, ["same words"])
    name = blob_name(doc, "fp")
    written = []
    put = store.put
    monkeypatch.setattr(store, "put", lambda n, data: written.append(n) or put(n, data))
    with BlobWriter(store) as writer:
        writer.put(name, doc)
        writer.put(name, doc)
    assert written == [name]
    assert store.texts(name) == (TEXT, ("same words",))
