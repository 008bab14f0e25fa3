"""GetContent in parts: a long answer cut into pieces that fit ``max_chars``, and their cursors.

Agents pay for every character they read, so a caller may cap one answer's ``content``. The
whole answer (what the same request returns without a cap) is then served in parts. Parts are
exact slices of the whole answer, so their contents concatenated give it back unchanged. Each
part ends on a line boundary; when a heading, a top-level definition or a blank line lies in the
last fifth of the window, the part ends just before it instead, so a section is rarely split
from its heading. Only a single line longer than the cap is cut mid-line (at a space when one
is in its second half).

A cursor is opaque to callers: a version byte, a digest of the doc_version, a digest of the
whole answer, the start offset and a check. It stays valid for as long as the document has the
same doc_version; a cursor of another version or another answer is refused, as is one that does
not decode.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import re
import struct
from dataclasses import dataclass, replace

from scriptorium import limits
from scriptorium.domain.outcomes import (
    ContentOutcome,
    ContentPart,
    FailedPrecondition,
    InvalidArgument,
)
from scriptorium.text import estimate_tokens

MIN_MAX_CHARS = limits.CONTENT_MIN_MAX_CHARS
# A preferred boundary counts when it lies in this last share of a part's window.
_NEAR = 0.2
_CURSOR_VERSION = 1
_DIGEST_BYTES = 6
_CHECK_BYTES = 2
_LAYOUT = struct.Struct(f">B{_DIGEST_BYTES}s{_DIGEST_BYTES}sI")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_DEFINITION = re.compile(
    r"^(@|(async\s+)?def\s|class\s|func\s|fn\s|pub\s|function\s|export\s|interface\s|"
    r"struct\s|impl\s|type\s)"
)


@dataclass(frozen=True, slots=True)
class Cursor:
    """A decoded cursor: which answer it continues and where the next part starts."""

    version_digest: bytes
    answer_digest: bytes
    start_char: int


def validate_max_chars(max_chars: int) -> None:
    """Refuse a cap no useful part fits in; zero means no cap."""
    if max_chars < 0:
        raise InvalidArgument("max_chars must not be negative")
    if 0 < max_chars < MIN_MAX_CHARS:
        raise InvalidArgument(f"max_chars must be 0 (no cap) or at least {MIN_MAX_CHARS}")


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:_DIGEST_BYTES]


def encode_cursor(doc_version: str, whole: str, start_char: int) -> str:
    payload = _LAYOUT.pack(_CURSOR_VERSION, _digest(doc_version), _digest(whole), start_char)
    check = hashlib.sha256(payload).digest()[:_CHECK_BYTES]
    return base64.urlsafe_b64encode(payload + check).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> Cursor:
    """The cursor's fields; InvalidArgument for anything that is not a cursor this daemon made."""
    if len(cursor) > 64 or not cursor.isascii():
        raise InvalidArgument("malformed cursor: pass next_cursor from the previous part unchanged")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    size = _LAYOUT.size
    canonical = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    if (
        canonical != cursor
        or len(raw) != size + _CHECK_BYTES
        or hashlib.sha256(raw[:size]).digest()[:_CHECK_BYTES] != raw[size:]
    ):
        raise InvalidArgument("malformed cursor: pass next_cursor from the previous part unchanged")
    version, version_digest, answer_digest, start = _LAYOUT.unpack(raw[:size])
    if version != _CURSOR_VERSION:
        raise InvalidArgument("malformed cursor: made by another version of the daemon")
    return Cursor(version_digest, answer_digest, start)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position != -1 and position + 1 < len(text):
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


def _ranks(text: str, starts: list[int]) -> list[int]:
    """How good a place each line start is to begin a part: 3 heading or top-level definition
    after a blank line, 2 after a blank line, 1 any other line, 0 inside a fenced block."""
    ranks: list[int] = []
    in_fence = False
    previous_blank = True
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        line = text[start:end].rstrip("\n")
        fence = bool(_FENCE.match(line))
        if in_fence and not fence:
            ranks.append(0)
        elif _HEADING.match(line) or (previous_blank and _DEFINITION.match(line)):
            ranks.append(3)
        else:
            ranks.append(2 if previous_blank else 1)
        if fence:
            in_fence = not in_fence
        previous_blank = not line.strip()
    return ranks


def _mid_line_cut(text: str, start: int, limit: int) -> int:
    space = text.rfind(" ", start + (limit - start) // 2, limit)
    return space + 1 if space != -1 else limit


def partition(text: str, max_chars: int, start: int = 0) -> list[tuple[int, int]]:
    """The parts of ``text[start:]`` as [start, end) offsets, each at most ``max_chars`` long."""
    starts = _line_starts(text)
    ranks = _ranks(text, starts)
    parts: list[tuple[int, int]] = []
    position = start
    while position < len(text):
        limit = position + max_chars
        if limit >= len(text):
            parts.append((position, len(text)))
            break
        first = bisect.bisect_right(starts, position)
        last = bisect.bisect_right(starts, limit) - 1
        if last < first:
            cut = _mid_line_cut(text, position, limit)
        else:
            floor = limit - int(max_chars * _NEAR)
            near = [i for i in range(first, last + 1) if starts[i] >= floor]
            best = max(near, key=lambda i: (ranks[i], i)) if near else last
            if near and ranks[best] <= ranks[last]:
                best = last
            cut = starts[best]
        parts.append((position, cut))
        position = cut
    return parts or [(start, start)]


def _line_numbers(out: ContentOutcome) -> list[int]:
    """The document line of each line of the whole answer: DEFINITION's enclosing signature
    lines (``context``) open it, then come ``start_line``..``end_line``."""
    numbers = [n for mark in out.context for n in range(mark.start_line, mark.end_line + 1)]
    return numbers + list(range(out.start_line, out.end_line + 1))


def fit(out: ContentOutcome, max_chars: int, cursor: str) -> ContentOutcome:
    """``out`` with its size reported and, under a cap, cut to the part the cursor names."""
    whole = out.content
    out.total_chars = len(whole)
    if cursor and not max_chars:
        raise InvalidArgument("a cursor continues a capped answer: pass max_chars with it")
    if not max_chars:
        out.tokens_used = estimate_tokens(whole)
        return out
    start = _start_of(cursor, out, whole) if cursor else 0
    parts = partition(whole, max_chars)
    starts = [s for s, _ in parts]
    if start not in starts:
        parts = [p for p in parts if p[0] < start] + partition(whole, max_chars, start)
        starts = [s for s, _ in parts]
    number = starts.index(start)
    begin, end = parts[number]
    numbers = _line_numbers(out)
    out.content = whole[begin:end]
    out.part = ContentPart(
        number=number + 1,
        count=len(parts),
        start_char=begin,
        end_char=end,
        whole_start_line=out.start_line,
        whole_end_line=out.end_line,
        whole_lines=len(numbers) if whole else 0,
    )
    # Lines are joined by newlines: a part before the last ends with the one after its last line.
    first = whole.count("\n", 0, begin)
    last = whole.count("\n", 0, end) - (end < len(whole) and whole[end - 1] == "\n")
    _place(out, numbers, first, last)
    out.next_cursor = encode_cursor(out.doc_version, whole, end) if end < len(whole) else ""
    out.tokens_used = estimate_tokens(out.content)
    return out


def _place(out: ContentOutcome, numbers: list[int], first: int, last: int) -> None:
    """Set the part's own lines from the indexes of its first and last line in the whole answer:
    ``start_line``..``end_line`` stay the definition's own lines, ``context`` keeps the enclosing
    signatures the part holds, ``ranges`` are clipped to the part."""
    if not numbers:
        return
    opening = len(numbers) - (out.end_line - out.start_line + 1)
    own = (max(first, opening), last) if last >= opening else (first, last)
    out.start_line = numbers[min(own[0], len(numbers) - 1)]
    out.end_line = numbers[min(own[1], len(numbers) - 1)]
    held = set(numbers[first : min(last, opening - 1) + 1]) if first < opening else set()
    out.context = [
        replace(m, start_line=min(n), end_line=max(n))
        for m in out.context
        if (n := [x for x in range(m.start_line, m.end_line + 1) if x in held])
    ]
    out.ranges = [
        replace(
            r, start_line=max(r.start_line, out.start_line), end_line=min(r.end_line, out.end_line)
        )
        for r in out.ranges
        if r.start_line <= out.end_line and r.end_line >= out.start_line
    ]


def _start_of(cursor: str, out: ContentOutcome, whole: str) -> int:
    """Where the cursor's part starts, refusing a cursor of another revision or answer."""
    decoded = decode_cursor(cursor)
    if decoded.version_digest != _digest(out.doc_version):
        raise FailedPrecondition(
            "the cursor belongs to another doc_version: the document changed "
            f"(now {out.doc_version}); fetch again without a cursor"
        )
    if decoded.answer_digest != _digest(whole) or not 0 < decoded.start_char < len(whole):
        raise FailedPrecondition(
            "the cursor belongs to another answer: pass it with the same ref_id or location, "
            "mode and max_lines as the part it came from"
        )
    return decoded.start_char
