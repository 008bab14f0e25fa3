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
    # The answer is the earliest line with the highest count. Lines are visited by their
    # bound, highest first, so the scan ends as soon as no remaining line can reach the best.
    checks = _lines_to_check(lines, wanted, max(start, 0), stop)
    checks.sort(key=lambda check: (-check[1], check[0]))
    best_index = -1
    best_count = 0
    for index, most in checks:
        if most < best_count:
            break
        if most == best_count and index > best_index:
            continue
        count = len(wanted.intersection(tokenize(lines[index], drop_stopwords=False)))
        if count > best_count or (count == best_count and count and index < best_index):
            best_index, best_count = index, count
    return best_index if best_count else None


def _lines_to_check(
    lines: Sequence[str], wanted: set[str], start: int, stop: int
) -> list[tuple[int, int]]:
    """``(index, most)`` for the lines in ``[start, stop)`` that may hold a wanted token.

    ``most`` bounds how many distinct wanted tokens the line can hold. Tokenizing every line
    of a long definition would dominate a search, so lines are screened first: every token
    of an ASCII line is a lower-cased substring of it that starts and ends where the tokenizer
    can split (:func:`_token_bounds`), so only lines where a term occurs that way can count,
    and no more terms than occur there. A line with other characters (where NFKC and
    casefolding may change lengths) is kept unscreened, bounded by every term.

    The lines are searched joined without separators, so every search runs in C; an
    occurrence straddling two lines belongs to neither and is skipped.
    """
    if start >= stop:
        return []
    window = lines[start:stop]
    text = "".join(window)
    unscreened: list[tuple[int, int]] = []
    if not text.isascii():
        unscreened = [(start + i, len(wanted)) for i, ln in enumerate(window) if not ln.isascii()]
        window = [line if line.isascii() else "" for line in window]
        text = "".join(window)
    text = text.lower()
    ends = list(accumulate(map(len, window)))  # where each line ends in ``text``
    counts: dict[int, int] = {}
    find = text.find
    for term in wanted:
        if not term.isascii():
            continue
        size = len(term)
        found = find(term)
        while found >= 0:
            index = bisect_right(ends, found)
            line = window[index]
            begin = found - (ends[index - 1] if index else 0)
            if not _token_bounds(line, begin, begin + size):
                found = find(term, found + 1)
                continue
            counts[index] = counts.get(index, 0) + 1
            # One occurrence per line is enough: continue from the next line.
            found = find(term, ends[index])
    screened = [(start + i, counts[i]) for i in sorted(counts)]
    return sorted(screened + unscreened) if unscreened else screened


def _token_bounds(line: str, begin: int, end: int) -> bool:
    """Whether ``line[begin:end]`` (ASCII) could be one of the line's tokens.

    Tokens are runs of letters and digits, their segments and ``_``-parts, camelCase parts
    (which start at a capital) and the letter runs of parts mixing letters and digits. So a
    token never starts inside a word except at a capital or at a letter after a digit, and
    never ends inside one except before a capital or before a digit after a letter. This is
    a necessary condition only: the tokenizer decides.
    """
    if end > len(line):  # straddles the end of the line
        return False
    if begin > 0:
        before, first = line[begin - 1], line[begin]
        if before.isalnum() and not (first.isupper() or (before.isdigit() and first.isalpha())):
            return False
    if end < len(line):
        last, after = line[end - 1], line[end]
        if after.isalnum() and not (after.isupper() or (after.isdigit() and last.isalpha())):
            return False
    return True


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
