"""Line snippets for search results and the best line to anchor a code reference on.

Documentation reads top-down, so a doc snippet is the head of its block; code is entered in the
middle, so a code snippet is centred on the line that best matches the query. All line numbers
are 1-based and inclusive, like the block ranges they come from.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Collection, Hashable, Sequence
from itertools import accumulate, chain
from typing import Any

from scriptorium.text.compiled import native_part, screened_lines, terms_occurring
from scriptorium.text.normalize import normalize
from scriptorium.text.tokenize import MAX_TOKEN_CHARS, compiled_tokenizer, tokenize

__all__ = ["ScreenMemo", "Wanted", "best_line", "code_snippet", "doc_snippet"]


# Above this many terms, a range's lines are counted by one compiled pass rather than from the
# memo's lines per term (a question's few terms are found in the memo; a pasted text's hundreds
# cost more to look up than to find again).
COUNTED_TERMS = 32
# Lines screened at a time: a long block is screened in growing slices, so a scan can stop
# once a line holds every term that occurs anywhere in the range.
FIRST_SLICE = 256


class ScreenMemo:
    """What screening found in a range of a text, per term, for the next search to reuse.

    Keys start with the caller's key for the text (a content hash: equal texts screen
    equally, so entries stay valid across generations). The table is emptied whole when it
    holds ``limit`` entries or ``max_items`` line numbers (about 40 bytes each; a range's
    compiled screen counts as the line numbers its bytes would make), which keeps every step
    one dict operation, safe without a lock for concurrent callers. Queries about one code
    base share many terms ("app", "router", "path"), and the same large classes answer many
    of them.
    """

    __slots__ = ("_items", "_table", "limit", "max_items")

    def __init__(self, limit: int = 16_384, max_items: int = 500_000) -> None:
        self._table: dict[tuple, object] = {}
        self._items = 0
        self.limit = limit
        self.max_items = max_items

    def get(self, key: tuple) -> object:
        return self._table.get(key)

    def put(self, key: tuple, value: object, items: int = 0) -> None:
        """Keep ``value``, which weighs ``items`` line numbers (a tuple's length unless
        given)."""
        if not items:
            items = len(value) if isinstance(value, tuple) else 1
        if len(self._table) >= self.limit or self._items + items > self.max_items:
            self._table, self._items = {}, 0
        self._table[key] = value
        self._items += items


class Wanted:
    """The terms :func:`best_line` looks for, made ready once for every result of a search:
    normalised, the ASCII ones listed, and (many of them: a pasted text) the compiled
    automaton that counts each line's terms in one pass."""

    __slots__ = ("_compiled", "ascii", "given", "terms")

    def __init__(self, terms: Collection[str]) -> None:
        self.given = frozenset(terms)  # as the caller gave them
        self.terms = frozenset(normalize(t) for t in terms if t)
        self.ascii = [term for term in self.terms if term.isascii()]
        self._compiled: object = False  # not made yet

    @property
    def compiled(self) -> object | None:
        """The compiled automaton of many terms, made on first use (a window of docs alone
        never needs it), or None for few terms or without the extension. Its counts are
        the compiled tokenizer's, so it is used only while that tokenizer is."""
        if self._compiled is False:
            many = len(self.ascii) > COUNTED_TERMS and all(self.ascii)
            usable = _COMPILED_TERMS is not None and compiled_tokenizer() is not None
            self._compiled = (
                _COMPILED_TERMS(self.ascii, MAX_TOKEN_CHARS) if many and usable else None
            )
        return self._compiled


def best_line(
    lines: Sequence[str],
    terms: Collection[str] | Wanted,
    start: int = 0,
    end: int | None = None,
    *,
    memo: ScreenMemo | None = None,
    key: Hashable = None,
) -> int | None:
    """Index into ``lines`` of the line in ``[start, end)`` holding the most distinct terms.

    Lines are matched on their unstemmed tokens (stopwords included), so an identifier part such
    as ``user`` finds ``getUserName``. Terms are normalised here, so both query terms and raw
    words work (a caller anchoring many results passes them once as :class:`Wanted`). Ties go
    to the earliest line; None when no line holds any term.

    ``memo`` with a ``key`` naming the text of ``lines`` (its content hash) keeps what the
    screening found per term, for later calls on the same text.
    """
    prepared = terms if isinstance(terms, Wanted) else Wanted(terms)
    wanted = prepared.terms
    if not wanted:
        return None
    start = max(start, 0)
    stop = len(lines) if end is None else min(end, len(lines))
    screen = _Screen(lines, memo if key is not None else None, key)
    if prepared.compiled is not None:
        # Many terms (a pasted text): one compiled pass over the whole range bounds every
        # line and tokenizes only those that could be best, cheaper than the slices below
        # and the pass over the range that bounds them.
        checks = screen.lines_to_check(prepared, start, stop)
        best_index, best_count = _best_checked(lines, wanted, checks, -1, 0)
        return best_index if best_count else None
    # No line holds more terms than occur in the range at all (every token of a line is a
    # substring of the line normalised). A long range is screened slice by slice, in order,
    # and once the best line holds that many no later line can beat it: a query naming a
    # class finds its line in the first slice of a 4,700-line class, not after all of it.
    reachable = len(wanted)
    if stop - start > FIRST_SLICE:
        reachable = screen.occurring(wanted, start, stop)
    best_index = -1
    best_count = 0
    low, size = start, FIRST_SLICE
    while low < stop and best_count < reachable:
        high = min(stop, low + size)
        checks = screen.lines_to_check(prepared, low, high)
        best_index, best_count = _best_checked(lines, wanted, checks, best_index, best_count)
        low, size = high, size * 2
    return best_index if best_count else None


def _best_checked(
    lines: Sequence[str],
    wanted: frozenset[str],
    checks: list[tuple[int, int, bool]],
    best_index: int,
    best_count: int,
) -> tuple[int, int]:
    """The earliest line with the highest count among ``checks`` (``lines_to_check``) and
    the best so far (of earlier lines, which win ties).

    Lines are visited by their bound, highest first, so the scan ends as soon as no remaining
    line can reach the best. A check is ``(-bound, index, exact)``, so that their own order is
    that one (each index is listed once).
    """
    checks.sort()
    for negative, index, exact in checks:
        most = -negative
        if most < best_count:
            break
        if most == best_count and index > best_index:
            continue
        if exact:
            count = most
        else:
            count = len(wanted.intersection(tokenize(lines[index], drop_stopwords=False)))
        if count > best_count or (count == best_count and count and index < best_index):
            best_index, best_count = index, count
    return best_index, best_count


class _Screen:
    """Screening of ranges of ``lines`` for the terms of one :func:`best_line` call."""

    __slots__ = ("key", "lines", "memo")

    def __init__(self, lines: Sequence[str], memo: ScreenMemo | None, key: Hashable) -> None:
        self.lines, self.memo, self.key = lines, memo, key

    def occurring(self, wanted: frozenset[str], start: int, stop: int) -> int:
        """How many of ``wanted`` occur in ``[start, stop)`` at all, as substrings of its
        normalised lines.

        ASCII lines are only lower-cased; the rest (few, in code) are normalised on their own,
        since normalising a long text that holds one non-ASCII character costs milliseconds.
        """
        memo, key = self.memo, self.key
        known = {}
        if memo is not None:
            for term in wanted:
                found = memo.get((key, start, stop, "in", term))
                if isinstance(found, bool):
                    known[term] = found
        if len(known) < len(wanted):
            window = self.lines[start:stop]
            ascii_lines = [line for line in window if line.isascii()]
            texts = ["\n".join(ascii_lines).lower()]
            if len(ascii_lines) < len(window):
                texts.append(normalize("\n".join(line for line in window if not line.isascii())))
            missing = sorted(wanted.difference(known))
            if _COMPILED_OCCURRING is not None:
                # One pass over the ASCII text for every term (an issue text has hundreds).
                found_in = _COMPILED_OCCURRING(texts[0], missing)
                rest = texts[1:]
                found_all = [
                    f or any(t in text for text in rest)
                    for t, f in zip(missing, found_in, strict=True)
                ]
            else:
                found_all = [any(term in text for text in texts) for term in missing]
            for term, found in zip(missing, found_all, strict=True):
                known[term] = found
                if memo is not None:
                    memo.put((key, start, stop, "in", term), found)
        return sum(known.values())

    def lines_to_check(self, wanted: Wanted, start: int, stop: int) -> list[tuple[int, int, bool]]:
        """``(-most, index, exact)`` for the lines in ``[start, stop)`` that may hold a wanted
        token, in no order (:func:`_best_checked` sorts them).

        ``most`` bounds how many distinct wanted tokens the line can hold, and is that number
        when ``exact``. Tokenizing every line of a long definition would dominate a search,
        so lines are screened first: every token of an ASCII line is a lower-cased substring
        of it that starts and ends where the tokenizer can split (:func:`_token_bounds`), so
        only lines where a term occurs that way can count, and no more terms than occur there.
        With many terms (a pasted text) the compiled screen answers for the ASCII lines at
        once: only its best line is listed, exact. A line with other characters (where NFKC
        and casefolding may change lengths) is kept unscreened, bounded by every term.
        """
        if start >= stop:
            return []
        memo, key = self.memo, self.key
        automaton = wanted.compiled
        if automaton is not None:
            # Many terms (a pasted text): one compiled pass bounds each line's terms and
            # tokenizes the few lines that could be best, cheaper than a memo entry per term to
            # look up and add, and than tokenizing those lines one Python call at a time.
            best = self._compiled(start, stop).best_of(automaton)
            counts = {} if best is None else {best[0]: best[1]}
        else:
            counts = self._counted(wanted.ascii, start, stop)
        unscreened = memo.get((key, start, stop, None)) if memo is not None else None
        if not isinstance(unscreened, tuple):
            window = self.lines[start:stop]
            unscreened = ()
            if not "".join(window).isascii():
                unscreened = tuple(i for i, line in enumerate(window) if not line.isascii())
            if memo is not None:
                memo.put((key, start, stop, None), unscreened)
        exact = automaton is not None
        screened = [(-count, start + i, exact) for i, count in counts.items()]
        if unscreened:
            most = -len(wanted.terms)
            screened += [(most, start + i, False) for i in unscreened]
        return screened

    def _compiled(self, start: int, stop: int) -> Any:
        """The compiled screen of ``[start, stop)``, kept in the memo: joining and
        lower-casing a range costs a fifth of a pasted text's pass over it, and the same large
        classes answer text after text."""
        memo, key = self.memo, self.key
        found = memo.get((key, start, stop, "screen")) if memo is not None else None
        if found is None:
            window = self.lines[start:stop]
            found = _Prepared(window).compiled
            assert found is not None  # a search's automaton is made only with the extension
            if memo is not None:
                # Its original and lower-cased bytes, against 40 bytes per line number.
                memo.put((key, start, stop, "screen"), found, sum(map(len, window)) // 20 + 1)
        return found

    def _counted(self, terms: list[str], start: int, stop: int) -> Counter[int]:
        """How many of ``terms`` each line of ``[start, stop)`` may hold, from the memo's
        lines per term where it has them (counted in one pass over them all)."""
        memo, key = self.memo, self.key
        lines_of: list[tuple[int, ...]] = []
        missing = []
        for term in terms:
            found = memo.get((key, start, stop, term)) if memo is not None else None
            if type(found) is tuple:
                lines_of.append(found)
            else:
                missing.append(term)
        if missing:
            prepared = _Prepared(self.lines[start:stop])
            for term, found in zip(missing, prepared.many_term_lines(missing), strict=True):
                if memo is not None:
                    memo.put((key, start, stop, term), found)
                lines_of.append(found)
        return Counter(chain.from_iterable(lines_of))


# The compiled screen (``native/src/screen.rs``): the same lines and the same occurring
# terms as the Python below, found for every term of a query in one pass over the text.
_COMPILED_SCREEN = screened_lines()
_COMPILED_OCCURRING = terms_occurring()
# A search's terms made into one automaton for the screen's counts (None: an older build,
# or no extension).
_COMPILED_TERMS = native_part("ScreenTerms") if hasattr(_COMPILED_SCREEN, "best_of") else None


class _Prepared:
    """A range of lines joined for searching: ASCII lines lower-cased, other lines blanked."""

    __slots__ = ("ascii", "compiled", "ends", "lines", "text", "window")

    def __init__(self, lines: Sequence[str], compiled: bool = True) -> None:
        self.lines = lines
        window = lines
        self.ascii = "".join(lines).isascii()
        if not self.ascii:
            window = [line if line.isascii() else "" for line in lines]
        self.window = window
        self.compiled = None
        if compiled and _COMPILED_SCREEN is not None:
            self.compiled = _COMPILED_SCREEN(window)
            return
        # The lines are searched joined without separators, so every search runs in C; an
        # occurrence straddling two lines belongs to neither and is skipped.
        self.text = "".join(window).lower()
        self.ends = list(accumulate(map(len, window)))  # where each line ends in ``text``

    def many_term_lines(self, terms: list[str]) -> list[tuple[int, ...]]:
        """:meth:`term_lines` of each of ``terms``, in one pass over the text when compiled."""
        if self.compiled is not None and all(terms):
            return self.compiled.terms_lines(terms)
        return [self.term_lines(term) for term in terms]

    def term_lines(self, term: str) -> tuple[int, ...]:
        """The lines (relative to the range) where ``term`` occurs as it could as a token."""
        if self.compiled is not None:
            if term:
                return self.compiled.term_lines(term)
            self.compiled = None  # an empty term (found everywhere): the reference answers
            self.text = "".join(self.window).lower()
            self.ends = list(accumulate(map(len, self.window)))
        text, window, ends = self.text, self.window, self.ends
        find = text.find
        size = len(term)
        lines: list[int] = []
        found = find(term)
        while found >= 0:
            index = bisect_right(ends, found)
            line = window[index]
            begin = found - (ends[index - 1] if index else 0)
            if not _token_bounds(line, begin, begin + size):
                found = find(term, found + 1)
                continue
            lines.append(index)
            # One occurrence per line is enough: continue from the next line.
            found = find(term, ends[index])
        return tuple(lines)


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
