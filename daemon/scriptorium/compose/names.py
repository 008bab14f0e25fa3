"""The ``names`` and ``named-by`` signals of ExpandRelated: doc sections and the code they name.

A doc section that writes code (``hookspecs.py``, ``scriptorium.plugin.Key(...)``,
``Class.method``, a hook's name) is about that code, and its definitions are what a reader
opens next; word overlap alone ranks sibling sections first. The names are resolved against
the served code the way locations are: files by path suffix or module path, definitions by
symbol (a name that many places define says too little and is left out). The other way, a
definition leads to the doc sections that name it in a code span.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Protocol

from scriptorium.domain.model import Corpus, SourceDocument
from scriptorium.index.searcher import lexical_search
from scriptorium.text import tokenize

if TYPE_CHECKING:
    from scriptorium.compose.seeds import Seed
    from scriptorium.compose.view import CorpusView
    from scriptorium.index.catalog import Snapshot


class Lead(Protocol):
    """A block the finder may return, gathering the reasons it is related."""

    def add(self, name: str, weight: float, detail: str) -> None: ...


class RelatedFinder(Protocol):
    """What the name leads need of ``related.RelatedFinder`` (which calls them): the corpus,
    its snapshot, and the lead for a block."""

    view: CorpusView
    snapshot: Snapshot

    def target(self, doc: SourceDocument, block_index: int | None) -> Lead: ...


NAMES_WEIGHT = 1.6
NAMED_BY_WEIGHT = 1.4
# A name defined in more places than this is not a pointer to one of them.
MAX_DEFINITIONS = 3
MAX_NAMES = 40
# Definitions of one name worth reading to pick the ones the section means (see _narrowed).
MAX_CANDIDATES = 24
_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_FENCE = re.compile(r"^\s*(```|~~~)")
_CALL = re.compile(r"^(@?[\w.:/#-]+)\s*\(.*\)?$", re.DOTALL)
_NAME = re.compile(r"^[A-Za-z_][\w-]*(?:(?:\.|::|/|#)[A-Za-z_][\w-]*)*(?:\.\w+)?$")
# The file names a section writes as paths (``hookspecs.py``, ``ci.yml``).
_CODE_SUFFIXES = re.compile(
    r"\.(py|pyi|[mc]?js|tsx?|jsx|go|rs|java|kt|rb|php|cs|[ch]|cc|[ch]pp|swift|scala|sh"
    r"|toml|ya?ml|json|cfg|ini)$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Named:
    """One resolved mention: a file (``block_index`` None) or a definition, and how sure."""

    doc: SourceDocument
    block_index: int | None
    share: float  # 1 for a name with one definition, less for one shared by a few


def code_spans(text: str) -> list[str]:
    """The inline code spans of Markdown ``text`` outside fenced blocks, in order, with a
    span that wraps a line joined back into one."""
    kept, inside = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            kept.append(line)
    return [" ".join(m.group(2).split()) for m in _SPAN.finditer("\n".join(kept))]


def name_in(span: str) -> str | None:
    """The code name a span writes (``Key(name, type)`` → ``Key``, ``@hookimpl`` →
    ``hookimpl``), or None for prose, commands and values (``make lint``, ``"*.md"``)."""
    span = span.strip()
    call = _CALL.match(span)
    called = call is not None and "(" in span
    if called:
        span = call.group(1)
    span = span.lstrip("@").rstrip(".,:;")
    if not _NAME.match(span):
        return None
    plain = re.fullmatch(r"[a-z][a-z0-9]*", span) is not None
    # A lower-case word is a name only when called (``extract(path, text)``): as a bare word
    # it is as often a key, a value or an English word.
    return None if plain and not called else span


class NameResolver:
    """Names to served code: files by path suffix or module path, definitions by symbol."""

    def __init__(self, finder: RelatedFinder) -> None:
        self.view, self.snapshot = finder.view, finder.snapshot

    def resolve(self, name: str) -> list[Named]:
        path, _, fragment = name.partition("#")
        if "/" in path or _CODE_SUFFIXES.search(path):
            files = self._files(path.lstrip("./"))
            return self._inside(files, fragment) if fragment else self._shared(files)
        parts = [p for p in re.split(r"\.|::", name) if p]
        for cut in range(len(parts), 0, -1):
            files = self._module(parts[:cut])
            if files:
                rest = parts[cut:]
                return self._inside(files, ".".join(rest)) if rest else self._shared(files)
        return self._definitions(parts)

    def _files(self, suffix: str) -> list[SourceDocument]:
        return self.view.code_by_suffix(self.snapshot).get(suffix.lower(), [])

    def _module(self, parts: list[str]) -> list[SourceDocument]:
        # One word is not a module path: ``config.options`` is a key, not ``config.py``.
        if len(parts) < 2:
            return []
        base = "/".join(parts)
        return self._files(base + ".py") or self._files(base + "/__init__.py")

    def _shared(self, files: list[SourceDocument]) -> list[Named]:
        return [Named(doc, None, 1 / len(files)) for doc in files]

    def _inside(self, files: list[SourceDocument], qualified: str) -> list[Named]:
        """A definition inside the named file(s); the file when none defines it there."""
        found = [
            Named(doc, index, 1.0)
            for doc in files[:MAX_DEFINITIONS]
            for index, block in enumerate(doc.blocks)
            if block.anchor == qualified
        ]
        if found:
            return found[:MAX_DEFINITIONS]
        # Re-exported (``scriptorium.plugin.Key``): the module, and the definition elsewhere.
        return self._shared(files) + self._definitions(qualified.split("."))

    def _definitions(self, parts: list[str]) -> list[Named]:
        # A name defined in many places (``__init__``, ``run``) is counted, not loaded: the
        # documents of its definitions would be made only to be dropped.
        if self.view.definitions_of(self.snapshot, parts[-1]) > MAX_CANDIDATES:
            return []
        defined = self.view.symbols(self.snapshot).get(parts[-1], [])
        if len(parts) > 1:
            qualified = ".".join(parts)
            defined = [
                (doc, i)
                for doc, i in defined
                if (anchor := doc.blocks[i].anchor) == qualified or anchor.endswith("." + qualified)
            ]
        return [Named(doc, index, 1 / len(defined)) for doc, index in defined]


def lead_to_names(finder: RelatedFinder, seed: Seed) -> None:
    """A doc seed's named code, weighted by how sure the name is, how often the section names
    it, and whether its heading names it or how early its text does (a section names what it
    is about first)."""
    if seed.is_code:
        return
    names: list[str] = []
    for span in code_spans(seed.text):
        name = name_in(span)
        if name and name not in names:
            names.append(name)
        if len(names) >= MAX_NAMES:
            break
    if not names:
        return
    resolver = NameResolver(finder)
    resolved = {name: resolver.resolve(name) for name in names}
    context = [
        _folder_parts(n.doc.path)
        for found in resolved.values()
        if len(found) <= MAX_DEFINITIONS
        for n in found
    ]
    found: dict[tuple[str, str, int | None], list[tuple[float, str, SourceDocument]]]
    found = defaultdict(list)
    title = seed.block.title if seed.block is not None else ""
    for position, name in enumerate(names):
        # What the heading names is what the section is about; then, the earlier the more.
        early = 1.2 if name in title else 1.0 - 0.3 * position / len(names)
        for named in _narrowed(resolved[name], context):
            if named.doc.path == seed.doc.path and named.doc.source == seed.doc.source:
                continue
            key = (named.doc.source, named.doc.path, named.block_index)
            found[key].append((named.share * early, name, named.doc))
    for (_, _, block_index), mentions in found.items():
        strength = min(1.0 + 0.15 * (len(mentions) - 1), 1.5) * max(m[0] for m in mentions)
        shown = ", ".join(dict.fromkeys(m[1] for m in mentions))
        finder.target(mentions[0][2], block_index).add(
            "names", NAMES_WEIGHT * strength, f"the section names {shown}"
        )


def _folder_parts(path: str) -> tuple[str, ...]:
    return PurePosixPath(path).parent.parts


def _narrowed(found: list[Named], context: list[tuple[str, ...]]) -> list[Named]:
    """A name many places define (a hook every plugin implements, a method every extractor
    has) is taken to mean the definitions nearest the code the section names unambiguously
    (the folders they share with each of those, summed), when that singles out a few of them;
    otherwise it says too little and is dropped."""
    if len(found) <= 1:
        return found
    if not context:
        return found if len(found) <= MAX_DEFINITIONS else []

    def nearness(named: Named) -> int:
        parts = _folder_parts(named.doc.path)
        shared = 0
        for other in context:
            for a, b in zip(parts, other, strict=False):
                if a != b:
                    break
                shared += 1
        return shared

    scored = [(nearness(n), n) for n in found]
    top = max(score for score, _ in scored)
    nearest = [n for score, n in scored if score == top]
    if top == 0 or len(nearest) > MAX_DEFINITIONS:
        return found if len(found) <= MAX_DEFINITIONS else []
    return [Named(n.doc, n.block_index, 1 / len(nearest)) for n in nearest]


def lead_to_sections(finder: RelatedFinder, seed: Seed, sources: list[str]) -> None:
    """The doc sections that name a code seed's definition (or its file) in a code span."""
    if not seed.is_code:
        return
    names = _names_of(seed)
    if not names:
        return
    terms = sorted({t for name in names for t in tokenize(name) if len(t) > 2})
    hits = lexical_search(
        finder.snapshot,
        terms,
        finder.view.ranking.weights,
        40,
        corpora=[str(Corpus.DOCS)],
        sources=sources,
    )
    best = max((hit.score for hit in hits), default=0.0) or 1.0
    for hit in hits:
        spans = code_spans(hit.block.body)
        named = [n for n in names if any(_mentions(span, n) for span in spans)]
        if not named:
            continue
        # The sections that say the name most, first; a source that is not a default one (a
        # translation, a second site) after the default ones that say the same.
        weight = NAMED_BY_WEIGHT * (0.7 + 0.3 * hit.score / best)
        source = finder.view.by_name.get(hit.doc.source)
        if source is not None and not source.is_default:
            weight *= 0.8
        finder.target(hit.doc, hit.block_index).add("named-by", weight, f"names {named[0]} in code")


def _names_of(seed: Seed) -> list[str]:
    """How docs would write a code seed: its qualified definition name (a plain lower-case
    word only when it has an underscore: ``run`` is everywhere), else its file."""
    block = seed.block
    if block is not None and block.symbol:
        name = block.anchor or block.symbol
        if "_" in name or "." in name or not name.islower():
            return [name]
        return []
    path = PurePosixPath(seed.doc.path)
    return [path.name] if path.suffix else []


def _mentions(span: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", span) is not None
