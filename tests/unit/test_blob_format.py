"""A document's blob: a JSON header beside the text's bytes, bodies stored as spans of the
text, and blobs written before (one JSON object, text inside; bodies before spans)."""

from __future__ import annotations

import base64
import json
import zlib
from datetime import UTC, datetime

import pytest

from scriptorium.domain.model import Block, Corpus, DocMeta, RefKind, SourceDocument
from scriptorium.index import store as store_module
from scriptorium.index.store import (
    COMPRESS_LEVEL,
    MAGIC,
    CorruptBlobError,
    decode_document,
    decode_texts,
    encode_document,
)
from scriptorium.sources.base import content_hash
from tests.support.daemon import CORPUS

TEXT = "# Title\n\nIntro 日本語 text.\n\n## Twice\n\nsame words\n\n## Again\n\nsame words\n"
LENGTH_AT = len(MAGIC)
HEADER_AT = LENGTH_AT + 4


def make_doc(text: str, bodies: list[str]) -> SourceDocument:
    blocks = tuple(
        Block(RefKind.DOC, 1, 2, f"b{i}", ("T", f"b{i}"), f"b{i}", body)
        for i, body in enumerate(bodies)
    )
    return SourceDocument("s", "p.md", text, Corpus.DOCS, content_hash(text), blocks=blocks)


def full_doc() -> SourceDocument:
    """Every field a blob records set (metadata, aliases, front matter, previews)."""
    blocks = (
        Block(RefKind.DOC, 1, 12, "Title", ("Title",), "title", TEXT, 1),
        Block(
            RefKind.DOC,
            5,
            8,
            "Twice",
            ("Title", "Twice"),
            "twice",
            "same words",
            2,
            aliases=("again",),
        ),
        Block(RefKind.DOC, 9, 12, "Again", ("Title", "Again"), "again", "rewritten", 2),
    )
    meta = DocMeta(
        title="Title",
        boost=1.5,
        effective_from=datetime(2024, 1, 2, tzinfo=UTC),
        moved_from=("old.md",),
        parse_confidence=0.5,
    )
    return SourceDocument(
        "s",
        "docs/p.md",
        TEXT,
        Corpus.DOCS,
        content_hash(TEXT),
        meta=meta,
        blocks=blocks,
        front_matter_lines=3,
        preview_from_body=True,
    )


# ``full_doc()``'s blob as the encoder wrote it before the text left the JSON (one JSON
# object, zlib level 3): states written then must keep serving without a rebuild.
OLD_FULL_DOC_BLOB = base64.b64decode(
    "eF5Vks1u3CAQx1/FIsdutvhjcZxbj73n5qwsDMPGig0W4GyrKM/RS9VbL1WfK+pjdMb2ylkJoeE/w28+4JWNMj6x"
    "+4Rpp8LncT9otktYhG+RxJvkoYs9PNpH+9VG75L3H7/ff/799+dXQiF7ctxg0LlTc1CQAyRn53VYPV9OskP92kMZ"
    "lPPjFC6JSXmSYSnEiDYHIVQqDlWa8kwUPC1KoSspTW50BgU3Kjd3yhS8bMs8z1vDs0pDVXJeCmL10p4meQLk2anv"
    "UTED2jkaY4tG9BOgPUCUeHplkbqk5HO7RGidCzSCdH/AU5hG8AE06Kb9vkHBGFCxe4HGeEcJWMaz4pantzx74Px+"
    "Xp/mnZhbeHQbZHAviF0BNXO9pkc4UlY3eQWN6mWgSa2dKGmd7ZTsm2f4UMsoscBGOWs6DVZRN3x/eKNWeqeeCVDX"
    "9MpYSYorQ8+l23q1KOkyil1S810iKlQweMlMO54vEJzLHTHo7Sl+m90izbCLMxe7pBAoYdqNRrck/RB2/ACu1urm"
    "v3NNXiQiL9fQ8HD2XYxAhyv48fj2Hx5z3vg="
)


def header_and_text(blob: bytes) -> tuple[dict, bytes]:
    """A blob's JSON header and its text's bytes, read as the layout lays them out."""
    payload = zlib.decompress(blob)
    assert payload.startswith(MAGIC)
    end = HEADER_AT + int.from_bytes(payload[LENGTH_AT:HEADER_AT], "big")
    return json.loads(payload[HEADER_AT:end]), payload[end:]


def new_layout(header: object, text: bytes, length: int | None = None) -> bytes:
    """A blob in the current layout from its parts (``length``: the header's, if not true)."""
    raw = json.dumps(header, ensure_ascii=False).encode("utf-8", "surrogatepass")
    size = len(raw) if length is None else length
    return zlib.compress(MAGIC + size.to_bytes(4, "big") + raw + text, COMPRESS_LEVEL)


def _old_record(doc: SourceDocument) -> dict:
    """The JSON record the encoder wrote before the text left it: the header, ``text`` second."""
    header, _ = header_and_text(encode_document(doc))
    return {"path": header.pop("path"), "text": doc.text, **header}


def _old_layout(record: dict) -> bytes:
    """A blob as the encoder wrote it before: zlib of one JSON object."""
    return zlib.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), COMPRESS_LEVEL)


def stored_bodies(blob: bytes) -> list:
    return [b[6] for b in header_and_text(blob)[0]["blocks"]]


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


def test_the_text_is_stored_as_its_bytes_beside_a_header_without_it():
    doc = full_doc()
    header, text = header_and_text(encode_document(doc))
    assert text == TEXT.encode()
    assert "text" not in header
    assert header["hash"] == doc.content_hash
    assert decode_document(encode_document(doc), "s") == doc


def test_the_helper_writes_the_old_layout_byte_for_byte():
    assert _old_layout(_old_record(full_doc())) == OLD_FULL_DOC_BLOB


def test_a_blob_of_the_old_layout_decodes_as_the_new_one_does():
    doc = full_doc()
    new = encode_document(doc)
    assert decode_document(OLD_FULL_DOC_BLOB, "s") == decode_document(new, "s") == doc
    assert decode_texts(OLD_FULL_DOC_BLOB) == decode_texts(new)
    assert decode_texts(new) == (TEXT, (TEXT, "same words", "rewritten"))


def test_a_state_of_old_blobs_keeps_serving(tmp_path):
    from scriptorium.index.store import BlobStore, blob_name

    store = BlobStore(tmp_path / "blobs")
    doc = full_doc()
    name = blob_name(doc, "fp")
    store.put(name, OLD_FULL_DOC_BLOB)
    assert store.get(name, "s") == doc
    assert store.texts(name) == (TEXT, (TEXT, "same words", "rewritten"))


NESTED = "outer\n  inner one\n  inner two\nend\n"
# Each: a text and its blocks' bodies. Nested bodies come before the bodies they hold, so the
# search for a slice starts again from the text's beginning; "inner one\ninner two" is not a
# slice (an extractor rewrote it) and is stored as a string.
DOCUMENTS = {
    "ascii": ("plain text\nline two\n", ["plain text", "line two"]),
    "non-ascii": ("Café — naïve “quotes” ü\n😀 astral\n", ["Café", "😀 astral", "naïve"]),
    "cjk": (TEXT + "中文的段落。\n", [TEXT, "日本語", "中文的段落。"]),
    "empty": ("", ["", ""]),
    "no blocks": ("text only\n", []),
    "nested": (NESTED, [NESTED, "inner two", "inner one", "inner one\ninner two", "end"]),
}
SURROGATES = {
    "lone surrogates": ("a\ud800b\udfff\n", ["a\ud800b", "\udfff", "rewritten \udc80"]),
    "a pair kept as two": ("x\ud83d\ude00y", ["\ud83d\ude00", "x"]),
}


@pytest.mark.parametrize("case", list(DOCUMENTS) + list(SURROGATES))
def test_documents_round_trip(case):
    text, bodies = (DOCUMENTS | SURROGATES)[case]
    doc = make_doc(text, bodies)
    blob = encode_document(doc)
    assert header_and_text(blob)[1] == text.encode("utf-8", "surrogatepass")
    assert decode_document(blob, "s") == doc
    assert decode_texts(blob) == (text, tuple(bodies))


@pytest.mark.parametrize("case", list(DOCUMENTS))
def test_old_and_new_layouts_decode_alike(case):
    # Lone surrogates are left out: the old layout could not hold them (its encoder raised).
    doc = make_doc(*DOCUMENTS[case])
    old, new = _old_layout(_old_record(doc)), encode_document(doc)
    assert decode_document(old, "s") == decode_document(new, "s") == doc
    assert decode_texts(old) == decode_texts(new)


def test_the_text_is_checked_from_its_stored_bytes(monkeypatch):
    """The hash of the stored bytes is the content hash: the text is not encoded again."""
    blob = encode_document(full_doc())

    def never(text: str) -> str:
        raise AssertionError("the text was encoded again to be hashed")

    monkeypatch.setattr(store_module, "content_hash", never)
    assert decode_texts(blob)[0] == TEXT
    assert decode_document(blob, "s").text == TEXT


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
        assert decode_document(blob, "en") == doc, doc.path
        assert decode_texts(blob)[1] == tuple(b.body for b in doc.blocks), doc.path
        old = _old_layout(_old_record(doc))
        assert decode_document(old, "en") == doc, doc.path
        assert decode_texts(old) == decode_texts(blob), doc.path


def test_a_blob_written_before_spans_still_decodes():
    doc = make_doc(TEXT, ["same words", TEXT])
    record = _old_record(doc)
    for block, body in zip(record["blocks"], ["same words", TEXT], strict=True):
        block[6] = body  # the body itself, as every blob held before
    blob = _old_layout(record)
    assert decode_document(blob, "s").blocks == doc.blocks
    assert decode_texts(blob) == (TEXT, ("same words", TEXT))


def _with_span(layout: str, span: object) -> bytes:
    doc = make_doc(TEXT, ["same words"])
    if layout == "old":
        record = _old_record(doc)
        record["blocks"][0][6] = span
        return _old_layout(record)
    header, text = header_and_text(encode_document(doc))
    header["blocks"][0][6] = span
    return new_layout(header, text)


@pytest.mark.parametrize("layout", ["old", "new"])
@pytest.mark.parametrize("span", [[0, len(TEXT) + 1], [5, 2], [-1, 3], ["0", 3], [1], 7])
def test_a_span_outside_the_text_is_a_corrupt_blob(layout, span):
    blob = _with_span(layout, span)
    with pytest.raises(CorruptBlobError):
        decode_document(blob, "s")
    with pytest.raises(CorruptBlobError):
        decode_texts(blob)


def _corrupt_old_blobs() -> dict[str, bytes]:
    """Old-layout blobs damaged one way each: still refused as they were."""
    record = _old_record(full_doc())
    no_text = {k: v for k, v in record.items() if k != "text"}
    return {
        "text changed": _old_layout(dict(record, text=TEXT.replace("same", "sane"))),
        "text that is no string": _old_layout(dict(record, text=7)),
        "no text": _old_layout(no_text),
        "no hash": _old_layout({k: v for k, v in record.items() if k != "hash"}),
        "not JSON": zlib.compress(b"{not json", COMPRESS_LEVEL),
        "a JSON list": _old_layout([record]),  # type: ignore[arg-type]
    }


@pytest.mark.parametrize("case", list(_corrupt_old_blobs()))
def test_a_damaged_blob_of_the_old_layout_is_refused(case):
    blob = _corrupt_old_blobs()[case]
    with pytest.raises(CorruptBlobError):
        decode_document(blob, "s")
    with pytest.raises(CorruptBlobError):
        decode_texts(blob)


def _corrupt_blobs() -> dict[str, bytes]:
    """New-layout blobs damaged one way each (the old layout's own cases are above)."""
    blob = encode_document(full_doc())
    header, text = header_and_text(blob)
    payload = zlib.decompress(blob)
    size = len(payload) - len(text) - HEADER_AT
    other = dict(header, hash=content_hash(TEXT + "!"))
    bad_utf8 = b"\xff\xfe" + text
    no_hash = {k: v for k, v in header.items() if k != "hash"}
    no_blocks = {k: v for k, v in header.items() if k != "blocks"}
    return {
        "not zlib": b"not zlib" + blob[8:],
        "zlib cut short": blob[: len(blob) // 2],
        "the magic alone": zlib.compress(MAGIC),
        "the length cut short": zlib.compress(MAGIC + b"\x00\x00"),
        "the header cut short": zlib.compress(payload[: HEADER_AT + size // 2]),
        "a length past the blob": new_layout(header, text, length=size + len(text) + 1),
        "a length too short": new_layout(header, text, length=size - 1),
        "a length too long": new_layout(header, text, length=size + 1),
        "a length of zero": new_layout(header, text, length=0),
        "a header that is no object": new_layout([header], text),
        "a header without its hash": new_layout(no_hash, text),
        "a header without its blocks": new_layout(no_blocks, text),
        "a header of bad UTF-8": zlib.compress(
            MAGIC + (size + 1).to_bytes(4, "big") + b"\xff" + payload[HEADER_AT:]
        ),
        "text of bad UTF-8, hashed as stored": new_layout(
            dict(header, hash=store_module.hashlib.sha256(bad_utf8).hexdigest()), bad_utf8
        ),
        "text changed": new_layout(header, text.replace(b"same", b"sane")),
        "text cut short": new_layout(header, text[:-1]),
        "another text's hash": new_layout(other, text),
        "the hash of a text of two lone surrogates, stored as the pair's four bytes": new_layout(
            dict(header, hash=content_hash("\ud83d\ude00")), "😀".encode()
        ),
    }


@pytest.mark.parametrize("case", list(_corrupt_blobs()))
def test_a_damaged_blob_of_the_new_layout_is_refused(case):
    blob = _corrupt_blobs()[case]
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
