"""Language families and the rows of a file that hold no code (blanks, comments, docstrings).

``language`` uses the code source's names ("python", "typescript", "go", ...); an unknown or
missing language tries every family's patterns.
"""

from __future__ import annotations

from collections.abc import Sequence

Range = tuple[int, int, str]
FlowCandidate = tuple[int, str, str, str]

_FAMILIES = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "vue": "js",
    "svelte": "js",
    "go": "go",
    "java": "java",
    "csharp": "csharp",
}
_ALL_FAMILIES = ("python", "js", "go", "java", "csharp")
_HASH_COMMENT_FAMILIES = frozenset({"python"})


def _families(language: str | None) -> tuple[str, ...]:
    family = _FAMILIES.get((language or "").lower())
    return (family,) if family else _ALL_FAMILIES


def _is_comment(line: str, families: tuple[str, ...]) -> bool:
    stripped = line.lstrip()
    if stripped.startswith("#") and any(f in _HASH_COMMENT_FAMILIES for f in families):
        return True
    if any(f != "python" for f in families):
        return stripped.startswith(("//", "/*", "* ", "*/")) or stripped == "*"
    return False


def _non_code_rows(lines: Sequence[str], families: tuple[str, ...]) -> set[int]:
    """0-based rows that hold no code: blanks, comments and the inside of Python triple-quoted
    strings, whose examples (``@app.get`` in a docstring) must not count as real routes."""
    skipped: set[int] = set()
    python = "python" in families
    quote: str | None = None
    for row, line in enumerate(lines):
        if quote is not None:
            skipped.add(row)
            if line.count(quote) % 2 == 1:
                quote = None
            continue
        if not line.strip() or _is_comment(line, families):
            skipped.add(row)
            continue
        if python:
            for mark in ('"""', "'''"):
                if line.count(mark) % 2 == 1:
                    quote = mark
                    break
    return skipped


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
