"""Query-centred previews: a short, whitespace-collapsed window of a block around the query.

The contract (stable; consumers may rely on it):

* The query is split on whitespace as typed (no tokenizer). Terms of three or more characters
  are kept whenever at least one exists, so a short word such as "to" cannot anchor the window
  on boilerplate; a query made only of short terms keeps them all.
* The text is whitespace-collapsed (:func:`collapse_whitespace`) before the window is cut, so
  the budget is spent on words rather than indentation. Line breaks are not preserved.
* Terms match case-insensitively (casefold, kept length-preserving per character) as
  substrings. At most the first :data:`MAX_OCCURRENCES` occurrences of each term are considered.
* Each occurrence proposes a window of at most ``max_chars`` characters that starts a third of
  the budget before it; the window is clamped to the text and, in non-CJK text, a start that
  falls mid-word moves forward to the next word (never past the occurrence). Windows score the
  number of *distinct* terms they fully contain; the highest score wins, ties go to the earliest
  window.
* ``...`` is prepended when the window does not start at the beginning and appended when it does
  not reach the end. Ellipses are outside the budget: a preview is at most ``max_chars + 6``.
* When no term occurs, the preview is the first ``max_chars`` characters.
* Lengths are Python code points (not UTF-16 units, not graphemes).
"""

from __future__ import annotations

import re

from scriptorium.text.normalize import collapse_whitespace
from scriptorium.text.tokenize import CJK_CHARS

__all__ = ["ELLIPSIS", "MAX_OCCURRENCES", "MIN_TERM_CHARS", "preview"]

ELLIPSIS = "..."
MIN_TERM_CHARS = 3
MAX_OCCURRENCES = 20
MAX_PREVIEW_TERMS = 64

# CJK text has no spaces between words, so a window start inside it (or on its punctuation) stays.
_CJK_RE = re.compile(f"[{CJK_CHARS}\u3000-\u303f\uff00-\uffef]")


def _fold(text: str) -> str:
    """Casefold without changing the length, so positions in the folded text stay valid."""
    folded = text.casefold()
    if len(folded) == len(text):
        return folded
    out = []
    for char in text:
        single = char.casefold()
        if len(single) != 1:
            single = char.lower()
            if len(single) != 1:
                single = char
        out.append(single)
    return "".join(out)


def _preview_terms(query: str) -> list[str]:
    terms = query.split()
    long_terms = [t for t in terms if len(t) >= MIN_TERM_CHARS]
    kept = dict.fromkeys(_fold(t) for t in (long_terms or terms))
    return list(kept)[:MAX_PREVIEW_TERMS]


def _word_start(text: str, start: int, limit: int) -> int:
    """Move ``start`` forward to the next word when it falls inside a non-CJK word."""
    if start == 0 or text[start - 1] == " " or text[start] == " ":
        return start
    if _CJK_RE.match(text, start - 1) or _CJK_RE.match(text, start):
        return start
    space = text.find(" ", start, limit)
    return start if space < 0 else space + 1


def _decorate(text: str, start: int, end: int) -> str:
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(text) else ""
    return f"{head}{text[start:end]}{tail}"


def preview(text: str, query: str, max_chars: int = 200) -> str:
    """A window of ``text`` of at most ``max_chars`` characters around the query's terms."""
    if max_chars <= 0:
        return ""
    collapsed = collapse_whitespace(text)
    size = len(collapsed)
    if size <= max_chars:
        return collapsed
    terms = _preview_terms(query)
    haystack = _fold(collapsed)
    lead = max_chars // 3
    best: tuple[int, int, int] | None = None  # (-score, start, end)
    for term in terms:
        if not term:
            continue
        found = haystack.find(term)
        seen = 0
        while found >= 0 and seen < MAX_OCCURRENCES:
            seen += 1
            start = min(max(found - lead, 0), max(size - max_chars, 0))
            start = _word_start(collapsed, start, found + 1)
            end = min(start + max_chars, size)
            score = sum(1 for t in terms if haystack.find(t, start, end) >= 0)
            candidate = (-score, start, end)
            if best is None or candidate < best:
                best = candidate
            found = haystack.find(term, found + 1)
    if best is None:
        return _decorate(collapsed, 0, max_chars)
    return _decorate(collapsed, best[1], best[2])
