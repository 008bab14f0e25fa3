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
* A data URI's base64 payload (an image inlined in a page) is left out, as it gives no tokens:
  ``![Plot](data:image/png;base64, )`` rather than a window of base64.
* Lengths are Python code points (not UTF-16 units, not graphemes).
"""

from __future__ import annotations

import functools
import heapq
import re
from dataclasses import dataclass

from scriptorium.text.compiled import native_part
from scriptorium.text.normalize import collapse_whitespace
from scriptorium.text.tokenize import CJK_CHARS, readable

__all__ = ["ELLIPSIS", "MAX_OCCURRENCES", "MIN_TERM_CHARS", "PreviewText", "prepare", "preview"]

ELLIPSIS = "..."
MIN_TERM_CHARS = 3
MAX_OCCURRENCES = 20
MAX_PREVIEW_TERMS = 64
# Queries with more terms than this find their window by a sweep over every occurrence instead
# of scoring each proposed window term by term: measured on the evaluation queries, the sweep
# is 30 % faster from seven terms on and slower below (both give the same window).
SWEEP_TERMS = 6

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


@functools.lru_cache(maxsize=256)
def _preview_terms(query: str) -> tuple[str, ...]:
    """The distinct folded terms of ``query`` (one query asks for up to 25 previews)."""
    terms = query.split()
    long_terms = [t for t in terms if len(t) >= MIN_TERM_CHARS]
    kept = dict.fromkeys(_fold(t) for t in (long_terms or terms))
    return tuple(t for t in list(kept)[:MAX_PREVIEW_TERMS] if t)


def _decorate(text: str, start: int, end: int) -> str:
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(text) else ""
    return f"{head}{text[start:end]}{tail}"


@dataclass(frozen=True, slots=True)
class PreviewText:
    """A text made ready for previews: whitespace-collapsed, and case-folded alongside.

    Preparing is most of the cost of a preview and does not depend on the query, so callers
    that preview the same text for many queries keep these.
    """

    collapsed: str
    folded: str

    @property
    def weight(self) -> int:
        """Characters held, for callers that bound a cache of these by size."""
        return len(self.collapsed) + len(self.folded)


def prepare(text: str) -> PreviewText:
    collapsed = collapse_whitespace(readable(text))
    return PreviewText(collapsed, _fold(collapsed))


def preview(text: str | PreviewText, query: str, max_chars: int = 200) -> str:
    """A window of ``text`` of at most ``max_chars`` characters around the query's terms."""
    if max_chars <= 0:
        return ""
    prepared = text if isinstance(text, PreviewText) else None
    collapsed = prepared.collapsed if prepared else collapse_whitespace(readable(text))
    size = len(collapsed)
    if size <= max_chars:
        return collapsed
    terms = _preview_terms(query)
    haystack = prepared.folded if prepared else _fold(collapsed)
    if _COMPILED_SWEEP is not None and collapsed.isascii():
        start = _COMPILED_SWEEP(collapsed, haystack, terms, max_chars, MAX_OCCURRENCES)
    elif len(terms) <= SWEEP_TERMS:
        start = _best_start(collapsed, haystack, terms, max_chars)
    else:
        start = _best_start_sweep(collapsed, haystack, terms, max_chars)
    return _decorate(collapsed, start, min(start + max_chars, size))


def _propose(collapsed: str, found: int, lead: int, last: int, cjk: bool) -> int:
    """The start of the window an occurrence at ``found`` proposes (see the contract)."""
    start = min(max(found - lead, 0), last)
    if (
        start > 0
        and collapsed[start - 1] != " "
        and collapsed[start] != " "
        and not (cjk and (_CJK_RE.match(collapsed, start - 1) or _CJK_RE.match(collapsed, start)))
    ):
        gap = collapsed.find(" ", start, found + 1)
        if gap >= 0:
            start = gap + 1
    return start


# The sweep compiled (``native/src/preview.rs``), for ASCII text and any number of terms: it
# finds the window both Python functions find (a pasted text previews every result with dozens
# of terms). None without the extension; the Python functions are the reference.
_COMPILED_SWEEP = native_part("best_start_sweep")


def _best_start_sweep(collapsed: str, haystack: str, terms: tuple[str, ...], max_chars: int) -> int:
    """What :func:`_best_start` returns, found by one sweep over all occurrences.

    An occurrence at ``p`` of a term ``n`` characters long lies inside the windows that start
    in ``[p + n - max_chars, p]``; each term's such ranges are merged, and a window's score is
    the number of terms whose ranges hold its start. The proposed starts, sorted, are scored
    in one pass over the ranges' ends, so the cost grows with the occurrences rather than with
    proposals times terms. Only called when the text is longer than ``max_chars``.
    """
    size = len(collapsed)
    lead = max_chars // 3
    last = max(size - max_chars, 0)
    cjk = not collapsed.isascii()
    find = haystack.find
    starts: set[int] = set()
    events: list[tuple[int, int]] = []
    for term in terms:
        found = find(term)
        if found < 0:
            continue
        reach = len(term) - max_chars  # a window holding it starts at most this far before it
        seen = 0
        low = high = -1
        while found >= 0:
            if seen < MAX_OCCURRENCES:
                seen += 1
                starts.add(_propose(collapsed, found, lead, last, cjk))
            if reach <= 0:  # a term longer than a window fits in none
                if high >= 0 and found + reach <= high + 1:
                    high = found
                else:
                    if high >= 0:
                        events += ((low, 1), (high + 1, -1))
                    low, high = found + reach, found
            found = find(term, found + 1)
        if high >= 0:
            events += ((low, 1), (high + 1, -1))
    if not starts:
        return 0
    events.sort()
    best_start, best_score, score, i, count = 0, -1, 0, 0, len(events)
    for start in sorted(starts):
        while i < count and events[i][0] <= start:
            score += events[i][1]
            i += 1
        if score > best_score:
            best_start, best_score = start, score
    return best_start


def _best_start(collapsed: str, haystack: str, terms: tuple[str, ...], max_chars: int) -> int:
    """The start of the winning window (0 when no term occurs).

    Occurrences are visited in text order across all terms (a heap of each term's next
    one), so the scan can stop once the best window holds every term that occurs and no
    later occurrence can propose an earlier start. A proposal is clamped to the text and, in
    non-CJK text, moved forward out of a word it falls inside (never past its occurrence);
    these checks are inlined, since they run for every occurrence of every term of every
    result.
    """
    size = len(collapsed)
    lead = max_chars // 3
    last = max(size - max_chars, 0)
    cjk = not collapsed.isascii()
    find = haystack.find
    space = collapsed.find
    # Only terms that occur at all can count; the best possible score is how many do.
    firsts = [(found, term) for term in terms if (found := find(term)) >= 0]
    terms = tuple(term for _, term in firsts)
    total = len(terms)
    heap = [(found, i, 1) for i, (found, _) in enumerate(firsts)]
    heapq.heapify(heap)
    tried: set[int] = set()
    best_start, best_score = -1, 0
    while heap:
        found, i, seen = heap[0]
        floor = min(max(found - lead, 0), last)  # no proposal from here on starts earlier
        if best_score == total and floor >= best_start:
            break
        following = find(terms[i], found + 1) if seen < MAX_OCCURRENCES else -1
        if following >= 0:
            heapq.heapreplace(heap, (following, i, seen + 1))
        else:
            heapq.heappop(heap)
        start = floor
        if (
            start > 0
            and collapsed[start - 1] != " "
            and collapsed[start] != " "
            and not (
                cjk and (_CJK_RE.match(collapsed, start - 1) or _CJK_RE.match(collapsed, start))
            )
        ):
            gap = space(" ", start, found + 1)
            if gap >= 0:
                start = gap + 1
        if start in tried:
            continue
        tried.add(start)
        # Windows rank by score, then by earlier start: an earlier one needs to tie the best,
        # a later one to beat it. Counting stops as soon as that is out of reach.
        if best_start < 0:
            need = 0
        elif start < best_start:
            need = best_score
        else:
            need = best_score + 1
        end = min(start + max_chars, size)
        score = 0
        left = total
        for term in terms:
            left -= 1
            if find(term, start, end) >= 0:
                score += 1
            elif score + left < need:
                break
        if score >= need:
            best_start, best_score = start, score
    return max(best_start, 0)
