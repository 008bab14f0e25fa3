"""Line snippets for search results and the best line to anchor a code reference on.

Documentation reads top-down, so a doc snippet is the head of its block; code is entered in the
middle, so a code snippet is centred on the line that best matches the query. All line numbers
are 1-based and inclusive, like the block ranges they come from.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

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
    for index in range(max(start, 0), stop):
        line = lines[index]
        if not line:
            continue
        count = len(wanted.intersection(tokenize(line, drop_stopwords=False)))
        if count > best_count:
            best_index, best_count = index, count
            if count == len(wanted):
                break
    return best_index


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
