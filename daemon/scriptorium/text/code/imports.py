"""What a file imports, per language family (module paths, for ExpandRelated's import links)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from scriptorium.text.code.families import _families

_PY_FROM = re.compile(
    r"^[ \t]*from[ \t]+(?P<module>\.*[\w.]*)[ \t]+import[ \t]+"
    r"(?P<names>\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)",
    re.M,
)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+(?P<modules>[^\n#;]+)", re.M)
_JS_IMPORTS = (
    re.compile(
        r"\b(?:import|export)\s+(?:type\s+)?(?:[\w*${},\s]+?\s+from\s+)?['\"](?P<module>[^'\"\n]+)['\"]"
    ),
    re.compile(r"\b(?:require|import)\s*\(\s*['\"](?P<module>[^'\"\n]+)['\"]\s*\)"),
)
_GO_IMPORT = re.compile(r"^[ \t]*import[ \t]+(?:[\w.]+[ \t]+)?\"(?P<module>[^\"]+)\"", re.M)
_GO_IMPORT_BLOCK = re.compile(r"^[ \t]*import[ \t]*\((?P<body>.*?)\)", re.M | re.S)
_QUOTED = re.compile(r"\"([^\"\n]+)\"")
_JAVA_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+(?P<static>static[ \t]+)?(?P<module>[\w.]+?)(?:\.\*)?[ \t]*;", re.M
)
_CS_USING = re.compile(
    r"^[ \t]*(?:global[ \t]+)?using[ \t]+(?:static[ \t]+)?(?:\w+[ \t]*=[ \t]*)?"
    r"(?P<module>[\w.]+)[ \t]*;",
    re.M,
)


def _python_imports(text: str) -> Iterable[str]:
    for match in _PY_FROM.finditer(text):
        module = match.group("module")
        if module.strip("."):
            yield module
        names = match.group("names").replace("\\\n", " ").strip("() \t\n")
        for part in names.split(","):
            name = part.split()[0] if part.split() else ""
            if name and name != "*" and name.isidentifier():
                yield f"{module}{name}" if module.endswith(".") else f"{module}.{name}"
    for match in _PY_IMPORT.finditer(text):
        for part in match.group("modules").split(","):
            words = part.split()
            if words and re.fullmatch(r"[\w.]+", words[0]):
                yield words[0]


def _js_imports(text: str) -> Iterable[str]:
    found: list[tuple[int, str]] = []
    for pattern in _JS_IMPORTS:
        found.extend((m.start(), m.group("module")) for m in pattern.finditer(text))
    return [module for _, module in sorted(found)]


def _go_imports(text: str) -> Iterable[str]:
    found: list[tuple[int, str]] = [
        (m.start(), m.group("module")) for m in _GO_IMPORT.finditer(text)
    ]
    for block in _GO_IMPORT_BLOCK.finditer(text):
        found.extend(
            (block.start() + m.start(), m.group(1)) for m in _QUOTED.finditer(block["body"])
        )
    return [module for _, module in sorted(found)]


def _java_imports(text: str) -> Iterable[str]:
    for match in _JAVA_IMPORT.finditer(text):
        module = match.group("module")
        if match.group("static") and "." in module:
            yield module.rsplit(".", 1)[0]
        yield module


def _csharp_imports(text: str) -> Iterable[str]:
    return [m.group("module") for m in _CS_USING.finditer(text)]


@cache
def _import_readers():
    return {
        "python": _python_imports,
        "js": _js_imports,
        "go": _go_imports,
        "java": _java_imports,
        "csharp": _csharp_imports,
    }


def import_targets(text: str, language: str | None) -> list[str]:
    """Module names a file imports, in first-seen order without repeats.

    ``from x.y import z`` gives "x.y" and "x.y.z" (relative imports keep their dots); JS/TS gives
    the specifier of ``import``/``export … from``/``require``; Go the import paths; Java and C#
    the imported or used names.
    """
    readers = _import_readers()
    found: list[str] = []
    for family in _families(language):
        found.extend(readers[family](text))
    return list(dict.fromkeys(m for m in found if m))
