"""Line snippets for search results and the best line to anchor a code reference on.

Documentation reads top-down, so a doc snippet is the head of its block; code is entered in the
middle, so a code snippet is centred on the line that best matches the query. All line numbers
are 1-based and inclusive, like the block ranges they come from.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Sequence
from itertools import accumulate

from scriptorium.text.normalize import normalize
from scriptorium.text.tokenize import tokenize

__all__ = ["best_line", "code_snippet", "doc_snippet"]


def best_line(
    lines: Sequence[str], terms: Collection[str], start: int = 0, end: int | None = None
) -> int | None:
    """Index into ``lines`` of the line in ``[start, end)`` holding the most distinct terms.

    Lines are matched on their unstemmed tokens (stopwords included), so an identifier part such
    as ``user`` finds ``getUserName``. Terms are normalised here, so both query terms and raw
    words work. Ties go to the earliest line; None when no line holds any term.
    """
    wanted = {normalize(t) for t in terms if t}
    if not wanted:
        return None
    stop = len(lines) if end is None else min(end, len(lines))
    best_index: int | None = None
    best_count = 0
    for index, most in _lines_to_check(lines, wanted, max(start, 0), stop):
        if most <= best_count:
            continue
        count = len(wanted.intersection(tokenize(lines[index], drop_stopwords=False)))
        if count > best_count:
            best_index, best_count = index, count
            if count == len(wanted):
                break
    return best_index


def _lines_to_check(
    lines: Sequence[str], wanted: set[str], start: int, stop: int
) -> list[tuple[int, int]]:
    """``(index, most)`` for the lines in ``[start, stop)`` that may hold a wanted token.

    ``most`` bounds how many distinct wanted tokens the line can hold. Tokenizing every line
    of a long definition would dominate a search; but every token of an ASCII line is a
    lower-cased substring of it, so in ASCII text only lines where a term occurs as a
    substring can count, and no more terms than occur there. Text with other characters
    (where NFKC and casefolding may change lengths) keeps every non-empty line.
    """
    if start >= stop:
        return []
    window = lines[start:stop]
    text = "\n".join(window)
    if not text.isascii():
        return [(start + i, len(wanted)) for i, line in enumerate(window) if line]
    text = text.lower()
    offsets = list(accumulate(len(line) + 1 for line in window))
    counts: dict[int, int] = {}
    for term in wanted:
        if not term.isascii():
            continue
        found = text.find(term)
        while found >= 0:
            line = bisect_right(offsets, found)
            counts[line] = counts.get(line, 0) + 1
            # One occurrence per line is enough: continue from the next line.
            found = text.find(term, offsets[line])
    return [(start + i, counts[i]) for i in sorted(counts)]


def _clamp_block(total: int, start_line: int, end_line: int) -> tuple[int, int]:
    first = max(start_line, 1)
    last = min(end_line, total)
    return first, last


def doc_snippet(
    lines: Sequence[str], start_line: int, end_line: int, n: int
) -> tuple[str, int, int]:
    """Up to ``n`` lines from the start of the block ``[start_line, end_line]``.

    Returns the joined text and the actual first and last line numbers; ``("", 0, 0)`` when the
    block holds no line of the file.
    """
    first, last = _clamp_block(len(lines), start_line, end_line)
    if first > last or n <= 0:
        return "", 0, 0
    last = min(last, first + n - 1)
    return "\n".join(lines[first - 1 : last]), first, last


def code_snippet(
    lines: Sequence[str], start_line: int, end_line: int, anchor_line: int, n: int
) -> tuple[str, int, int]:
    """Up to ``n`` lines centred on ``anchor_line``.

    The window stays inside the block when the block has at least ``n`` lines; a shorter block
    borrows context from the surrounding file instead. Returns the text and the actual range;
    ``("", 0, 0)`` for an empty file or ``n <= 0``.
    """
    total = len(lines)
    if total == 0 or n <= 0:
        return "", 0, 0
    block_first, block_last = _clamp_block(total, start_line, end_line)
    if block_last - block_first + 1 >= n:
        low, high = block_first, block_last
    else:
        low, high = 1, total
    anchor = min(max(anchor_line, low), high)
    first = max(low, min(anchor - (n - 1) // 2, high - n + 1))
    last = min(high, first + n - 1)
    return "\n".join(lines[first - 1 : last]), first, last
