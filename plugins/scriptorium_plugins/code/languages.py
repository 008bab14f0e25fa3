"""Which language a source file is written in, and the tree-sitter objects to parse it.

Grammars come from the separate ``tree-sitter-<language>`` wheels. They are imported and compiled
only when a file of that language is first parsed, and a missing wheel simply means the language
falls back to line windows.
"""

from __future__ import annotations

import functools
import importlib
import threading
from dataclasses import dataclass
from pathlib import PurePosixPath

from tree_sitter import Language, Parser, Query, QueryError

from scriptorium_plugins.code.queries import DEFINITION_QUERIES


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """A language: how to recognise its files and, optionally, how to load its grammar."""

    name: str
    extensions: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()
    # (module, function) returning the grammar capsule, for languages with a tree-sitter grammar.
    grammar: tuple[str, str] | None = None


LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec("python", (".py", ".pyi", ".pyw"), grammar=("tree_sitter_python", "language")),
    LanguageSpec(
        "javascript",
        (".js", ".mjs", ".cjs", ".jsx"),
        grammar=("tree_sitter_javascript", "language"),
    ),
    LanguageSpec(
        "typescript",
        (".ts", ".mts", ".cts"),
        grammar=("tree_sitter_typescript", "language_typescript"),
    ),
    LanguageSpec("tsx", (".tsx",), grammar=("tree_sitter_typescript", "language_tsx")),
    LanguageSpec("go", (".go",), grammar=("tree_sitter_go", "language")),
    LanguageSpec("java", (".java",), grammar=("tree_sitter_java", "language")),
    LanguageSpec("csharp", (".cs", ".csx"), grammar=("tree_sitter_c_sharp", "language")),
    LanguageSpec("rust", (".rs",), grammar=("tree_sitter_rust", "language")),
    LanguageSpec(
        "ruby",
        (".rb", ".rake", ".gemspec"),
        ("Gemfile", "Rakefile"),
        grammar=("tree_sitter_ruby", "language"),
    ),
    LanguageSpec("php", (".php",), grammar=("tree_sitter_php", "language_php")),
    LanguageSpec("kotlin", (".kt", ".kts"), grammar=("tree_sitter_kotlin", "language")),
    LanguageSpec("swift", (".swift",), grammar=("tree_sitter_swift", "language")),
    LanguageSpec("scala", (".scala", ".sc"), grammar=("tree_sitter_scala", "language")),
    LanguageSpec("dart", (".dart",)),
    LanguageSpec("lua", (".lua",)),
    LanguageSpec("elixir", (".ex", ".exs")),
    LanguageSpec("c", (".c", ".h"), grammar=("tree_sitter_c", "language")),
    LanguageSpec(
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"),
        grammar=("tree_sitter_cpp", "language"),
    ),
    LanguageSpec("shell", (".sh", ".bash", ".zsh"), grammar=("tree_sitter_bash", "language")),
    LanguageSpec("powershell", (".ps1", ".psm1")),
    LanguageSpec("sql", (".sql",)),
    LanguageSpec("html", (".html", ".htm")),
    LanguageSpec("css", (".css", ".scss", ".sass", ".less")),
    LanguageSpec("vue", (".vue",)),
    LanguageSpec("svelte", (".svelte",)),
    LanguageSpec("proto", (".proto",)),
    LanguageSpec("graphql", (".graphql", ".gql")),
    LanguageSpec("terraform", (".tf", ".hcl")),
    LanguageSpec("toml", (".toml",)),
    LanguageSpec("yaml", (".yaml", ".yml")),
    LanguageSpec("json", (".json",)),
    LanguageSpec("ini", (".ini", ".cfg")),
    LanguageSpec("properties", (".properties",)),
    LanguageSpec("dockerfile", (".dockerfile",), ("Dockerfile", "Containerfile")),
    LanguageSpec("makefile", (".mk",), ("Makefile", "makefile", "GNUmakefile")),
    LanguageSpec("cmake", (".cmake",), ("CMakeLists.txt",)),
)

_BY_EXTENSION = {ext: spec for spec in LANGUAGES for ext in spec.extensions}
_BY_FILENAME = {name: spec for spec in LANGUAGES for name in spec.filenames}
_BY_NAME = {spec.name: spec for spec in LANGUAGES}

GRAMMAR_LANGUAGES = frozenset(spec.name for spec in LANGUAGES if spec.grammar is not None)


def language_for_path(path: str) -> str | None:
    """The language of the file at ``path`` from its name, or None when unknown."""
    name = PurePosixPath(path.replace("\\", "/")).name
    spec = _BY_FILENAME.get(name)
    if spec is None:
        spec = _BY_EXTENSION.get(PurePosixPath(name).suffix.lower())
    if spec is None and name.startswith(("Dockerfile.", "Containerfile.")):
        spec = _BY_NAME["dockerfile"]
    return spec.name if spec else None


def has_grammar(language: str | None) -> bool:
    """Whether ``language`` is parsed with tree-sitter (otherwise it is cut into line windows)."""
    return language in GRAMMAR_LANGUAGES


def include_patterns() -> tuple[str, ...]:
    """Gitwildmatch patterns for every file this module recognises."""
    patterns: list[str] = []
    for spec in LANGUAGES:
        patterns.extend(f"*{ext}" for ext in spec.extensions)
        patterns.extend(spec.filenames)
    patterns.extend(("Dockerfile.*", "Containerfile.*"))
    return tuple(dict.fromkeys(patterns))


@functools.cache
def grammar(language: str) -> Language | None:
    """The compiled grammar for ``language``; None without one or when its wheel is missing."""
    spec = _BY_NAME.get(language)
    if spec is None or spec.grammar is None:
        return None
    module_name, function = spec.grammar
    try:
        module = importlib.import_module(module_name)
        return Language(getattr(module, function)())
    except (ImportError, AttributeError, ValueError):
        return None


@functools.cache
def definitions_query(language: str) -> Query | None:
    """The compiled definition query for ``language``, or None."""
    lang = grammar(language)
    source = DEFINITION_QUERIES.get(language)
    if lang is None or source is None:
        return None
    try:
        return Query(lang, source)
    except (QueryError, ValueError):
        # A grammar wheel whose node names drifted: fall back to line windows, do not fail.
        return None


_local = threading.local()


def parser(language: str) -> Parser | None:
    """A parser for ``language``, one per thread (parsers keep state while parsing)."""
    lang = grammar(language)
    if lang is None:
        return None
    parsers: dict[str, Parser] = _local.__dict__.setdefault("parsers", {})
    found = parsers.get(language)
    if found is None:
        found = parsers[language] = Parser(lang)
    return found
