"""Unicode normalisation shared by documents and queries.

Every string that is indexed or matched goes through the same two steps so that visually equal
text compares equal: NFKC folds compatibility forms (full-width Latin, half-width katakana,
ligatures, circled digits) into their plain forms, and casefolding removes case distinctions more
thoroughly than ``lower()`` (``ß`` matches ``ss``).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "clip_at_whitespace",
    "collapse_whitespace",
    "nfkc",
    "normalize",
    "without_html_comments",
]

_LAST_WORD = re.compile(r"\s\S*\Z")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def nfkc(text: str) -> str:
    """NFKC without touching the case; ASCII, the common case, is returned as it is."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


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
