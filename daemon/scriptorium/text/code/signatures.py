"""Definition lines (functions, classes, methods, types) found by pattern, per language family."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from scriptorium.text.code.families import _families, _non_code_rows

_JAVA_MODIFIERS = r"(?:public|private|protected|static|final|abstract|synchronized|native|default)"
_CS_MODIFIERS = (
    r"(?:public|private|protected|internal|static|virtual|override|abstract|sealed|async|"
    r"extern|unsafe|new|partial|readonly)"
)
_NOT_A_TYPE = (
    r"(?!(?:return|new|else|throw|case|yield|await|assert|package|import|using|public|private|"
    r"protected|internal|static|final|abstract|virtual|override|async)\b)"
)

_SIGNATURES: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "python": (
        (re.compile(r"^\s*(?:async\s+)?def\s+(?P<name>\w+)"), "function"),
        (re.compile(r"^\s*class\s+(?P<name>\w+)"), "class"),
    ),
    "js": (
        (
            re.compile(
                r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)"
            ),
            "function",
        ),
        (
            re.compile(
                r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?"
                r"class\s+(?P<name>[\w$]+)"
            ),
            "class",
        ),
        (
            re.compile(
                r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*"
                r"(?:async\s+)?(?:function\b|(?:\([^)]*\)|[\w$]+)\s*(?::\s*[^=]+)?=>)"
            ),
            "function",
        ),
        (
            re.compile(r"^\s*(?:export\s+)?(?:declare\s+)?interface\s+(?P<name>[\w$]+)"),
            "interface",
        ),
        (
            re.compile(r"^\s*(?:export\s+)?(?:declare\s+)?type\s+(?P<name>[\w$]+)\s*(?:<.*>)?\s*="),
            "type",
        ),
        (
            re.compile(
                r"^\s+(?:(?:public|private|protected|static|async|readonly|override|abstract|"
                r"get|set)\s+)*(?!(?:if|for|while|switch|catch|function|return|with)\b)"
                r"(?P<name>[\w$#]+)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^={]+)?\{\s*$"
            ),
            "method",
        ),
    ),
    "go": (
        (re.compile(r"^func\s+\([^)]*\)\s*(?P<name>\w+)"), "method"),
        (re.compile(r"^func\s+(?P<name>\w+)"), "function"),
        (re.compile(r"^\s*type\s+(?P<name>\w+)\s+struct\b"), "struct"),
        (re.compile(r"^\s*type\s+(?P<name>\w+)\s+interface\b"), "interface"),
        (re.compile(r"^type\s+(?P<name>\w+)\b(?!\s*\()"), "type"),
    ),
    "java": (
        (
            re.compile(
                rf"^\s*(?:{_JAVA_MODIFIERS}\s+|(?:sealed|non-sealed|strictfp)\s+)*"
                r"(?P<kind>class|interface|enum|record|@interface)\s+(?P<name>\w+)"
            ),
            "class",
        ),
        (
            re.compile(
                rf"^\s*(?:{_JAVA_MODIFIERS}\s+)*(?:<[^>]+>\s+)?{_NOT_A_TYPE}"
                r"[\w.$]+(?:<[^()]*>)?(?:\[\])*\s+(?P<name>\w+)\s*\([^;]*$"
            ),
            "method",
        ),
        (
            re.compile(r"^\s*(?:public|private|protected)\s+(?P<name>[A-Z]\w*)\s*\([^;]*$"),
            "constructor",
        ),
    ),
    "csharp": (
        (
            re.compile(
                rf"^\s*(?:{_CS_MODIFIERS}\s+|file\s+|ref\s+)*"
                r"(?P<kind>class|interface|struct|record|enum)\s+(?P<name>\w+)"
            ),
            "class",
        ),
        (
            re.compile(
                rf"^\s*(?:{_CS_MODIFIERS}\s+)+{_NOT_A_TYPE}"
                r"[\w.<>\[\],?]+(?:<[^()]*>)?\s+(?P<name>\w+)\s*(?:<[^>]*>)?\s*\("
            ),
            "method",
        ),
        (
            re.compile(rf"^\s*(?:{_CS_MODIFIERS}\s+)+(?P<name>[A-Z]\w*)\s*\("),
            "constructor",
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class Signature:
    """A line that starts a definition."""

    line: int
    name: str
    kind: str
    text: str


_SIGNATURE_HINTS = {
    "python": r"\b(?:def|class)\s",
    "js": r"\b(?:function|class|interface|type)\b|=>|\{\s*$",
    "go": r"^\s*(?:func|type)\b",
    "java": r"\(|\b(?:class|interface|enum|record)\b",
    "csharp": r"\(|\b(?:class|interface|struct|record|enum)\b",
}


@cache
def _signature_filter(families: tuple[str, ...]) -> re.Pattern[str]:
    """Text every definition line of these families contains; most lines lack it."""
    return re.compile("|".join(_SIGNATURE_HINTS[family] for family in families))


def _signature_at(line: str, families: tuple[str, ...]) -> tuple[str, str] | None:
    if not _signature_filter(families).search(line):
        return None
    for family in families:
        for pattern, kind in _SIGNATURES[family]:
            match = pattern.match(line)
            if match:
                found = match.groupdict().get("kind") or kind
                return match.group("name"), "interface" if found == "@interface" else found
    return None


def signatures(lines: Sequence[str], language: str | None) -> list[Signature]:
    """Every definition-starting line with its name and kind."""
    families = _families(language)
    return _signatures(lines, families, _non_code_rows(lines, families))


def _signatures(
    lines: Sequence[str], families: tuple[str, ...], skipped: set[int]
) -> list[Signature]:
    found: list[Signature] = []
    for row, line in enumerate(lines):
        if row in skipped:
            continue
        hit = _signature_at(line, families)
        if hit:
            found.append(Signature(row + 1, hit[0], hit[1], line.strip()))
    return found


def signature_lines(lines: Sequence[str], language: str | None) -> list[int]:
    """1-based lines that start a function, class, method or type definition."""
    return [s.line for s in signatures(lines, language)]
