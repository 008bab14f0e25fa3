"""Heading anchors as GitHub computes them, so a location's ``#fragment`` matches the real page.

Inline markup is removed first (a heading's anchor is derived from its rendered text), then the
text is lower-cased, punctuation and symbols are dropped (letters of every script, marks,
digits, ``-`` and ``_`` survive) and every space becomes a hyphen without collapsing runs.
Variation selectors (U+FE00..U+FE0F, U+E0100..U+E01EF) are marks by category but GitHub drops
them with the emoji they follow, so ``## ⚠️ Caveats`` is ``-caveats``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# Quantifiers are bounded so a pathological line costs linear, not quadratic, time.
_IMAGE = re.compile(r"!\[([^\]]{0,500})\]\([^)]{0,2000}\)")
_LINK = re.compile(r"\[([^\]]{0,500})\](?:\([^)]{0,2000}\)|\[[^\]]{0,500}\])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]{0,2000})>")
_CODE_SPAN = re.compile(r"(`{1,10})(.{1,2000}?)\1", re.DOTALL)
_HTML_TAG = re.compile(
    r"</?[A-Za-z][A-Za-z0-9-]{0,50}(?:\s[^<>]{0,2000})?/?>|<!--.{0,2000}?-->", re.DOTALL
)
# Each with the character it cannot match without.
_EMPHASIS = (
    ("**", re.compile(r"\*\*(?=\S)(.{1,500}?)(?<=\S)\*\*")),
    ("__", re.compile(r"(?<![\w])__(?=\S)(.{1,500}?)(?<=\S)__(?![\w])")),
    ("~~", re.compile(r"~~(?=\S)(.{1,500}?)(?<=\S)~~")),
    ("*", re.compile(r"\*(?=\S)(.{1,500}?)(?<=\S)\*")),
    ("_", re.compile(r"(?<![\w])_(?=\S)(.{1,500}?)(?<=\S)_(?![\w])")),
)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_KEPT_PUNCTUATION = frozenset("-_")

# Escaped characters are parked in a private-use plane while markup is removed around them.
_PLACEHOLDER_BASE = 0xF0000
_PLACEHOLDER = re.compile("[\U000f0000-\U000f007f]")
# Text without any of these characters holds no markup (nor placeholders): it is returned as is.
_MARKUP_CHAR = re.compile("[\\\\\\[<`*_~\U000f0000-\U000f007f]")


def _protect(match: re.Match[str]) -> str:
    return chr(_PLACEHOLDER_BASE + ord(match.group(1)))


def _restore(text: str, *, literal: bool, parked: bool) -> str:
    """``text`` with its escaped characters back (``parked``: whether any were parked)."""
    if not parked:
        return text
    prefix = "\\" if literal else ""
    return _PLACEHOLDER.sub(lambda m: prefix + chr(ord(m.group()) - _PLACEHOLDER_BASE), text)


def _strip_prose_markup(text: str, parked: bool) -> str:
    # Each pattern needs its own character: a text without it is spared the call (a
    # substitution costs a microsecond or two even where nothing matches, and a page's
    # headings are many).
    if "<" in text:
        text = _HTML_TAG.sub("", text)
    for marker, pattern in _EMPHASIS:
        if marker in text:
            text = pattern.sub(r"\1", text)
    return _restore(text, literal=False, parked=parked)


def strip_inline_markup(text: str) -> str:
    """The visible text of a line of inline Markdown: links, emphasis, code ticks and tags go.

    Backslash escapes protect the character after them; code span contents are kept
    verbatim, so ``__init__`` inside backticks survives.
    """
    if not _MARKUP_CHAR.search(text):
        return text
    # A pattern is asked only where its first character occurs (the same text either way).
    escaped = "\\" in text
    parked = escaped or _PLACEHOLDER.search(text) is not None
    if escaped:
        text = _ESCAPE.sub(_protect, text)
    if "[" in text:
        text = _IMAGE.sub(r"\1", text)
        text = _LINK.sub(r"\1", text)
    if "<" in text:
        text = _AUTOLINK.sub(r"\1", text)
    if "`" not in text:
        return _strip_prose_markup(text, parked)
    parts: list[str] = []
    pos = 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(_strip_prose_markup(text[pos : match.start()], parked))
        code = match.group(2)
        if len(code) > 2 and code[0] == code[-1] == " " and code.strip():
            code = code[1:-1]
        parts.append(_restore(code, literal=True, parked=parked))
        pos = match.end()
    parts.append(_strip_prose_markup(text[pos:], parked))
    return "".join(parts)


def _variation_selector(char: str) -> bool:
    return "\ufe00" <= char <= "\ufe0f" or "\U000e0100" <= char <= "\U000e01ef"


def _kept(char: str) -> bool:
    if char in _KEPT_PUNCTUATION or char.isspace():
        return True
    if _variation_selector(char):
        return False
    category = unicodedata.category(char)
    return category[0] in "LNM" or category == "Pc"


class _SlugTable(dict):
    """``str.translate`` table, filled on first sight of each character: whitespace becomes
    ``-``, kept characters stay, everything else is dropped."""

    def __missing__(self, ordinal: int) -> str | None:
        char = chr(ordinal)
        value = ("-" if char.isspace() else char) if _kept(char) else None
        self[ordinal] = value
        return value


_SLUG_TABLE = _SlugTable()


def github_slug(heading: str) -> str:
    """The GitHub anchor for a heading's text (without de-duplication)."""
    return strip_inline_markup(heading).strip().lower().translate(_SLUG_TABLE)


class SlugAllocator:
    """Hands out unique anchors within one document, the way GitHub numbers repeats.

    The second heading with the same slug gets ``-1``, the third ``-2`` (VitePress and
    Python-Markdown number repeats the same way, so ``slugify`` may be theirs). Custom ids (from
    attribute lists) are used verbatim; ``reserve`` them up front so generated slugs never
    collide with an id declared further down the page.
    """

    def __init__(self, slugify: Callable[[str], str] = github_slug) -> None:
        self._slugify = slugify
        self._counts: dict[str, int] = {}
        self._taken: set[str] = set()

    def reserve(self, anchor: str) -> None:
        """Mark ``anchor`` as taken without handing it out."""
        self._taken.add(anchor)

    def allocate(self, text_or_custom_id: str, *, custom: bool = False) -> str:
        if custom:
            self._taken.add(text_or_custom_id)
            return text_or_custom_id
        base = self._slugify(text_or_custom_id)
        candidate = base
        while candidate in self._taken:
            self._counts[base] = self._counts.get(base, 0) + 1
            candidate = f"{base}-{self._counts[base]}"
        self._taken.add(candidate)
        return candidate
