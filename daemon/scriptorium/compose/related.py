"""ExpandRelated: from seed refs to the docs and code that support them, with reasons.

Signals, each a named reason with its weight:

* ``shared-terms`` — the seeds' most distinctive terms (tf·idf over the index) searched again;
* ``imports`` — modules and names a seed imports (``from fastapi import Depends``), mapped to
  the files and definitions that provide them;
* ``doc-link`` — Markdown links between documents, include directives from documents to code
  (``{* ../../docs_src/app.py *}``), and documents that include a code seed;
* ``names`` — the files and definitions a doc seed names in code spans, and ``named-by``, the
  doc sections that name a code seed's definition (``compose/names.py``);
* ``path-proximity`` — files next to a seed;
* ``framework`` — both mention the same framework;
* in ``implementation`` mode, ``impl-*`` relations to route handlers, dependency injection,
  decorators, configuration and start-up wiring.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from scriptorium import limits
from scriptorium.cancel import checkpoint
from scriptorium.compose.names import lead_to_names, lead_to_sections
from scriptorium.compose.seeds import Seed, load_seeds
from scriptorium.compose.tables import folder_of
from scriptorium.domain.model import Block, Corpus, Reason, RefKind, SourceDocument
from scriptorium.domain.outcomes import RelatedHit, RelatedOutcome
from scriptorium.domain.refs import Ref
from scriptorium.index.catalog import Snapshot
from scriptorium.index.searcher import lexical_search
from scriptorium.ranking.paths import page_in_any_language
from scriptorium.text import tokenize
from scriptorium.text.code import (
    import_targets,
    is_configuration,
    is_decorator,
    is_dependency_injection,
    route_lines,
)
from scriptorium.text.markdown import INCLUDE_DIRECTIVE, includes_in

if TYPE_CHECKING:
    from scriptorium.compose.view import CorpusView

WEIGHTS = {
    "shared-terms": 1.0,
    "imports": 0.9,
    "doc-link": 1.2,
    "path-proximity": 0.3,
    "framework": 0.15,
    "impl": 0.25,
}
DISTINCTIVE_TERMS = 12
TOP_K_DEFAULT, TOP_K_MAX = limits.RELATED_TOP_K_DEFAULT, limits.RELATED_TOP_K_MAX
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s#]+)(?:#[^)]*)?\)")
_INCLUDE = INCLUDE_DIRECTIVE
_FRAMEWORKS = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        "fastapi": r"\bfastapi\b",
        "starlette": r"\bstarlette\b",
        "pydantic": r"\bpydantic\b",
        "sqlalchemy": r"\bsqlalchemy\b|\bsqlmodel\b",
        "flask": r"\bflask\b",
        "django": r"\bdjango\b",
        "express": r"\bexpress\(\)|require\(['\"]express['\"]\)",
        "spring": r"@SpringBootApplication|\bspringframework\b",
        "aspnet": r"\bWebApplication\b|\bMicrosoft\.AspNetCore\b",
        "gin": r"\bgin\.Default\(\)|\bgin-gonic\b",
    }.items()
}


@dataclass(slots=True)
class Target:
    doc: SourceDocument
    block_index: int | None  # None: the whole file
    reasons: dict[str, Reason] = field(default_factory=dict)

    def add(self, name: str, weight: float, detail: str) -> None:
        current = self.reasons.get(name)
        if current is None or weight > current.weight:
            self.reasons[name] = Reason(name, round(weight, 4), detail)

    @property
    def score(self) -> float:
        return sum(r.weight for r in self.reasons.values())


_STARTUP_FILES = frozenset(
    {"main.py", "app.py", "program.cs", "startup.cs", "main.go", "server.ts", "index.ts"}
)


def _implementation_kinds(lines: list[str], doc: SourceDocument) -> tuple[str, ...]:
    language = doc.language
    found = []
    if doc.corpus is Corpus.CODE and route_lines(lines, language):
        found.append("route")
    if any(is_dependency_injection(line) for line in lines):
        found.append("dependency-injection")
    if any(is_decorator(line, language) for line in lines if line.lstrip().startswith(("@", "["))):
        found.append("decorator")
    if any(is_configuration(line) for line in lines):
        found.append("configuration")
    if PurePosixPath(doc.path).name.lower() in _STARTUP_FILES:
        found.append("startup")
    return tuple(found)


# A lower-cased word every match of each pattern holds: in ASCII text a pattern whose words
# are all missing cannot match, and looking for a word is many times cheaper than a
# case-insensitive regular expression with word boundaries.
_FRAMEWORK_WORDS = {
    "fastapi": ("fastapi",),
    "starlette": ("starlette",),
    "pydantic": ("pydantic",),
    "sqlalchemy": ("sqlalchemy", "sqlmodel"),
    "flask": ("flask",),
    "django": ("django",),
    "express": ("express",),
    "spring": ("@springbootapplication", "springframework"),
    "aspnet": ("webapplication", "microsoft.aspnetcore"),
    "gin": ("gin.default()", "gin-gonic"),
}


@lru_cache(maxsize=256)
def frameworks_in(text: str) -> frozenset[str]:
    """The frameworks ``text`` names (remembered: guides ask it of the same pages call after
    call, each a handful of regular expressions over up to 50,000 characters; 256 of those
    hold at most 13 MB)."""
    if not text.isascii():
        # Outside ASCII, case-insensitive matching also lets a few other letters stand for
        # ASCII ones (the long s, the Kelvin sign): every pattern is tried.
        return frozenset(name for name, pattern in _FRAMEWORKS.items() if pattern.search(text))
    lowered = text.lower()
    return frozenset(
        name
        for name, pattern in _FRAMEWORKS.items()
        if any(word in lowered for word in _FRAMEWORK_WORDS[name]) and pattern.search(text)
    )


class RelatedFinder:
    """Finds supporting material for seeds within one snapshot."""

    def __init__(self, view: CorpusView, snapshot: Snapshot) -> None:
        self.view = view
        self.snapshot = snapshot
        self.targets: dict[tuple[str, str, int | None], Target] = {}

    def target(self, doc: SourceDocument, block_index: int | None) -> Target:
        key = (doc.source, doc.path, block_index)
        found = self.targets.get(key)
        if found is None:
            found = self.targets[key] = Target(doc, block_index)
        return found

    # -- signals ---------------------------------------------------------------------------

    def shared_terms(self, seeds: list[Seed], corpora: list[str], sources: list[str]) -> None:
        searcher = self.snapshot.searcher
        total = max(1, searcher.num_docs)
        counts: dict[str, int] = defaultdict(int)
        for seed in seeds:
            for token in tokenize(seed.text):
                if len(token) > 2 and not token.isdigit():
                    counts[token] += 1
        scored = []
        for term, tf in counts.items():
            df = searcher.doc_freq("body", term)
            if df == 0 or df > total * 0.2:
                continue
            scored.append((tf * math.log(1 + total / df), term))
        terms = [t for _, t in sorted(scored, key=lambda x: (-x[0], x[1]))[:DISTINCTIVE_TERMS]]
        if not terms:
            return
        hits = lexical_search(
            self.snapshot, terms, self.view.ranking.weights, 60, corpora=corpora, sources=sources
        )
        if not hits:
            return
        best = hits[0].score or 1.0
        wanted = set(terms)
        for hit in hits:
            shared = sorted(wanted & _body_terms(hit.block.body))[:6]
            self.target(hit.doc, hit.block_index).add(
                "shared-terms",
                WEIGHTS["shared-terms"] * hit.score / best,
                "shares " + ", ".join(shared) if shared else "distinctive terms",
            )

    def imports(self, seed: Seed) -> None:
        language = seed.doc.language or ("python" if not seed.is_code else None)
        text = seed.text if seed.is_code else "\n".join(_fenced_code(seed.text))
        for module in import_targets(text, language)[:40]:
            for doc, block_index, how in self._provider_of(module):
                self.target(doc, block_index).add(
                    "imports", WEIGHTS["imports"], f"{module} → {how}"
                )

    def _provider_of(self, module: str):
        parts = [p for p in module.lstrip(".").split(".") if p]
        if not parts:
            return []
        found = []
        for doc in self._code_by_suffix("/".join(parts) + ".py") or self._code_by_suffix(
            "/".join(parts) + "/__init__.py"
        ):
            found.append((doc, None, doc.path))
        if not found and len(parts) > 1:
            symbol = parts[-1]
            for doc, index in self.view.symbols(self.snapshot).get(symbol, [])[:3]:
                if _module_matches(doc.path, parts[:-1]):
                    found.append((doc, index, f"{doc.path} defines {symbol}"))
        return found[:3]

    def _code_by_suffix(self, suffix: str) -> list[SourceDocument]:
        """Code files whose path ends with ``suffix`` at a segment boundary, ignoring case."""
        return self.view.code_by_suffix(self.snapshot).get(suffix.lower(), [])

    def doc_links(self, seed: Seed) -> None:
        if seed.is_code:
            for doc in self.view.includers(self.snapshot).get(seed.doc.path, [])[:10]:
                index = _block_including(doc, seed.doc.path, self.view.lines_of(doc))
                self.target(doc, index).add(
                    "doc-link", WEIGHTS["doc-link"], f"includes {seed.doc.path}"
                )
            return
        base = PurePosixPath(seed.doc.path).parent
        for match in _LINK.finditer(seed.text):
            href = match.group(1)
            if "://" in href or href.startswith("mailto:"):
                continue
            path = _normalise(base / href)
            doc = self.snapshot.docs.get((seed.doc.source, path)) if path else None
            if doc is not None and not _same(doc, seed.doc):
                self.target(doc, 0 if doc.blocks else None).add(
                    "doc-link", WEIGHTS["doc-link"] * 0.8, f"linked from {seed.doc.path}"
                )
        for match in _INCLUDE.finditer(seed.text):
            include = next(g for g in match.groups() if g)
            tail = "/".join(p for p in PurePosixPath(include).parts if p not in ("..", "."))
            for doc in self._code_by_suffix(tail)[:2]:
                self.target(doc, None).add(
                    "doc-link", WEIGHTS["doc-link"], f"included as {include}"
                )
                # One hop further: the library code the included example imports.
                for module in import_targets(doc.text, doc.language)[:20]:
                    for target_doc, index, how in self._provider_of(module):
                        if not _same(target_doc, doc):
                            self.target(target_doc, index).add(
                                "imports",
                                WEIGHTS["imports"] * 0.8,
                                f"{doc.path} imports {module} → {how}",
                            )

    def proximity(self, seed: Seed) -> None:
        folder = folder_of(seed.doc.path)
        for target in self.targets.values():
            other = folder_of(target.doc.path)
            if target.doc.source == seed.doc.source and other == folder:
                target.add("path-proximity", WEIGHTS["path-proximity"], f"same folder {folder}")
        if seed.is_code:
            siblings = self.view.code_by_folder(self.snapshot).get((seed.doc.source, folder), [])
            for doc in sorted(siblings, key=lambda d: d.path)[:8]:
                if not _same(doc, seed.doc):
                    self.target(doc, None).add(
                        "path-proximity", WEIGHTS["path-proximity"] * 0.5, f"same folder {folder}"
                    )

    def framework(self, seeds: list[Seed]) -> None:
        wanted = set().union(*(frameworks_in(s.text) for s in seeds)) if seeds else set()
        if not wanted:
            return
        for target in self.targets.values():
            shared = wanted & self._frameworks(target)
            if shared:
                target.add("framework", WEIGHTS["framework"], ", ".join(sorted(shared)))

    def implementation(self) -> None:
        for target in self.targets.values():
            for kind in self._implementation_kinds(target):
                target.add(f"impl-{kind}", WEIGHTS["impl"], f"{kind} material")

    def _implementation_kinds(self, target: Target) -> tuple[str, ...]:
        """What implementation material a target holds (routes, injection, decorators,
        configuration, a start-up file), remembered per block for the generation: it is a
        pattern test per line of every target, and the same blocks come back call after call."""
        doc = target.doc
        key = ("impl-kinds", doc.source, doc.path, doc.content_hash, target.block_index)
        found = self.snapshot.memo.get(key)
        if found is None:
            found = _implementation_kinds(self._text(target).splitlines(), doc)
            self.snapshot.remember(key, found)
        return found

    def _frameworks(self, target: Target) -> frozenset[str]:
        """The frameworks a target's text names, remembered per block for the generation:
        every call asks about dozens of targets, each a handful of regular expressions."""
        doc = target.doc
        key = ("frameworks", doc.source, doc.path, doc.content_hash, target.block_index)
        found = self.snapshot.memo.get(key)
        if found is None:
            found = frozenset(frameworks_in(self._text(target)))
            self.snapshot.remember(key, found)
        return found

    def _text(self, target: Target) -> str:
        if target.block_index is None:
            return target.doc.text[:20000]
        return target.doc.blocks[target.block_index].body

    # -- assembly --------------------------------------------------------------------------

    def results(
        self, seeds: list[Seed], top_k: int, corpora: set[Corpus], sources: set[str]
    ) -> list[RelatedHit]:
        seed_keys = {(s.doc.source, s.doc.path) for s in seeds}
        seed_blocks = {(s.doc.source, s.doc.path, s.start_line) for s in seeds}
        # A copy of a page that is a seed or a result above, in a language neither a seed's nor
        # English (the original), says nothing new: docs/es/docs/x.md beside docs/en/docs/x.md
        # for an English seed, the Spanish and French copies for a German one (its English
        # original stays: a translation may lag it).
        read = {self.view.language(s.doc) for s in seeds if s.doc.corpus is Corpus.DOCS}
        read.add("en")
        shown_pages = {
            page_in_any_language(s.doc.path) for s in seeds if s.doc.corpus is Corpus.DOCS
        }
        ranked = []
        for (source, path, index), target in self.targets.items():
            if target.doc.corpus not in corpora or (sources and source not in sources):
                continue
            block = target.doc.blocks[index] if index is not None else None
            if (source, path, block.start_line if block else 1) in seed_blocks:
                continue
            if index is None and (source, path) in seed_keys:
                continue
            ranked.append((target.score, target, block))
        ranked.sort(key=lambda x: (-x[0], x[1].doc.path, x[2].start_line if x[2] else 0))
        per_doc: dict[tuple[str, str], int] = defaultdict(int)
        out: list[RelatedHit] = []
        for score, target, block in ranked:
            key = (target.doc.source, target.doc.path)
            if per_doc[key] >= 2:
                continue
            page = page_in_any_language(target.doc.path) if target.doc.corpus is Corpus.DOCS else ""
            if page:
                if page in shown_pages and self.view.language(target.doc) not in read:
                    continue
                shown_pages.add(page)
            per_doc[key] += 1
            out.append(self._hit(score, target, block))
            if len(out) >= top_k:
                break
        return out

    def _hit(self, score: float, target: Target, block: Block | None) -> RelatedHit:
        doc = target.doc
        source = self.view.by_name[doc.source]
        lines = self.view.lines_of(doc)
        if block is None:
            kind, start, end, anchor, line = RefKind.FILE, 1, len(lines), "", 1
            loc = source.page_location(doc.path)
            title = doc.meta.title or doc.path
            url_anchor = ""
        else:
            kind = block.kind
            start, end, anchor, line = (
                block.start_line,
                block.end_line,
                block.anchor,
                block.start_line,
            )
            cand_loc = source.block_location(doc, block, line)
            loc = cand_loc
            title = block.title
            url_anchor = anchor if kind is RefKind.DOC else f"L{line}"
        location = loc if source.is_default else f"{source.name}/{loc}"
        snippet = "\n".join(lines[start - 1 : min(end, start + 7)])
        reasons = sorted(target.reasons.values(), key=lambda r: (-r.weight, r.name))
        return RelatedHit(
            ref_id=Ref(doc.source, kind, doc.path, anchor, line, doc.content_hash).encode(),
            kind=kind,
            location=location,
            title=title,
            score=round(score, 4),
            reasons=reasons,
            source=doc.source,
            start_line=start,
            end_line=end,
            snippet=snippet,
            url=source.url_for(doc.path, url_anchor),
        )


def expand_related(
    view: CorpusView,
    ref_ids: list[str],
    top_k: int = 0,
    kinds: tuple[Corpus, ...] = (),
    mode: str = "",
    sources: tuple[str, ...] = (),
) -> RelatedOutcome:
    snapshot = view.snapshot
    seeds, unresolved = load_seeds(snapshot, ref_ids, view.lines_of)
    top_k = TOP_K_DEFAULT if top_k <= 0 else min(top_k, TOP_K_MAX)
    corpora = set(kinds) or {Corpus.DOCS, Corpus.CODE}
    if not seeds:
        return RelatedOutcome([], unresolved)
    finder = RelatedFinder(view, snapshot)
    corpus_filter = [str(c) for c in corpora] if len(corpora) < 2 else []
    finder.shared_terms(seeds, corpus_filter, sorted(sources))
    for seed in seeds:
        checkpoint()
        finder.imports(seed)
        finder.doc_links(seed)
        lead_to_names(finder, seed)
        lead_to_sections(finder, seed, sorted(sources))
    for seed in seeds:
        finder.proximity(seed)
    checkpoint()
    finder.framework(seeds)
    if mode == "implementation":
        finder.implementation()
    return RelatedOutcome(finder.results(seeds, top_k, corpora, set(sources)), unresolved)


# -- helpers -----------------------------------------------------------------------------------


def _fenced_code(text: str) -> list[str]:
    out, inside = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            inside = not inside
            continue
        if inside:
            out.append(line)
    return out


def _normalise(path: PurePosixPath) -> str | None:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts) if parts else None


def _module_matches(path: str, package: list[str]) -> bool:
    folder = PurePosixPath(path).parent.parts
    return not package or tuple(package) == folder[-len(package) :] or package[0] in folder


@lru_cache(maxsize=4096)
def _body_terms(body: str) -> frozenset[str]:
    """A block body's tokens, remembered: every ExpandRelated names the shared terms of its 60
    distinctive-term hits, mostly blocks that earlier calls asked about too (tokenizing them
    was 80 % of a call). Bodies are held by the generation anyway; the sets are about 4 KB."""
    return frozenset(tokenize(body))


def _block_including(doc: SourceDocument, code_path: str, lines: list[str]) -> int | None:
    """The innermost block of ``doc`` whose text includes ``code_path``."""
    best: tuple[int, int] | None = None
    for index, block in enumerate(doc.blocks):
        if any(code_path.endswith(tail) for tail in includes_in(block.body)):
            size = block.end_line - block.start_line
            if best is None or size < best[0]:
                best = (size, index)
    return best[1] if best else None


def _same(a: SourceDocument, b: SourceDocument) -> bool:
    """One served document (by key: a document made again from the pack is a new object)."""
    return a.path == b.path and a.source == b.source
