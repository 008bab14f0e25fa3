"""Unicode normalisation shared by documents and queries.

Every string that is indexed or matched goes through the same two steps so that visually equal
text compares equal: NFKC folds compatibility forms (full-width Latin, half-width katakana,
ligatures, circled digits) into their plain forms, and casefolding removes case distinctions more
thoroughly than ``lower()`` (``ß`` matches ``ss``).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = [
    "clip_at_whitespace",
    "collapse_whitespace",
    "kept_by_nfkc",
    "nfkc",
    "normalize",
    "without_fence_languages",
    "without_form_labels",
    "without_html_comments",
    "without_urls",
    "without_version_lines",
]

_LAST_WORD = re.compile(r"\s\S*\Z")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# An issue form's labels as GitHub renders them: "### What happened?" headings, "- [X] ..."
# confirmation boxes, and older templates' "**Describe the bug**" lines.
_FORM_LABEL = re.compile(
    r"^(?:#{2,6}[ \t]+\S[^\n]*|[ \t]*[-*][ \t]+\[[ xX]\][ \t]+[^\n]*"
    r"|[ \t]*\*\*[^*\n]{1,80}\*\*[ \t]*:?[ \t]*)$",
    re.M,
)
# "numpy: 1.22.4", "Sphinx version: 4.1.2", "pandas==1.4.2": a listing of the writer's
# installed versions; within one, "netCDF4: None" says a package is not installed.
_VERSION_LINE = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?[A-Za-z][\w.\- ]{0,39}[ \t]*(?::|==)[ \t]*"
    r"v?\d+\.\d[\w.+\-]*(?:[ \t][^\n]*)?$",
    re.M,
)
_ABSENT_LINE = re.compile(r"^[ \t]*[A-Za-z][\w.\-]{0,39}:[ \t]*None[ \t]*$", re.M)
# A listing is at least this many version lines.
_LISTING_LINES = 3
_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]]+")
_FENCE = re.compile(r"^([ \t]*(?:```|~~~))", re.M)
_FENCE_LANGUAGE = re.compile(r"^([ \t]*(?:```+|~~~+)[ \t]*)[^\s`~{]+", re.M)


def nfkc(text: str) -> str:
    """NFKC without touching the case; ASCII, the common case, is returned as it is."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


# Hangul's medial vowels and final consonants compose with the syllable before them by rule,
# not through a decomposition in the tables.
_HANGUL_V_T = (range(0x1161, 0x1176), range(0x11A8, 0x11C3))
# No character past the CJK compatibility supplement (U+2FA1D) has a canonical decomposition
# (a test reads the rest of the tables to keep this true).
DECOMPOSED_BELOW = 0x30000


@functools.cache
def composing_seconds(last: int = DECOMPOSED_BELOW) -> frozenset[int]:
    """Code points that NFKC may compose with the character before them: the second of
    every two-character canonical decomposition below ``last``, and Hangul's vowels and
    final consonants. Made once, when the first non-ASCII character is asked about (a pass
    over the tables, about 25 ms)."""
    decomposition = unicodedata.decomposition
    seconds = {code for part in _HANGUL_V_T for code in part}
    for code in range(0xC0, last):
        parts = decomposition(chr(code))
        if parts and parts[0] != "<":
            pair = parts.split()
            if len(pair) == 2:
                seconds.add(int(pair[1], 16))
    return frozenset(seconds)


def kept_by_nfkc(char: str) -> bool:
    """Whether NFKC leaves ``char`` as it is wherever it stands: its own NFKC, no combining
    class (nothing reorders around it) and nothing composes with it."""
    return (
        not unicodedata.combining(char)
        and ord(char) not in composing_seconds()
        and unicodedata.normalize("NFKC", char) == char
    )


def normalize(text: str) -> str:
    """Unicode NFKC, then casefold."""
    if text.isascii():
        return text.lower()
    return nfkc(text).casefold()


def without_html_comments(text: str) -> str:
    """The text without its HTML comments (``<!-- ... -->``), each replaced by a space.

    Markdown renders them invisible; in a pasted issue text they are the template's hidden
    prompts ("Please be sure to check out our contributing guidelines"), words the writer
    never wrote about the problem. An unclosed ``<!--`` is left as it is.
    """
    if "<!--" not in text:
        return text
    return _HTML_COMMENT.sub(" ", text)


def without_fence_languages(text: str) -> str:
    """The text without the language names of its fenced code blocks (```` ```python ````).

    The name says how to highlight the block, not what it is about: in a pasted issue text
    ``python``, ``pycon`` or ``julia`` would otherwise search for the pages and modules that
    mention that language.
    """
    if "```" not in text and "~~~" not in text:
        return text
    return _FENCE_LANGUAGE.sub(r"\1", text)


def without_form_labels(text: str) -> str:
    """The text without the labels an issue form puts in it, outside fenced code blocks.

    A pasted issue repeats its template's headings ("### Sphinx extensions", "### Python
    version") and ticked confirmations ("- [X] Minimal example — ..."): the same words in
    every issue of the project, not the writer's account of the problem. Lines inside code
    fences (where ``## ...`` is a comment) are kept.
    """
    if "#" not in text and "[" not in text and "**" not in text:
        return text
    pieces = _FENCE.split(text)
    # With the fence marks captured, pieces alternate: text, mark, text, ...; every other text
    # piece (0, 4, 8, ...) lies outside a fence (an unclosed fence runs to the end).
    return "".join(
        _FORM_LABEL.sub("", piece) if i % 4 == 0 else piece for i, piece in enumerate(pieces)
    )


def without_version_lines(text: str) -> str:
    """The text without the lines of a listing of installed versions (``numpy: 1.22.4``,
    ``pandas==1.4.2``, ``Sphinx version: 4.1.2``; with three or more of them, also the
    ``netCDF4: None`` lines among them).

    A pasted issue often ends with its writer's environment: dozens of package names that
    describe the machine, not the problem, and match the modules named after those packages.
    """
    if ":" not in text and "==" not in text:
        return text
    text = text.replace("\r\n", "\n")
    kept, listed = _VERSION_LINE.subn("", text)
    return _ABSENT_LINE.sub("", kept) if listed >= _LISTING_LINES else kept


def without_urls(text: str) -> str:
    """The text with its web addresses replaced by a space.

    In a pasted issue they say where the writer put an example or which thread came before
    (``https://github.com/someone/repro-9585``), words that name no code.
    """
    if "http" not in text and "www." not in text:
        return text
    return _URL.sub(" ", text)


def clip_at_whitespace(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, cut before a word it would split.

    A long query is searched by its start; a term cut in half would search for a word the
    caller never wrote. Text with no whitespace in the first ``limit`` characters is cut hard.
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not text[limit].isspace():
        last = _LAST_WORD.search(head)
        if last is not None and last.start() > 0:
            head = head[: last.start()]
    return head.rstrip()


def split_lines(text: str) -> list[str]:
    """Lines as editors, tree-sitter and our line numbers count them.

    Splits on ``\\n`` only (``str.splitlines`` also breaks on form feeds and U+2028, which
    would shift every later line number) and drops a trailing ``\\r``.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:  # most files: no line to look at one by one
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace (``str.isspace``: tabs, CR, NBSP, ...) becomes one space; trimmed."""
    return " ".join(text.split())
