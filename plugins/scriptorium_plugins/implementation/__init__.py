"""The ``implementation`` ranking mode: favour material that shows how to build something.

For "how do I implement X" questions the most useful code is where an application is wired
together: entry points, route handlers, dependency injection, decorators and configuration, plus
example programs; the most useful docs are the ones that carry code. Each of those signals is a
named, modest boost, and the product per candidate is capped so structure can reorder close
results without burying a clearly better lexical match.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath

from scriptorium.plugin import (
    Candidate,
    Corpus,
    Query,
    RankingMode,
    hookimpl,
    is_configuration,
    is_decorator,
    is_dependency_injection,
    routes,
)

Signal = tuple[str, str]  # (boost name, detail for explain)

# Measured on eval/fastapi.jsonl (its implementation-mode cases): MRR 0.83 with these values
# against 0.74 without boosts; three times larger ones (route 1.35, entry point 1.3, ...) lift
# unrelated route handlers above the right page and fall back to 0.72. The cap guards larger
# values passed to the constructor.
BOOSTS: dict[str, float] = {
    "route": 1.1,
    "entrypoint": 1.1,
    "dependency-injection": 1.06,
    "decorator": 1.03,
    "configuration": 1.06,
    "example": 1.05,
    "has-code-example": 1.1,
}
MAX_COMBINED_BOOST = 2.0

_ENTRYPOINT_NAMES = frozenset(
    {
        "main.py",
        "app.py",
        "__main__.py",
        "asgi.py",
        "wsgi.py",
        "manage.py",
        "program.cs",
        "startup.cs",
        "main.go",
        "main.ts",
        "main.js",
        "index.ts",
        "index.js",
        "app.ts",
        "app.js",
        "main.java",
        "main.kt",
    }
)
_ENTRYPOINT_STEMS = frozenset({"server", "main", "app"})
_SPRING_APPLICATION = re.compile(r"\w+Application\.(?:java|kt)$")
_CONFIG_SUFFIXES = frozenset({".toml", ".yaml", ".yml", ".ini", ".cfg", ".properties", ".json"})
_CONFIG_STEM = re.compile(r"(?:^|[_.-])(?:config|configuration|settings|appsettings)(?:$|[_.-])")
_EXAMPLE_DIRS = frozenset({"docs_src", "examples", "example", "samples", "sample", "demo", "demos"})
_FENCE = re.compile(r"^\s*(?:```|~~~)", re.M)
_INCLUDE = re.compile(r"\{\*\s*(?P<target>[^*}\s]+)[^}]*\*\}|\{!>?\s*(?P<old>[^!}\s]+)|--8<--")


class ImplementationMode:
    """Boosts entry points, routes, DI, decorators, configuration and examples."""

    name = "implementation"
    description = (
        "Implementation questions: boosts entry points, route handlers, dependency injection, "
        "decorators, configuration and example code, and docs that carry code examples; keeps "
        "both docs and code in the results."
    )
    prefer_mixed_corpora = True

    def __init__(
        self, boosts: dict[str, float] | None = None, max_combined: float = MAX_COMBINED_BOOST
    ) -> None:
        self.boosts = {**BOOSTS, **(boosts or {})}
        self.max_combined = max_combined

    def rerank(self, query: Query, candidates: list[Candidate]) -> None:
        for candidate in candidates:
            signals = code_signals(candidate) if _is_code(candidate) else doc_signals(candidate)
            self._apply(candidate, signals)

    def _apply(self, candidate: Candidate, signals: Iterator[Signal]) -> None:
        """Apply each boost in turn, trimming the last ones so the product stays under the cap."""
        combined = 1.0
        for name, detail in signals:
            allowed = min(self.boosts.get(name, 1.0), self.max_combined / combined)
            if allowed <= 1.0 + 1e-9:
                continue
            candidate.adjust(name, allowed, detail)
            combined *= allowed


def _is_code(candidate: Candidate) -> bool:
    return candidate.document.corpus is Corpus.CODE


def code_signals(candidate: Candidate) -> Iterator[Signal]:
    """The implementation signals a code candidate shows, strongest evidence first."""
    document = candidate.document
    return iter(_code_signals(document.path, document.language, candidate.block.body))


def doc_signals(candidate: Candidate) -> Iterator[Signal]:
    """Docs earn a smaller boost when they show code: a fence or an included example file."""
    return iter(_doc_signals(candidate.block.body))


# Signals depend on the block alone, and a search asks about its 50 candidates, most of them
# the blocks the last implementation search asked about: they are remembered, since finding
# them tests patterns on every line (70 % of an implementation-mode rerank).
@functools.lru_cache(maxsize=4096)
def _code_signals(path: str, language: str | None, body: str) -> tuple[Signal, ...]:
    return tuple(_find_code_signals(path, language, body))


@functools.lru_cache(maxsize=4096)
def _doc_signals(body: str) -> tuple[Signal, ...]:
    return tuple(_find_doc_signals(body))


def _find_code_signals(path: str, language: str | None, body: str) -> Iterator[Signal]:
    lines = body.split("\n")
    file_name = path.rsplit("/", 1)[-1]

    found_routes = routes(lines, language)
    if found_routes:
        yield "route", f"route handler {found_routes[0].title}"
    if is_entrypoint(path):
        yield "entrypoint", f"{file_name} is an application entry point"
    injected = is_dependency_injection(body) and _first(lines, is_dependency_injection)
    if injected:
        yield "dependency-injection", injected
    route_lines = {r.line for r in found_routes}
    decorated = ("@" in body or "[" in body) and _first(
        (line for number, line in enumerate(lines, 1) if number not in route_lines),
        lambda line: is_decorator(line, language),
    )
    if decorated:
        yield "decorator", decorated
    if is_config_path(path):
        yield "configuration", f"{file_name} is a configuration file"
    else:
        configured = is_configuration(body) and _first(lines, is_configuration)
        if configured:
            yield "configuration", configured
    if is_example_path(path):
        yield "example", "example program"


def _find_doc_signals(body: str) -> Iterator[Signal]:
    include = _INCLUDE.search(body)
    if include:
        target = include.group("target") or include.group("old") or "a snippet"
        yield "has-code-example", f"includes {target}"
    elif _FENCE.search(body):
        yield "has-code-example", "contains a fenced code block"


@functools.lru_cache(maxsize=4096)
def is_entrypoint(path: str) -> bool:
    """Where an application starts or is assembled: main/app/server files, Program.cs, cmd/."""
    pure = PurePosixPath(path)
    name = pure.name.lower()
    if name in _ENTRYPOINT_NAMES or _SPRING_APPLICATION.search(pure.name):
        return True
    if pure.stem.lower() in _ENTRYPOINT_STEMS and pure.suffix:
        return True
    return "cmd" in pure.parts[:-1]


@functools.lru_cache(maxsize=4096)
def is_config_path(path: str) -> bool:
    """Settings modules and configuration files (TOML, YAML, INI, appsettings.json, ...)."""
    pure = PurePosixPath(path)
    if pure.suffix.lower() in _CONFIG_SUFFIXES:
        return True
    return bool(_CONFIG_STEM.search(pure.stem.lower()))


@functools.lru_cache(maxsize=4096)
def is_example_path(path: str) -> bool:
    return any(part.lower() in _EXAMPLE_DIRS for part in PurePosixPath(path).parts[:-1])


def _first(lines, test: Callable[[str], bool]) -> str | None:
    """The first matching line, shortened for an explain detail."""
    for line in lines:
        if line.strip() and test(line):
            text = " ".join(line.split())
            return text if len(text) <= 120 else text[:119] + "…"
    return None


MODE: RankingMode = ImplementationMode()


@hookimpl
def scriptorium_register_ranking_modes(register: Callable[[RankingMode], None]) -> None:
    register(MODE)
