"""What a path says about its file: an auxiliary kind (tests, fixtures, vendored or generated
code, a changelog, a blog, repository meta files, a hidden folder's configuration, examples,
build tooling, legacy code, experimental APIs; for documentation pages, migration guides,
error references and pages on another tool) or a translation, and its language. Memoised per
path: every search asks about the same few thousand.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from scriptorium.text import tokenize

_AUX_DIRS = {
    "tests": "tests", "test": "tests", "testing": "tests", "fixtures": "fixtures",
    "fixture": "fixtures", "vendor": "vendored", "vendored": "vendored", "_vendor": "vendored",
    "third_party": "vendored", "extern": "vendored", "generated": "generated",
    "_generated": "generated", "changelog": "changelog", "releases": "changelog",
    "release-notes": "changelog", "whatsnew": "changelog", "whats_new": "changelog",
    "whats-new": "changelog", "announce": "changelog", "changelog.d": "changelog",
    "newsfragments": "changelog", ".github": "meta", ".gitlab": "meta",
    "blog": "blog", "blogs": "blog", "_posts": "blog",
    # A development journal's entries are dated records, written once as a post is.
    "journal": "blog", "journals": "blog", "devlog": "blog",
    # The same kinds as other languages' trees name them.
    "__tests__": "tests", "__test__": "tests", "e2e": "tests", "__mocks__": "fixtures",
    "__fixtures__": "fixtures", "__snapshots__": "fixtures", "testdata": "fixtures",
    "node_modules": "vendored", "bower_components": "vendored", "dist": "generated",
    ".changeset": "changelog",
    # Code kept for older callers: a previous major version, a compatibility layer.
    "legacy": "legacy", "deprecated": "legacy", "_deprecated": "legacy", "compat": "legacy",
    "_compat": "legacy",
    # An experimental API (``tf.experimental.numpy``, ``pydantic/experimental/``): a preview
    # beside the stable API a user is pointed to, often covering the same tasks.
    "experimental": "experimental", "_experimental": "experimental",
    # Examples and demos of using the library: they call its code, they are not it.
    "examples": "examples", "example": "examples", "samples": "examples", "demo": "examples",
    "demos": "examples", "docs_src": "examples",
}  # fmt: skip
_AUX_FILES = re.compile(
    r"^(?:(?P<tests>test_.*|(?:.*_)?tests?\.py|conftest\.py"
    r"|.*\.(?:test|spec)\.[cm]?[jt]sx?|.*_test\.(?:go|rb)|.*_spec\.rb)"
    r"|(?P<generated>.*_pb2(?:_grpc)?\.pyi?|.*\.pb(?:\.gw)?\.go"
    r"|.*\.(?:min|dist|bundle)\.(?:[cm]?js|css)"
    r"|package-lock\.json|npm-shrinkwrap\.json|pnpm-lock\.yaml|yarn\.lock|bun\.lockb?"
    r"|cargo\.lock|poetry\.lock|pdm\.lock|uv\.lock|pipfile\.lock|go\.sum|composer\.lock"
    r"|gemfile\.lock)"
    r"|(?P<changelog>(?:changelog|changes|history|news|release[-_]?notes|whats[-_]?new)"
    r"(?:\..*)?))$",
    re.I,
)
# JVM, .NET and Swift test classes, told by case (``FooTest.java``, ``TestFoo.kt``, not
# ``Contest.java``).
_CASED_TESTS = re.compile(
    r"^(?:\w*[a-z0-9](?:Tests?|IT)|Tests?[A-Z]\w*)\.(?:java|kt|scala|cs|swift)$"
)
# Repository tooling: build, release and maintenance scripts beside the code they ship. The
# folders count at the top of the tree only (``pkg/utils`` is library code, ``utils/`` beside
# ``pkg/`` is not); benchmark folders anywhere; a docs folder's ``conf.py`` is its build's.
_TOOLING_TOP = {"tools", "scripts", "utils", "bin", "ci", "release", "bench"}
_TOOLING_DIRS = {"benchmarks", "asv_bench"}
_TOOLING_FILES = {
    "setup.py", "noxfile.py", "fabfile.py", "pavement.py", "gulpfile.js", "gruntfile.js",
    "pnpm-workspace.yaml", "lerna.json", "turbo.json", "nx.json", "renovate.json",
}  # fmt: skip
# A JavaScript tool's configuration module (``eslint.config.js``, ``rollup.config.ts``,
# ``vitest.config.mts``): how the repository is built and checked, not what it ships.
_TOOL_CONFIG = re.compile(r"^[\w.-]+\.config\.[cm]?[jt]s$|^\.?[\w-]+rc\.[cm]?js$")
_DOCS_DIRS = {"doc", "docs"}
# A page named by its date (``2024-05-01-release.md``, Jekyll's ``_posts`` convention): a dated
# post (an announcement, a journal's entry), written once and not kept current as reference is.
_DATED_PAGE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[-_.]|$)")
# A migration, upgrade or compatibility guide's file (``migration.md``,
# ``migrate-from-v1-to-v2.md``, ``upgrading.md``, ``react-18-upgrade-guide.md``,
# ``compatibility.md``: httpx's guide for Requests users, pytest's backwards-compatibility
# policy).
_MIGRATION_PAGE = re.compile(r"(?:^|[-_.])(?:migrat|upgrad|compatib)", re.I)
# An error reference: a page of an ``errors/`` or ``exceptions/`` folder, or named for the
# errors it lists (``validation_errors.md``, ``exceptions.md``, ``error-codes.md``).
_ERROR_DIRS = frozenset({"errors", "exceptions", "error-codes", "error_codes"})
_ERROR_PAGE = re.compile(r"(?:^|[-_])(?:errors|exceptions|error[-_]codes)\.", re.I)
# A page on using the library with another tool: an ``integrations/`` folder's
# (``integrations/mypy.md``), or a list of third-party packages.
_INTEGRATION_DIRS = frozenset({"integrations", "integration"})
_INTEGRATION_PAGE = re.compile(r"^(?:third[-_]party(?:[-_]\w+)?|integrations)\.", re.I)
_MARKUP_SUFFIXES = (".md", ".mdx", ".markdown", ".rst", ".txt", ".adoc", ".html", ".ipynb")


@functools.lru_cache(maxsize=65_536)
def auxiliary_kind(
    path: str, tooling: bool = False, docs: bool = False, pages: frozenset[str] = frozenset()
) -> str:
    """Whether a path holds tests, fixtures, vendored or generated code, a changelog, a blog
    (dated posts, mostly release announcements), repository meta files, a hidden folder's
    files (``.vitepress``), an experimental API's folder, examples (an ``examples/`` or
    ``docs_src/`` folder, code in a docs folder) or (with ``tooling``) build and release
    scripts, and which; "" for library code and docs. For a documentation page (``docs``)
    "generated" is no kind: a page under ``generated/`` is API reference a site build wrote
    from docstrings (Sphinx autosummary), the page a lookup wants; a page whose name starts
    with a date is a "blog" post wherever it sits (a code file so named is often a migration,
    which is code). Of the ``pages`` kinds asked for ("migration", "errors", "integrations";
    ``RankingSettings.page_kinds``), a page whose name says it is a migration or upgrade
    guide is "migration" (a code file so named is a database migration or a compatibility
    shim: left alone), an error reference's page "errors", and a page on using the library
    with another tool (an ``integrations/`` folder's, a third-party list) "integrations"."""
    kind = _kind(path, tooling)
    if not docs and not kind and _example_in_docs(path):
        return "examples"
    if docs and not kind:
        name = path.rpartition("/")[2]
        if _DATED_PAGE.match(name):
            return "blog"
        if pages:
            return _page_kind(name, path.casefold().split("/")[:-1], pages)
    return "" if docs and kind == "generated" else kind


def _page_kind(name: str, dirs: list[str], pages: frozenset[str]) -> str:
    """Which of the ``pages`` kinds a documentation page's name or folders make it, or ""."""
    if "migration" in pages and _MIGRATION_PAGE.search(name):
        return "migration"
    if "errors" in pages and (_ERROR_PAGE.search(name) or _ERROR_DIRS.intersection(dirs)):
        return "errors"
    if "integrations" in pages and (
        _INTEGRATION_PAGE.match(name) or _INTEGRATION_DIRS.intersection(dirs)
    ):
        return "integrations"
    return ""


def _example_in_docs(path: str) -> bool:
    """Whether a file of a code corpus is code kept in a docs folder: what the pages show
    (``doc/usage/extensions/example_google.py``). Not the folder's build configuration
    (``conf.py``, tooling), nor a page of markup a code source indexed."""
    *dirs, name = path.casefold().split("/")
    return (
        bool(_DOCS_DIRS.intersection(dirs))
        and name != "conf.py"
        and not name.endswith(_MARKUP_SUFFIXES)
    )


def _kind(path: str, tooling: bool) -> str:
    *dirs, name = path.casefold().split("/")
    for part in dirs:
        kind = _AUX_DIRS.get(part)
        if kind:
            return kind
        if part.startswith(".") and part.strip("."):
            # A hidden folder (``.vitepress/``, ``.circleci/``, ``.agents/``): the repository's
            # site, editor, CI or agent configuration, not what it ships. Its kind is its name
            # (stemmed as query words are), so a query naming it asks for it.
            return "." + "".join(tokenize(part, stem=True, drop_stopwords=False)[:1])
    if "v1" in dirs and name.endswith((".py", ".pyi")):
        # A Python package's ``v1/`` is the previous major version kept importable
        # (``pydantic/v1/``); elsewhere (``api/v1/`` of a Go service) it is current code.
        return "legacy"
    match = _AUX_FILES.match(name)
    if match:
        return match.lastgroup or ""
    if _CASED_TESTS.match(path.rpartition("/")[2]):
        return "tests"
    if tooling and _is_tooling(dirs, name):
        return "tooling"
    return ""


def _is_tooling(dirs: list[str], name: str) -> bool:
    if (dirs and dirs[0] in _TOOLING_TOP) or _TOOLING_DIRS.intersection(dirs):
        return True
    if name in _TOOLING_FILES or _TOOL_CONFIG.match(name):
        return True
    return name == "conf.py" and bool(_DOCS_DIRS.intersection(dirs))


# ISO 639-1 codes a documentation tree names its translations' folders by (English aside),
# with an optional region or script (``pt-br``, ``zh-hant``).
_LANGUAGES = frozenset({
    "af", "ar", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "el", "eo", "es",
    "et", "eu", "fa", "fi", "fr", "ga", "gl", "gu", "he", "hi", "hr", "hu", "hy", "id", "is",
    "it", "ja", "ka", "kk", "km", "kn", "ko", "ky", "lt", "lv", "mk", "ml", "mn", "mr", "ms",
    "my", "nb", "ne", "nl", "nn", "no", "pa", "pl", "pt", "ro", "ru", "si", "sk", "sl", "sq",
    "sr", "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "uz", "vi", "zh",
})  # fmt: skip
_LANGUAGE_DIR = re.compile(r"^([a-z]{2})(?:[-_][a-z]{2,4})?$")


def _language_of(name: str) -> str | None:
    """The language code a folder's name is (``pt-br`` → "pt"), or None."""
    match = _LANGUAGE_DIR.match(name.casefold())
    return match.group(1) if match else None


def translated_root(root: Path) -> bool:
    """Whether a source's root is a translation's folder, as a site configured one source per
    language has it: the root or its parent names a language other than English, and an
    English folder sits beside that one (``docs/ja/docs`` beside ``docs/en/``). The sibling is
    asked for because a root's own folders are the user's to name (a checkout in ``~/de``)."""
    for folder in (root, root.parent):
        if _language_of(folder.name) in _LANGUAGES:
            try:
                return any(
                    _language_of(sibling.name) == "en" and sibling.is_dir()
                    for sibling in folder.parent.iterdir()
                )
            except OSError:
                return False
    return False


@functools.lru_cache(maxsize=65_536)
def translated(path: str) -> bool:
    """Whether a folder of ``path`` names a language other than English (``docs/de/docs/``)."""
    return any(_language_of(part) in _LANGUAGES for part in path.split("/")[:-1])


def translation_page(source: str, path: str, translation_sources: frozenset[str]) -> bool:
    """Whether a documentation page is a translation's: under a language's folder, or of one
    of the ``translation_sources`` (those whose root is a language's folder, whose pages'
    own paths name no language)."""
    return source in translation_sources or translated(path)


def page_language(source: str, path: str, translation_sources: frozenset[str]) -> str:
    """The language a documentation page is written in, as far as its place says: the first
    language folder of its path (``docs/de/docs/x.md``: "de"; ``docs/en/…``: "en"), else its
    source's when the source's root is a translation's folder (the source names it: "@" and
    the source's name), else English."""
    for part in path.split("/")[:-1]:
        language = _language_of(part)
        if language in _LANGUAGES_AND_ENGLISH:
            return language
    return f"@{source}" if source in translation_sources else "en"


@functools.lru_cache(maxsize=65_536)
def page_in_any_language(path: str) -> str:
    """``path`` without its language folders (English's too): the page every translation of
    it shares (``docs/de/docs/x.md`` and ``docs/en/docs/x.md`` are both ``docs/docs/x.md``; in
    sources rooted at each language's folder the paths are the same already)."""
    *dirs, name = path.split("/")
    kept = [part for part in dirs if _language_of(part) not in _LANGUAGES_AND_ENGLISH]
    return "/".join([*kept, name])


_LANGUAGES_AND_ENGLISH = _LANGUAGES | {"en"}
