"""The compiled line screen (``native/src/screen.rs``) against the Python screen it stands in for.

Anchoring a code result screens its block's lines per query term (``text/snippets.py``,
``_Prepared.term_lines``); the compiled screen must find the same lines for every term, and
count each line's distinct terms among its tokens exactly as ``tokenize`` does: over every
Python file of the FastAPI corpus with the words of its own lines as terms, over adversarial
lines (camelCase, digits, underscores, a term straddling two lines, blanked non-ASCII lines,
empty lines, inlined data, overlong words) and over random mixtures; and ``best_line`` must
answer the same with and without it.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from scriptorium.text import snippets
from scriptorium.text.compiled import screened_lines
from scriptorium.text.normalize import split_lines
from scriptorium.text.tokenize import MAX_TOKEN_CHARS, tokenize
from tests.support.daemon import CORPUS

pytestmark = pytest.mark.skipif(
    screened_lines() is None, reason="the compiled extension is not installed"
)

ADVERSARIAL = [
    ["def getUserName(user_id):", "    return USER_NAMES[user_id]", "", "x = user2name"],
    ["class HTTPServer2Handler:", "    html5Parser = HTML5Parser()", "    v2api = 'v2'"],
    ["abc", "def", "abcdef", "ab", "cdef"],  # terms straddling line ends
    ["", "", "path", "", "pathPath path_path path.path"],
    ["", "caf\u00e9 = 1", "cafe = 2"],  # the non-ASCII line is blanked by the caller
    ["aaaa", "aaaaaaa", "a a a", "Aa aA AA"],
    ["x1y2z3", "1abc", "abc1", "ABCdef", "abcDEF", "_abc_", "__init__"],
    # inlined data (its payload is no word), compounds, and a word longer than any token
    ['src="data:image/png;base64,iVBORw0abcKGgo=" alt=abc', ";base64,;base64,abc_def x"],
    ["a.b.c = x::y::z", "path/to-file.py", "fooBar_bazQux.quux", "v2.api-3"],
    ["a" * (MAX_TOKEN_CHARS + 1) + "_abc", "abc_" + "b" * MAX_TOKEN_CHARS],
]


def _window(lines: list[str]) -> list[str]:
    return [line if line.isascii() else "" for line in lines]


def _both(lines: list[str], term: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    window = _window(lines)
    python = snippets._Prepared(window, compiled=False).term_lines(term)
    compiled = snippets._Prepared(window).term_lines(term)
    return python, compiled


def _all_terms(lines: list[str], terms: list[str]) -> tuple[list, list]:
    """Every term's lines at once (one pass in the extension), and each by the reference."""
    window = _window(lines)
    python = [snippets._Prepared(window, compiled=False).term_lines(t) for t in terms]
    return python, snippets._Prepared(window).many_term_lines(terms)


def _counts(lines: list[str], terms: list[str]) -> tuple[list, list]:
    """Each line's count of terms from the reference's lines per term, and the compiled
    count of all of them in one pass."""
    python, _ = _all_terms(lines, terms)
    counted = Counter(line for found in python for line in found)
    automaton = snippets._COMPILED_TERMS(terms, MAX_TOKEN_CHARS)
    compiled = snippets._Prepared(_window(lines)).compiled.counts_of(automaton)
    return sorted(counted.items()), compiled


def _best_of(lines: list[str], terms: list[str]) -> tuple[tuple | None, tuple | None]:
    """The earliest line with the most distinct terms among its tokens (``tokenize``,
    stopwords kept), by the reference and compiled."""
    wanted = set(terms)
    window = _window(lines)
    python = None
    for index, line in enumerate(window):
        count = len(wanted.intersection(tokenize(line, drop_stopwords=False)))
        if count > (python[1] if python else 0):
            python = (index, count)
    automaton = snippets._COMPILED_TERMS(terms, MAX_TOKEN_CHARS)
    return python, snippets._Prepared(window).compiled.best_of(automaton)


def _occurring(text: str, terms: list[str]) -> tuple[list[bool], list[bool]]:
    return [t in text for t in terms], snippets._COMPILED_OCCURRING(text, terms)


def _terms(lines: list[str]) -> set[str]:
    words = {w.lower() for line in lines for w in re.findall(r"[A-Za-z0-9_]+", line)}
    parts = {p for w in words for p in re.split(r"_+|(?<=\d)(?=[a-z])", w) if p}
    return words | parts | {"a", "ab", "abc", "path", "user", "name", "self", "x"}


def test_the_compiled_screen_is_in_use() -> None:
    assert snippets._Prepared(["a"]).compiled is not None
    assert snippets._COMPILED_OCCURRING is not None
    many = snippets.Wanted([f"term{i}" for i in range(snippets.COUNTED_TERMS + 1)])
    assert many.compiled is not None
    assert snippets.Wanted(["few", "terms"]).compiled is None  # the memo's lines per term


@pytest.mark.parametrize("lines", ADVERSARIAL)
def test_adversarial_lines_screen_alike(lines: list[str]) -> None:
    for term in sorted(_terms(lines)):
        python, compiled = _both(lines, term)
        assert compiled == python, (term, lines)
    terms = sorted(_terms(lines))
    python, compiled = _all_terms(lines, terms)
    assert compiled == python, lines
    python, compiled = _counts(lines, terms)
    assert compiled == python, lines
    listed = sorted({*terms, "base64", "png", "ivborw0abckggo", "def"})
    for some in (listed, listed[::2], listed[1::3], ["zzz", "base64"]):
        python, compiled = _best_of(lines, some)
        assert compiled == python, (lines, some)
    text = "\n".join(line for line in lines if line.isascii()).lower()
    python, compiled = _occurring(text, [*terms, "zzz", "\nab", ""])
    assert compiled == python, lines


def test_every_python_file_of_the_corpus_screens_alike() -> None:
    files = sorted((CORPUS / "fastapi").rglob("*.py"))
    assert len(files) > 20
    compared = counted = 0
    for path in files:
        lines = split_lines(path.read_text("utf-8"))
        terms = sorted(_terms(lines))
        for term in terms[:200]:
            python, compiled = _both(lines, term)
            assert compiled == python, (path.name, term)
            compared += bool(python)
        python, compiled = _all_terms(lines, terms)
        assert compiled == python, path.name
        python, compiled = _counts(lines, terms)
        assert compiled == python, path.name
        for some in (terms, terms[::7], terms[3::11]):
            python, compiled = _best_of(lines, some)
            assert compiled == python, path.name
            counted += python is not None
        text = "\n".join(line for line in lines if line.isascii()).lower()
        python, compiled = _occurring(text, [*terms, "zq", "not_in_this_file"])
        assert compiled == python, path.name
    assert compared > 1000  # most terms are found somewhere: the comparison is of real lines
    assert counted > 50  # files where some line holds a term


def test_random_mixtures_screen_alike() -> None:
    rng = random.Random(43)
    alphabet = "aAbB0_1 .(x)Yz\u00e9"
    for _ in range(300):
        lines = [
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))
            for _ in range(rng.randrange(1, 8))
        ]
        terms = {
            "".join(rng.choice("ab01xyz_") for _ in range(rng.randrange(1, 4))) for _ in range(8)
        }
        for term in terms:
            python, compiled = _both(lines, term)
            assert compiled == python, (term, lines)
        python, compiled = _all_terms(lines, sorted(terms))
        assert compiled == python, lines
        python, compiled = _counts(lines, sorted(terms))
        assert compiled == python, lines
        python, compiled = _best_of(lines, sorted(terms))
        assert compiled == python, lines
        text = "\n".join(line for line in lines if line.isascii()).lower()
        python, compiled = _occurring(text, sorted(terms))
        assert compiled == python, lines


def test_best_line_answers_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    source = (CORPUS / "fastapi" / "routing.py").read_text("utf-8")
    lines = split_lines(source)
    queries = [
        ["APIRouter", "include_router", "prefix"],
        ["dependencies", "response_model", "status_code"],
        ["websocket", "route"],
        ["nothing_here_at_all"],
        # A pasted text's many terms: counted by one compiled pass (COUNTED_TERMS).
        [*sorted(_terms(lines[400:440]))[:80], "zq_absent", "caf\u00e9"],
    ]
    assert len(queries[-1]) > snippets.COUNTED_TERMS
    ranges = [(0, None), (100, 900), (350, 420)]
    answers = [snippets.best_line(lines, terms, a, b) for terms in queries for a, b in ranges]
    memo = snippets.ScreenMemo()
    twice = [
        snippets.best_line(lines, terms, a, b, memo=memo, key="routing")
        for _ in range(2)
        for terms in queries
        for a, b in ranges
    ]
    assert twice == answers + answers
    prepared = [snippets.Wanted(terms) for terms in queries]  # once per search, as anchoring does
    assert [snippets.best_line(lines, w, a, b) for w in prepared for a, b in ranges] == answers
    monkeypatch.setattr(snippets, "COUNTED_TERMS", 10_000)  # the memo's lines per term
    assert [
        snippets.best_line(lines, terms, a, b) for terms in queries for a, b in ranges
    ] == answers
    monkeypatch.setattr(snippets, "_COMPILED_SCREEN", None)
    monkeypatch.setattr(snippets, "_COMPILED_TERMS", None)
    monkeypatch.setattr(snippets, "_COMPILED_OCCURRING", None)
    assert [
        snippets.best_line(lines, terms, a, b) for terms in queries for a, b in ranges
    ] == answers
    assert sum(answer is not None for answer in answers) >= 9
