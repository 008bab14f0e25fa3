"""A document's blob: a bodies section (the content hash, the blocks' bodies as spans of the
text) and a JSON record of the rest before the text's bytes, and blobs written before (one JSON
object, text inside; bodies before spans)."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zlib
from datetime import UTC, datetime

import pytest

from scriptorium.domain.model import Block, Corpus, DocMeta, RefKind, SourceDocument
from scriptorium.index import blob_layout
from scriptorium.index.blob_layout import COMPRESS_LEVEL, MAGIC, NOT_IN_TEXT
from scriptorium.index.store import (
    CorruptBlobError,
    decode_document,
    decode_texts,
    encode_document,
)
from scriptorium.sources.base import content_hash
from tests.support.daemon import CORPUS

TEXT = "# Title\n\nIntro 日本語 text.\n\n## Twice\n\nsame words\n\n## Again\n\nsame words\n"
LENGTHS_AT = len(MAGIC)
BODIES_AT = LENGTHS_AT + 8  # after the lengths of the bodies section and of the record
PAIRS_AT = 32 + 4  # in the bodies section: after the digest and the count


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


# ``full_doc()``'s payload as this layout first wrote it (decompressed: zlib's own bytes may
# differ between its builds, a payload may not).
FULL_DOC_PAYLOAD = base64.b64decode(
    "AFNCM0UAAAAQAgAA32s+ZsFlkRAmQBR22arz/S5A/D+M9Ae3MzvwKd6XAHYDAAAAAAAAAEUAAAAkAAAALgAAAP////"
    "8JAAAAcmV3cml0dGVueyJwYXRoIjogImRvY3MvcC5tZCIsICJjb3JwdXMiOiAiZG9jcyIsICJsYW5ndWFnZSI6IG51"
    "bGwsICJmbSI6IDMsICJwYiI6IHRydWUsICJtZXRhIjogeyJ0aXRsZSI6ICJUaXRsZSIsICJib29zdCI6IDEuNSwgIn"
    "N1cGVyc2VkZWRfYnkiOiBudWxsLCAiZWZmZWN0aXZlX2Zyb20iOiAiMjAyNC0wMS0wMlQwMDowMDowMCswMDowMCIs"
    "ICJlZmZlY3RpdmVfdG8iOiBudWxsLCAibW92ZWRfZnJvbSI6IFsib2xkLm1kIl0sICJzb3VyY2VfY2xhc3MiOiBudW"
    "xsLCAiY2Fub25pY2FsX2tleSI6IG51bGwsICJwYXJzZV9jb25maWRlbmNlIjogMC41fSwgImJsb2NrcyI6IFtbImRv"
    "YyIsIDEsIDEyLCAiVGl0bGUiLCBbIlRpdGxlIl0sICJ0aXRsZSIsIDEsIG51bGwsIG51bGxdLCBbImRvYyIsIDUsID"
    "gsICJUd2ljZSIsIFsiVGl0bGUiLCAiVHdpY2UiXSwgInR3aWNlIiwgMiwgbnVsbCwgbnVsbCwgWyJhZ2FpbiJdXSwg"
    "WyJkb2MiLCA5LCAxMiwgIkFnYWluIiwgWyJUaXRsZSIsICJBZ2FpbiJdLCAiYWdhaW4iLCAyLCBudWxsLCBudWxsXV"
    "19IyBUaXRsZQoKSW50cm8g5pel5pys6KqeIHRleHQuCgojIyBUd2ljZQoKc2FtZSB3b3JkcwoKIyMgQWdhaW4KCnNh"
    "bWUgd29yZHMK"
)


def parts(blob: bytes) -> tuple[bytes, dict, bytes]:
    """A blob's bodies section, record and text bytes, read as the layout lays them out."""
    payload = zlib.decompress(blob)
    assert payload.startswith(MAGIC)
    heads, rest = struct.unpack_from("<II", payload, LENGTHS_AT)
    ends = BODIES_AT + heads
    return payload[BODIES_AT:ends], json.loads(payload[ends : ends + rest]), payload[ends + rest :]


def read_section(section: bytes) -> tuple[bytes, list]:
    """A bodies section's digest and fields: ``[begin, end]``, or the body the text lacks."""
    (count,) = struct.unpack_from("<I", section, 32)
    pairs = struct.unpack_from(f"<{2 * count}I", section, PAIRS_AT)
    at, fields = PAIRS_AT + 8 * count, []
    for begin, end in zip(pairs[::2], pairs[1::2], strict=True):
        if begin == NOT_IN_TEXT:
            fields.append(section[at : at + end].decode("utf-8", "surrogatepass"))
            at += end
        else:
            fields.append([begin, end])
    assert at == len(section)
    return section[:32], fields


def make_section(digest: bytes, fields: list, count: int | None = None) -> bytes:
    """A bodies section from its parts (``count``: the blocks', if not true)."""
    pairs, strings = [], []
    for field in fields:
        if isinstance(field, str):
            strings.append(field.encode("utf-8", "surrogatepass"))
            field = [NOT_IN_TEXT, len(strings[-1])]
        pairs += field
    size = len(fields) if count is None else count
    packed = struct.pack(f"<I{len(pairs)}I", size, *pairs)
    return b"".join((digest, packed, *strings))


def new_layout(
    section: bytes, record: object, text: bytes, lengths: tuple[int, int] | None = None
) -> bytes:
    """A blob of this layout from its parts (``record`` as JSON unless bytes; ``lengths``:
    the bodies section's and the record's, if not true)."""
    if not isinstance(record, bytes):
        record = json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")
    heads, rest = (len(section), len(record)) if lengths is None else lengths
    payload = MAGIC + struct.pack("<II", heads, rest) + section + record + text
    return zlib.compress(payload, COMPRESS_LEVEL)


def _old_record(doc: SourceDocument) -> dict:
    """The JSON record the encoder wrote before the text left it: this layout's record, with
    ``text`` second, ``hash`` fourth and each block's body the seventh of its fields."""
    section, record, _ = parts(encode_document(doc))
    _, fields = read_section(section)
    blocks = record.pop("blocks")
    head = {"path": record.pop("path"), "text": doc.text, "corpus": record.pop("corpus")}
    return {
        **head,
        "hash": doc.content_hash,
        **record,
        "blocks": [[*b[:6], f, *b[6:]] for b, f in zip(blocks, fields, strict=True)],
    }


def _old_layout(record: dict) -> bytes:
    """A blob as the encoder wrote it before: zlib of one JSON object."""
    return zlib.compress(json.dumps(record, ensure_ascii=False).encode("utf-8"), COMPRESS_LEVEL)


def stored_bodies(blob: bytes) -> list:
    return read_section(parts(blob)[0])[1]


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


def test_the_text_is_stored_as_its_bytes_after_the_bodies_and_the_record():
    doc = full_doc()
    section, record, text = parts(encode_document(doc))
    assert text == TEXT.encode()
    assert read_section(section) == (
        bytes.fromhex(doc.content_hash),
        [[0, len(TEXT)], [TEXT.index("same words"), TEXT.index("same words") + 10], "rewritten"],
    )
    assert set(record) == {"path", "corpus", "language", "fm", "pb", "meta", "blocks"}
    assert [b[5:7] for b in record["blocks"]] == [["title", 1], ["twice", 2], ["again", 2]]
    assert decode_document(encode_document(doc), "s") == doc


def test_this_layout_is_pinned_byte_for_byte():
    """Once written, a state holds blobs of this layout: it reads them as first written."""
    payload = zlib.decompress(encode_document(full_doc()))
    assert payload == FULL_DOC_PAYLOAD
    blob = zlib.compress(FULL_DOC_PAYLOAD, COMPRESS_LEVEL)
    assert decode_document(blob, "s") == full_doc()
    assert decode_texts(blob) == (TEXT, (TEXT, "same words", "rewritten"))


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
    assert parts(blob)[2] == text.encode("utf-8", "surrogatepass")
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

    monkeypatch.setattr(blob_layout, "content_hash", never)
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


def _with_span(layout: str, span: list) -> bytes:
    doc = make_doc(TEXT, ["same words"])
    if layout == "old":
        record = _old_record(doc)
        record["blocks"][0][6] = span
        return _old_layout(record)
    _, record, text = parts(encode_document(doc))
    return new_layout(make_section(bytes.fromhex(doc.content_hash), [span]), record, text)


SPANS_BEFORE = [[0, len(TEXT) + 1], [5, 2], [-1, 3], ["0", 3], [1], 7]
# Pairs of 4-byte unsigned integers: no span of them is negative, a string or of one number.
SPANS = [
    [0, len(TEXT) + 1],
    [5, 2],
    [len(TEXT) + 1] * 2,
    [0, len(TEXT.encode())],  # its bytes, not its characters
    [NOT_IN_TEXT - 1, 3],
    [NOT_IN_TEXT - 1] * 2,
]


@pytest.mark.parametrize(
    ("layout", "span"), [("old", s) for s in SPANS_BEFORE] + [("new", s) for s in SPANS]
)
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
        "a block that is no list": _old_layout(dict(record, blocks=[7])),
    }


def _corrupt_blobs() -> dict[str, bytes]:
    """Blobs of this layout damaged one way each in their lengths, bodies section or text,
    which both readers read (the old layout's own cases are above)."""
    blob = encode_document(full_doc())
    section, record, text = parts(blob)
    payload = zlib.decompress(blob)
    heads, rest = len(section), len(payload) - BODIES_AT - len(section) - len(text)
    raw = payload[BODIES_AT + heads : BODIES_AT + heads + rest]  # the record's bytes
    digest, fields = read_section(section)  # the third body is not in the text: "rewritten"
    bad_utf8 = b"\xff\xfe" + text

    def lengths(bodies_length: int, record_length: int) -> bytes:
        return new_layout(section, raw, text, (bodies_length, record_length))

    def bodies(fields: list, count: int | None = None, digest: bytes = digest) -> bytes:
        return new_layout(make_section(digest, fields, count), record, text)

    return {
        "not zlib": b"not zlib" + blob[8:],
        "zlib cut short": blob[: len(blob) // 2],
        "the magic alone": zlib.compress(MAGIC),
        "the lengths cut short": zlib.compress(MAGIC + payload[LENGTHS_AT : BODIES_AT - 1]),
        "the lengths alone": zlib.compress(payload[:BODIES_AT]),
        "the bodies section cut short": zlib.compress(payload[: BODIES_AT + heads // 2]),
        "the record cut short": zlib.compress(payload[: BODIES_AT + heads + rest // 2]),
        "lengths of zero": lengths(0, 0),
        "a bodies length past the blob": lengths(len(payload), rest),
        "a record length past the blob": lengths(heads, rest + len(text) + 1),
        "a bodies length without room for the digest and count": lengths(35, rest + heads - 35),
        "a bodies length one short, the record one longer": lengths(heads - 1, rest + 1),
        "a bodies length one long, the record one shorter": lengths(heads + 1, rest - 1),
        "a bodies length one short": lengths(heads - 1, rest),
        "a record length one short": lengths(heads, rest - 1),
        "a record length one long": lengths(heads, rest + 1),
        "a count past the section": bodies(fields, count=1000),
        "a count one more than the pairs": bodies(fields, count=len(fields) + 1),
        "a count one fewer than the pairs": bodies(fields, count=len(fields) - 1),
        "a body the text lacks, longer than the section": new_layout(section[:-1], record, text),
        "bytes after the bodies": new_layout(section + b"x", record, text),
        "a body the text lacks, of bad UTF-8": new_layout(section[:-1] + b"\xff", record, text),
        "another text's digest": bodies(fields, digest=bytes.fromhex(content_hash(TEXT + "!"))),
        "a digest cut short": bodies(fields, digest=digest[:-1]),
        "text of bad UTF-8, hashed as stored": new_layout(
            make_section(hashlib.sha256(bad_utf8).digest(), fields), record, bad_utf8
        ),
        "text changed": new_layout(section, record, text.replace(b"same", b"sane")),
        "text cut short": new_layout(section, record, text[:-1]),
        "no text": new_layout(section, record, b""),
        "the hash of a text of two lone surrogates, stored as the pair's four bytes": new_layout(
            make_section(bytes.fromhex(content_hash("\ud83d\ude00")), fields), record, "😀".encode()
        ),
    }


_DAMAGED_BY_LAYOUT = {"old": _corrupt_old_blobs, "new": _corrupt_blobs}


@pytest.mark.parametrize(
    ("layout", "case"),
    [(layout, case) for layout, make in _DAMAGED_BY_LAYOUT.items() for case in make()],
)
def test_a_damaged_blob_is_refused_by_both_readers(layout, case):
    blob = _DAMAGED_BY_LAYOUT[layout]()[case]
    with pytest.raises(CorruptBlobError):
        decode_document(blob, "s")
    with pytest.raises(CorruptBlobError):
        decode_texts(blob)


def _damaged_records() -> dict[str, bytes]:
    """Blobs of this layout whose record alone is damaged: a document cannot be made of it,
    but the texts, which do not need it, are read as stored."""
    section, record, text = parts(encode_document(full_doc()))
    raw = json.dumps(record, ensure_ascii=False).encode()
    blocks = record["blocks"]
    return {
        "a record that is not JSON": new_layout(section, b"{not json", text),
        "a record cut short": new_layout(section, raw[:-1], text),
        "a record of bad UTF-8": new_layout(section, b"\xff" + raw, text),
        "a record of no bytes": new_layout(section, b"", text),
        "a record that is no object": new_layout(section, [record], text),
        "a record without its blocks": new_layout(
            section, {k: v for k, v in record.items() if k != "blocks"}, text
        ),
        "blocks that are no list": new_layout(section, dict(record, blocks=3), text),
        "a record of one block fewer than the bodies": new_layout(
            section, dict(record, blocks=blocks[:-1]), text
        ),
        "a record of one block more than the bodies": new_layout(
            section, dict(record, blocks=[*blocks, blocks[0]]), text
        ),
        "a record of no blocks": new_layout(section, dict(record, blocks=[]), text),
        "a block that is no list": new_layout(section, dict(record, blocks=[7, *blocks[1:]]), text),
        "a block without its fields": new_layout(
            section, dict(record, blocks=[[], *blocks[1:]]), text
        ),
        "a block of an unknown kind": new_layout(
            section, dict(record, blocks=[["nokind", *blocks[0][1:]], *blocks[1:]]), text
        ),
        "a record without its meta": new_layout(
            section, {k: v for k, v in record.items() if k != "meta"}, text
        ),
        "a record of an unknown corpus": new_layout(section, dict(record, corpus="nope"), text),
    }


@pytest.mark.parametrize("case", list(_damaged_records()))
def test_a_damaged_record_is_refused_by_the_document_and_skipped_by_the_texts(case):
    blob = _damaged_records()[case]
    with pytest.raises(CorruptBlobError):
        decode_document(blob, "s")
    assert decode_texts(blob) == (TEXT, (TEXT, "same words", "rewritten"))


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
