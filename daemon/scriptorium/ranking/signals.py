"""What a query says: the names it spells out, the auxiliary kinds of files (tests, vendored
code, changelogs; ranking/paths.py tells them by path) it asks for, and how much of it a block
covers. What kind of question it is (plain, about using names, in another language) is
ranking/questions.py's.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable

from scriptorium.domain.model import Block, Candidate, Query
from scriptorium.ranking.bodies import matched_terms
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import (
    counted_query_terms,
    tokenize,
    without_fence_languages,
    without_form_labels,
    without_urls,
    without_version_lines,
)
from scriptorium.text.tokenize import MAX_QUERY_TERMS, capped_terms

_NAME_SEGMENTS = re.compile(r"[./:-]+")
# A word as a query types it: letters, digits, "_" and "-", dots inside it (``click.Choice``),
# not around it (the full stop after "use.").
_TYPED_WORD = re.compile(r"[\w-]+(?:\.[\w-]+)*")

# The query words that ask for each kind (stemmed as query terms are).
_AUX_WORDS = {
    "tests": ("test", "tests", "testing", "pytest", "conftest"),
    "fixtures": ("fixture", "fixtures"),
    "vendored": ("vendor", "vendored"),
    "generated": ("generated", "generate"),
    "changelog": ("changelog", "release", "releases", "changes", "history", "news"),
    "meta": ("github", "gitlab", "workflow", "workflows"),
    "blog": ("blog", "blogs", "announcement", "announcing", "announced", "journal", "devlog"),
    "tooling": ("setup", "script", "scripts", "benchmark", "benchmarks", "tooling", "nox", "ci"),
    "legacy": ("v1", "legacy", "deprecated", "deprecation", "compat", "compatibility", "old"),
    "migration": ("migrate", "migrating", "migration", "migrations", "upgrade", "upgrading",
                  "v1", "v2", "legacy", "deprecated", "deprecation", "old", "breaking",
                  "compatibility", "compatible"),
    "experimental": ("experimental", "experiment", "unstable", "preview"),
    "examples": ("example", "examples", "sample", "samples", "demo", "demos"),
    "integrations": ("integration", "integrations", "integrate", "plugin", "plugins", "third",
                     "party", "editor", "ide", "linter", "linting"),
    "errors": ("error", "errors", "exception", "exceptions", "raise", "raises", "raised",
               "fail", "fails", "failed", "failing", "failure", "warning", "warnings", "catch",
               "invalid"),
}  # fmt: skip


# What a pasted text holds besides its sentences: links, fenced code, code spans and paths. A
# word there ("github" in an issue link, "pytest" in an import, "tests/" in a traceback frame)
# is not the writer asking for a kind of file.
_NOT_PROSE = re.compile(
    r"```.*?(?:```|\Z)"  # fenced code
    r"|`[^`\n]*`"  # code spans
    r"|\b[a-z][a-z0-9+.-]*://\S*|\bwww\.\S+"  # links
    r"|\S*[\w.-][/\\][\w.-]\S*",  # paths (a/b, a\b)
    re.I | re.S,
)


def prose(text: str) -> str:
    """The query's sentences: the text without links, code and paths."""
    return _NOT_PROSE.sub(" ", text)


def asked_text(text: str, settings: RankingSettings) -> str:
    """The part of a query whose words may ask for an auxiliary kind (``auxiliary_asks``):
    every word ("words"), its prose ("prose"), or its prose only when it is a question
    rather than a pasted text ("short")."""
    scope = settings.auxiliary_asks
    if scope == "words":
        return text
    if scope == "short" and settings.is_pasted(text):
        return ""
    return prose(text)


@functools.lru_cache(maxsize=1024)
def asked_kinds(text: str) -> frozenset[str]:
    """The auxiliary kinds a query asks for by name."""
    words = set(tokenize(text, stem=True))
    return frozenset(
        kind
        for kind, names in _AUX_WORDS.items()
        if words & {t for n in names for t in tokenize(n, stem=True, drop_stopwords=False)}
    )


@functools.lru_cache(maxsize=1024)
def asked_folders(text: str) -> frozenset[str]:
    """The hidden folders a query names (``.vitepress`` for "the vitepress config"): the kind
    :func:`auxiliary_kind` gives their files."""
    return frozenset("." + word for word in tokenize(text, stem=True))


CODE_SPAN = re.compile(r"`([^`]+)`")
_RAW_WORDS = re.compile(r"[^\s`]+")
_EDGE_PUNCT = "\"'“”‘’,;!?[]{}<>"
_COMPOUND = re.compile(r"\w[_.:/]+\w|\w\(\)?$|^_\w")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
# A word ending so (before closing quotes and brackets) ends its sentence.
_SENTENCE_END = frozenset(".?!")
_CLOSING = "\"'”’)]"


def identifier_words(text: str) -> list[str]:
    """The words of a query that look like identifiers rather than English.

    Code spans, compounds (``snake_case``, ``a.b``, ``a/b``, ``f()``), ``camelCase`` and
    ``APIRouter``; and a capitalised word in an otherwise lower-case query, unless grammar
    capitalised it (the query's first word, unless it is the whole query; a line's first
    word; a word after a sentence's end; "I"), and not in a title-case query, where most of
    the other words are capitalised.
    """
    found = CODE_SPAN.findall(text)
    words: list[str] = []
    by_grammar: list[bool] = []
    stripped = CODE_SPAN.sub(" ", text)
    ended = True  # the text's start is a sentence's start
    at = 0
    for match in _RAW_WORDS.finditer(stripped):
        starts = ended or "\n" in stripped[at : match.start()]
        at = match.end()
        raw = match.group()
        ended = raw.rstrip(_CLOSING)[-1:] in _SENTENCE_END
        word = raw.strip(_EDGE_PUNCT)
        if word:
            words.append(word)
            by_grammar.append(starts or word == "I")
        else:
            ended = ended or starts
    rest = [w for w, grammar in zip(words[1:], by_grammar[1:], strict=True) if not grammar]
    capitalised = sum(1 for w in rest if w[:1].isupper())
    plain_case = len(rest) <= 1 or 2 * capitalised <= len(rest)
    for word, grammar in zip(words, by_grammar, strict=True):
        bare = word.rstrip(".:,")
        shaped = bool(_COMPOUND.search(bare) or _CAMEL.search(bare))
        named = bare[:1].isupper() and plain_case and (not grammar or len(words) == 1)
        if shaped or named:
            found.append(bare)
    return found


@functools.lru_cache(maxsize=1024)
def query_names(
    text: str,
    *,
    identifiers_only: bool = False,
    identifiers_first: bool = False,
    limit: int = MAX_QUERY_TERMS,
) -> frozenset[str]:
    """The names a query spells out, case-folded: its words and identifiers kept whole, and
    each segment of a dotted or path-like one (``app.include_router`` → ``include_router``).

    Stopwords are left out, so "how to get a user" does not ask for a definition of ``to``;
    with ``identifiers_only`` only the words :func:`identifier_words` picks count, so "write
    a plugin" does not ask for one of ``write``. Like query terms, at most ``limit`` of them,
    in the order they appear (with ``identifiers_first``, those words first, then the rest).
    """
    if identifiers_only:
        text = " ".join(identifier_words(text))
    elif identifiers_first:
        text = " ".join(identifier_words(text)) + " " + text
    names: dict[str, None] = {}
    for name in tokenize(text, split_identifiers=False):
        names[name] = None
        if not name.isalnum():
            names.update(dict.fromkeys(part for part in _NAME_SEGMENTS.split(name) if part))
        if len(names) >= limit:
            break
    return frozenset(list(names)[:limit])


def qualifies(block: Block, named: frozenset[str]) -> bool:
    """Whether the query spells out a definition by its qualified name (``Plotter.finalize``,
    ``ns::Type::method``) rather than by its last segment alone: as specific as a path."""
    qualified = block.anchor
    return bool(qualified) and qualified != block.symbol and qualified.casefold() in named


def weighted_terms(
    text: str, settings: RankingSettings
) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """A query's search terms and the BM25 weight of each ("" weights: all 1).

    The levers are ``max_query_terms`` / ``frequent_query_terms`` (which terms),
    ``query_term_frequency`` (a term said often weighs more) and ``identifier_term_weight``
    (terms of identifier-like words weigh more), the last two for queries longer than
    ``long_query_chars``.
    """
    options = settings.token_options()
    pasted = settings.is_pasted(text)
    if pasted:
        if settings.drop_form_labels:
            text = without_form_labels(text)
        if settings.drop_version_lines:
            text = without_version_lines(text)
        if settings.drop_urls:
            text = without_urls(text)
    if settings.drop_fence_languages:
        text = without_fence_languages(text)
    limit = settings.max_query_terms
    first = settings.identifier_terms_first and pasted
    letters = settings.drop_single_letters and pasted
    numbers = settings.drop_numbers and pasted
    counted = counted_query_terms(
        text,
        limit=len(text) + 1 if first or letters or numbers else limit,
        frequent_first=settings.frequent_query_terms,
        **options,
    )
    if letters or numbers:
        counted = [
            c
            for c in counted
            if not (letters and len(c[0]) <= 1 and c[0].isascii())
            and not (numbers and c[0].isascii() and c[0].isdigit())
        ] or counted
        if not first:
            counted = capped_terms(counted, limit, frequent_first=settings.frequent_query_terms)
    if first and len(counted) > limit:
        counted = _identifiers_first(text, counted, limit, options, settings.frequent_query_terms)
    if settings.drop_comparison_words and not pasted:
        counted = without_comparison_words(counted, options)
    terms = tuple(term for term, _ in counted)
    by_count = settings.query_term_frequency
    identifier = settings.identifier_term_weight
    title = settings.title_term_weight
    if (not by_count and identifier == 1.0 and title == 1.0) or not pasted:
        return terms, ()
    named = set(tokenize(" ".join(identifier_words(text)), **options)) if identifier != 1.0 else ()
    titled = (
        set(tokenize(title_line(text, settings.title_chars), **options)) if title != 1.0 else ()
    )
    weights = tuple(
        (1.0 + by_count * math.log(count))
        * (identifier if term in named else 1.0)
        * (title if term in titled else 1.0)
        for term, count in counted
    )
    return terms, weights if any(w != 1.0 for w in weights) else ()


# A first line that opens a snippet of code rather than an issue: an import, a definition, a
# decorator, an interpreter prompt.
_CODE_OPENING = re.compile(r"(?:import\s|from\s+\S+\s+import\s|def\s|class\s|@\w|>>>)")


def title_line(text: str, longest: int) -> str:
    """A text's first non-empty line when it reads as a title (at most ``longest``
    characters, followed by more text), else "". Two first lines are no title: one ending
    with a colon introduces what follows ("Problem:", "Traceback (most recent call last):",
    "Steps to reproduce:"), a label whose words say nothing of the subject; and a line of code
    (``import numpy as np``) opens a snippet."""
    head, _, rest = text.strip().partition("\n")
    head = head.strip()
    if head.endswith(":") or _CODE_OPENING.match(head):
        return ""
    return head if head and len(head) <= longest and rest.strip() else ""


COMPARISON_WORDS = "vs versus"


def without_comparison_words(
    counted: list[tuple[str, int]], options: dict[str, bool]
) -> list[tuple[str, int]]:
    """The counted terms without the comparison words, unless nothing else is left."""
    words = set(tokenize(COMPARISON_WORDS, **options))
    kept = [(term, count) for term, count in counted if term not in words]
    return kept or counted


def _identifiers_first(
    text: str,
    counted: list[tuple[str, int]],
    limit: int,
    options: dict[str, bool],
    frequent: bool,
) -> list[tuple[str, int]]:
    """At most ``limit`` of a long text's terms: those of its identifier-like words first (a
    pasted issue names ``Plotter._finalize_figure`` after a hundred words of prose), then the
    others first-seen (or most said, with ``frequent``); kept in first-seen order."""
    order = {term: index for index, (term, _) in enumerate(counted)}
    counts = dict(counted)
    named = dict.fromkeys(t for t in tokenize(" ".join(identifier_words(text)), **options))
    rest = [term for term in counts if term not in named]
    if frequent:
        rest.sort(key=lambda term: (-counts[term], order[term]))
    kept = ([t for t in named if t in counts] + rest)[:limit]
    return [(term, counts[term]) for term in sorted(kept, key=order.__getitem__)]


_PATH_WORDS = re.compile(r"[\w.\\/-]+")
_EXTENSIONS = frozenset(
    (
        *("py", "pyi", "pyx", "md", "mdx", "rst", "txt", "ipynb", "js", "mjs", "cjs", "jsx"),
        *("ts", "tsx", "go", "rs", "java", "kt", "scala", "c", "h", "cc", "cpp", "hpp", "cs"),
        *("rb", "php", "swift", "sh", "toml", "yaml", "yml", "json", "cfg", "ini", "html", "css"),
    )
)
_DOTTED = re.compile(r"[a-z_]\w*(?:\.[a-z_]\w*)+")
# A name that more files end with than this says too little to weigh any of them up.
MOST_FILES_PER_MENTION = 3


@functools.lru_cache(maxsize=1024)
def path_mentions(text: str, *, modules: bool = True) -> tuple[tuple[str, ...], ...]:
    """The file paths and dotted module names a query spells out, each as the path suffixes
    that could name it, most specific first (lower-cased).

    ``/venv/lib/site-packages/sphinx/util/inspect.py`` (a traceback frame) may be any file
    ending with ``sphinx/util/inspect.py`` or ``util/inspect.py`` (two segments at least);
    ``inspect.py`` alone is that file name; ``xarray.core.variable.Variable`` is
    ``xarray/core/variable/variable.py`` (or its ``__init__.py``), then
    ``xarray/core/variable.py`` and so on down to two segments (dotted names only with
    ``modules``).
    """
    mentions: dict[tuple[str, ...], None] = {}
    for raw in _PATH_WORDS.findall(text):
        word = raw.replace("\\", "/").strip("./-").lower()
        name = word.rsplit("/", 1)[-1]
        is_file = "." in name and name.rsplit(".", 1)[1] in _EXTENSIONS
        if "/" in word and is_file:
            parts = [p for p in word.split("/") if p and p not in (".", "..")]
            keys = tuple("/".join(parts[i:]) for i in range(max(len(parts) - 1, 1)))
        elif is_file:
            keys = (word,)
        elif modules and "/" not in word and _DOTTED.fullmatch(word):
            parts = word.split(".")
            keys = tuple(
                f"{'/'.join(parts[:end])}{tail}"
                for end in range(len(parts), 1, -1)
                for tail in (".py", "/__init__.py")
            )
        else:
            continue
        mentions[keys] = None
    return tuple(mentions)


def named_files(
    text: str,
    files_ending: Callable[[str, int], list[tuple[str, str]]],
    *,
    modules: bool = True,
) -> frozenset[tuple[str, str]]:
    """The indexed files a query names (see :func:`path_mentions`): for each mention, the
    files its most specific matching suffix picks, when that is at most
    :data:`MOST_FILES_PER_MENTION` of them."""
    found: set[tuple[str, str]] = set()
    for keys in path_mentions(text, modules=modules):
        for key in keys:
            files = files_ending(key, MOST_FILES_PER_MENTION + 1)
            if files:
                if len(files) <= MOST_FILES_PER_MENTION:
                    found.update(files)
                break
    return frozenset(found)


def last_named(text: str, files: frozenset[tuple[str, str]]) -> tuple[str, str] | None:
    """Of the files a query names, the one it names last, when it names two or more: in a
    traceback the innermost frame, where the error was raised (with module names, the last
    dotted name that picks it)."""
    if len(files) < 2:
        return None
    lowered = text.replace("\\", "/").lower()
    best, best_at = None, -1
    for source, path in files:
        parts = path.lower().split("/")
        at = -1
        for start in range(len(parts)):
            spelled = ["/".join(parts[start:])]
            if len(parts) - start >= 2 and path.endswith(".py"):
                spelled.append(".".join(parts[start:]).removesuffix(".py"))  # a module name
            at = max(at, *(lowered.rfind(form) for form in spelled))
        if at > best_at:
            best, best_at = (source, path), at
    return best


def coverage(
    query: Query,
    cand: Candidate,
    doc_freq: Callable[[str], int] | None = None,
    num_docs: int = 0,
    token_options: dict[str, bool] | None = None,
) -> float:
    """How much of the query the candidate covers, from 0 to 1.

    ``token_options`` must be the ones the query terms were made with (stemming and so on),
    or stemmed query terms would never match the block's unstemmed tokens.

    With ``doc_freq`` each term counts by its inverse document frequency, so missing a rare,
    specific term ("photoshop") weighs more than missing a common one ("use"); a term the
    index has never seen gets the highest weight. Without it every term counts the same.
    """
    if not query.terms:
        return 0.0
    options = tuple(sorted((token_options or {}).items()))
    tokens = matched_terms(cand, frozenset(query.terms), options)
    if doc_freq is None or num_docs <= 0:
        return sum(1 for t in query.terms if t in tokens) / len(query.terms)
    total = matched = 0.0
    for term in query.terms:
        weight = math.log(1 + num_docs / (1 + doc_freq(term)))
        total += weight
        if term in tokens:
            matched += weight
    return matched / total if total else 0.0


@functools.lru_cache(maxsize=1024)
def typed_words(text: str) -> frozenset[str]:
    """The query's words as typed, case-folded: "use" in "use X" (not in ``useState``), a
    variant's folder it names ("vue")."""
    return frozenset(word.casefold() for word in _TYPED_WORD.findall(text))
