"""The compiled tokenizer (``native/``, the ``scriptorium_native`` extension), when installed.

Building an index spends most of its time in the tokenizer, one Python call per distinct run
of text; the extension finds the runs and analyses the ASCII words and CJK runs in Rust, and
hands every other run (a word with a non-ASCII letter) back to the Python analyser, so the
rules that depend on Python's Unicode tables (``\\w``, ``str.casefold``, the case predicates)
are Python's own. The Python tokenizer stays the reference and the fallback: without the
extension, or with one built for other rules, everything runs in Python and gives the same
tokens (``tests/unit/test_compiled_tokenizer.py`` compares the two over a corpus).

``SCRIPTORIUM_PURE_PYTHON=1`` turns the extension off (to compare, or to rule it out).
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

log = logging.getLogger(__name__)

__all__ = [
    "class_ranges",
    "load",
    "markdown_lines",
    "native_part",
    "screened_lines",
    "terms_occurring",
]


def class_ranges(chars: str) -> list[tuple[int, int]]:
    """The code point ranges (end exclusive) of a ``[...]`` class body of single characters
    and ``a-b`` ranges, such as ``CJK_CHARS``."""
    out = []
    i = 0
    while i < len(chars):
        if i + 2 < len(chars) and chars[i + 1] == "-":
            out.append((ord(chars[i]), ord(chars[i + 2]) + 1))
            i += 3
        else:
            out.append((ord(chars[i]), ord(chars[i]) + 1))
            i += 1
    return sorted(out)


def load(
    rules: str, stopwords: frozenset[str], max_chars: int, cjk_chars: str
) -> tuple[Any | None, str]:
    """The extension's tokenizer for ``rules`` (the Python ``TOKENIZER_VERSION``), or None,
    and a sentence saying which tokenizer runs and why (the daemon logs it at start)."""
    if os.environ.get("SCRIPTORIUM_PURE_PYTHON"):
        return None, "off (SCRIPTORIUM_PURE_PYTHON is set): the Python tokenizer is used"
    try:
        import scriptorium_native
    except ImportError as exc:
        return None, f"not installed ({exc}): the Python tokenizer is used"
    if getattr(scriptorium_native, "RULES", None) != rules:
        return None, (
            f"built for tokenizer rules {getattr(scriptorium_native, 'RULES', '?')!r}, these are"
            f" {rules!r} (rebuild it with scripts/ensure_venv.sh): the Python tokenizer is used"
        )
    # Whether a non-ASCII character is a word character is Python's ``re``'s answer.
    is_word = re.compile(r"\w").fullmatch
    tokenizer = scriptorium_native.Tokenizer(
        set(stopwords), max_chars, class_ranges(cjk_chars), is_word
    )
    return tokenizer, "compiled (scriptorium_native)"


def native_part(name: str) -> Any | None:
    """The extension's ``name`` (a function or class), or None when the extension is not
    installed, lacks it (an older build) or ``SCRIPTORIUM_PURE_PYTHON`` is set: every fast
    path outside the tokenizer is looked up here, and its Python code runs instead."""
    if os.environ.get("SCRIPTORIUM_PURE_PYTHON"):
        return None
    try:
        import scriptorium_native
    except ImportError:
        return None
    return getattr(scriptorium_native, name, None)


def markdown_lines() -> Any | None:
    """The extension's Markdown line loops (fenced code, the heading pass), or None.

    Not tied to the tokenizer's rules: ``text/markdown.py`` keeps the Python loops as the
    reference, and ``tests/unit/test_compiled_markdown.py`` compares the two.
    """
    made = native_part("MarkdownLines")
    return None if made is None else made(str.isdecimal)


def screened_lines() -> Any | None:
    """The extension's line screen of code anchoring (``ScreenedLines``), or None.

    ``text/snippets.py`` keeps the Python screen as the reference, and
    ``tests/unit/test_compiled_screen.py`` compares the two.
    """
    return native_part("ScreenedLines")


def terms_occurring() -> Any | None:
    """The extension's test of which terms occur in a text, in one pass (or None)."""
    return native_part("terms_occurring")
