"""A blob's bytes: one document's text, its blocks' bodies and a JSON record of the rest.

A blob is one zlib stream of, integers unsigned and little endian:

- the magic ``\\x00SB3``;
- the lengths of the bodies section and of the record (4 bytes each);
- the bodies section: the SHA-256 digest of the text's bytes (32 bytes), the number of
  blocks (4 bytes), a pair ``(begin, end)`` of 4-byte integers per block, in block order:
  where its body lies in the text, in characters, or ``(0xFFFFFFFF, n)`` for a body the text
  does not hold, whose ``n`` bytes of UTF-8 follow the pairs, one such body after another;
- the record: JSON of everything else (path, corpus, language, fm, pb, meta, and per block
  its fields but its body);
- the text as UTF-8, to the end.

Text, bodies and record are encoded with ``surrogatepass``, as ``content_hash`` hashes the
text: the digest is the content hash of the text's bytes as stored. Reading a blob's texts
(what the served index does on every text cache miss) reads the bodies section and skips the
record unparsed; reading the document reads both, and refuses a record with a number of
blocks other than the bodies section's. The pairs are packed, not JSON: over the blobs of
the FastAPI state, reading the texts costs 36 us a blob, 39 with the section as JSON and 52
with the bodies inside one JSON header beside the text; zlib alone takes 24. Offsets of 4
bytes hold texts of less than 4 Gi characters.

Blobs of the layout before (the stream of one JSON object holding the text too, a body as
itself or as a ``[begin, end]`` span in its block's fields) are read as they are: every state
written before this layout holds them.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import zlib
from array import array
from collections.abc import Sequence

from scriptorium.sources.base import content_hash

# Level 3 writes twice as fast as 6 for blobs about 8 % larger; reading costs the same.
COMPRESS_LEVEL = 3
# A JSON object starts with ``{``, never with a NUL: a payload without the magic is one JSON
# object, a blob of the layout before.
MAGIC = b"\x00SB3"
_LENGTHS = struct.Struct("<II")  # the bodies section's, the record's
_COUNT = struct.Struct("<I")
_BODIES_AT = len(MAGIC) + _LENGTHS.size
_DIGEST = 32
_COUNT_AT = _BODIES_AT + _DIGEST
_PAIRS_AT = _COUNT_AT + _COUNT.size
# The begin of a body the text does not hold: no span of a text stored with 4-byte offsets
# begins there.
NOT_IN_TEXT = 0xFFFFFFFF
_SWAP = sys.byteorder == "big"  # the pairs are stored little endian
_MISMATCH = "blob text does not match its content hash"
# What malformed bytes raise on their way through a reader.
DAMAGE = (zlib.error, struct.error, ValueError, KeyError, TypeError, IndexError, AttributeError)


class CorruptBlobError(RuntimeError):
    """A blob is missing, undecodable or does not match its recorded hash."""


def _pairs(text: str, bodies: Sequence[str]) -> tuple[array, list[bytes]]:
    """Each body's pair, a span of ``text`` when it is a slice of it (every block of the
    FastAPI pages is: three in four exactly their line range, the rest a slice of it), and
    the bytes of those it is not. A body is looked for after the one before, then (a block
    nested in the one before) from the text's beginning."""
    pairs, strings, start = array("I"), [], 0
    for body in bodies:
        at = text.find(body, start)
        if at < 0:
            at = text.find(body)
        if at < 0:
            raw = body.encode("utf-8", "surrogatepass")
            pairs.extend((NOT_IN_TEXT, len(raw)))
            strings.append(raw)
        else:
            start = at + len(body)
            pairs.extend((at, start))
    if _SWAP:
        pairs.byteswap()
    return pairs, strings


def encode_blob(record: dict, text: str, digest: str, bodies: Sequence[str]) -> bytes:
    """The blob of a document: ``digest`` its content hash (hex), ``bodies`` its blocks',
    ``record`` the rest, its ``blocks`` the blocks' fields but their bodies."""
    pairs, strings = _pairs(text, bodies)
    section = b"".join((bytes.fromhex(digest), _COUNT.pack(len(bodies)), pairs.tobytes(), *strings))
    rest = json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")
    lengths = _LENGTHS.pack(len(section), len(rest))
    payload = b"".join((MAGIC, lengths, section, rest, text.encode("utf-8", "surrogatepass")))
    return zlib.compress(payload, COMPRESS_LEVEL)


def _text(payload: bytes) -> tuple[str, int, int]:
    """The text of a payload of this layout, checked against its digest; where the bodies
    section ends (the record begins) and where the text begins."""
    bodies_size, record_size = _LENGTHS.unpack_from(payload, len(MAGIC))
    record_at = _BODIES_AT + bodies_size
    text_at = record_at + record_size
    if bodies_size < _PAIRS_AT - _BODIES_AT or len(payload) < text_at:
        raise ValueError("the blob's sections do not fit in it")
    raw = memoryview(payload)[text_at:]  # hashed and decoded where it lies, not copied
    if hashlib.sha256(raw).digest() != payload[_BODIES_AT:_COUNT_AT]:
        raise CorruptBlobError(_MISMATCH)
    return str(raw, "utf-8", "surrogatepass"), record_at, text_at


def _bodies(payload: bytes, record_at: int, text: str) -> tuple[str, ...]:
    """The bodies of the bodies section (which ends where the record begins), each checked
    to lie in the text or in the section."""
    (count,) = _COUNT.unpack_from(payload, _COUNT_AT)
    at = _PAIRS_AT + 8 * count  # where the bodies the text does not hold begin
    if at > record_at:
        raise ValueError("the blocks' spans run past their section")
    pairs = array("I", payload[_PAIRS_AT:at])
    if _SWAP:
        pairs.byteswap()
    size, bodies = len(text), []
    for begin, end in zip(pairs[::2], pairs[1::2], strict=True):
        if begin == NOT_IN_TEXT:
            bodies.append(str(payload[at : at + end], "utf-8", "surrogatepass"))
            at += end
        elif begin <= end <= size:
            bodies.append(text[begin:end])
        else:
            raise ValueError("a block's span lies outside the text")
    if at != record_at:
        raise ValueError("the bodies do not fill their section")
    return tuple(bodies)


def _body(text: str, field: object) -> str:
    """A body as the layout before stored it: the string itself, or its span."""
    if isinstance(field, str):
        return field
    begin, end = field  # a malformed span raises TypeError or ValueError: a corrupt blob
    if not (isinstance(begin, int) and isinstance(end, int) and 0 <= begin <= end <= len(text)):
        raise ValueError("a block's span lies outside the text")
    return text[begin:end]


def _before(payload: bytes) -> tuple[dict, str]:
    """A payload of the layout before: its record, text inside, and the text, checked."""
    record = json.loads(payload)  # bytes: json detects UTF-8 itself
    text = record["text"]
    if not isinstance(text, str) or content_hash(text) != record["hash"]:
        raise CorruptBlobError(_MISMATCH)
    return record, text


def decode_texts(data: bytes) -> tuple[str, tuple[str, ...]]:
    """Only a blob's text and block bodies (what the served index reads on demand), checked
    against the content hash inside, its record left unparsed (of the layout before: parsed,
    it holds them)."""
    try:
        payload = zlib.decompress(data)
        if not payload.startswith(MAGIC):
            record, text = _before(payload)
            return text, tuple(_body(text, b[6]) for b in record["blocks"])
        text, record_at, _ = _text(payload)
        return text, _bodies(payload, record_at, text)
    except DAMAGE as exc:
        raise CorruptBlobError(f"undecodable blob: {exc}") from None


def read_blob(data: bytes) -> tuple[dict, str, tuple[str, ...]]:
    """A blob's record (with its ``hash``; each block's fields but its body, whichever the
    layout), text and block bodies, one per block of the record, all checked."""
    try:
        payload = zlib.decompress(data)
        if not payload.startswith(MAGIC):
            record, text = _before(payload)
            return record, text, tuple(_body(text, b.pop(6)) for b in record["blocks"])
        text, record_at, text_at = _text(payload)
        bodies = _bodies(payload, record_at, text)
        record = json.loads(payload[record_at:text_at])
        if len(record["blocks"]) != len(bodies):
            raise ValueError("the record's blocks are not the bodies section's")
        record["hash"] = payload[_BODIES_AT:_COUNT_AT].hex()
        return record, text, bodies
    except DAMAGE as exc:
        raise CorruptBlobError(f"undecodable blob: {exc}") from None
