"""Location resolution: turn a human location into exactly one document, or say why not.

Sources play the role of sites. A location is either bare (resolved against the default
sources first) or qualified by a source name (``ja/tutorial/first-steps``). Within a source the
rules run in order, case-insensitively: ``exact`` canonical page, ``variant`` (a trailing
``.md``/``.mdx``/``.rst``/``.txt``/``.html``/``.htm`` or ``/index`` stripped, a bare ``index``
meaning the root page), ``moved`` (a page's ``moved_from`` front matter) and ``canonical-leaf``
(the final segment names exactly one page). The reasons and rules are a fixed vocabulary. A
Python module path (``package.module.Class.method``, no ``/`` and no ``#``) that names no page
resolves to the module's file, the rest of it becoming the definition to cut
(``content.symbols``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

from scriptorium import limits, telemetry
from scriptorium.domain.model import SourceDocument
from scriptorium.domain.outcomes import InvalidArgument, NotFound, Resolution
from scriptorium.index.catalog import Snapshot
from scriptorium.sources.base import Source

MAX_LOCATION_CHARS = limits.MAX_LOCATION_CHARS
_VARIANT_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".html", ".htm")
_MODULE_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(slots=True)
class Outcome:
    reason: str  # resolved or ambiguous
    rule: str
    doc: SourceDocument | None = None
    candidates: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Resolved:
    source: Source
    doc: SourceDocument
    fragment: str
    resolution: Resolution
    # The fragment came from a module path: it names a definition, never lines.
    symbol_only: bool = False


class SourcePages:
    """Lookup tables of one source's canonical pages, built once per generation.

    Every list holds its documents in path order, as a build from the whole source gives;
    :meth:`changed` derives the next generation's tables from these in proportion to what
    changed, without walking every page again.
    """

    def __init__(self, source: Source, docs: list[SourceDocument]) -> None:
        self.source = source
        self.exact: dict[str, list[SourceDocument]] = defaultdict(list)
        self.leaf: dict[str, list[SourceDocument]] = defaultdict(list)
        self.moved: dict[str, list[SourceDocument]] = defaultdict(list)
        self.module: dict[str, list[SourceDocument]] = defaultdict(list)
        self.top_dirs: Counter[str] = Counter()
        for doc in docs:
            for table, key in self._keys(doc):
                getattr(self, table)[key].append(doc)
            if "/" in doc.path:
                self.top_dirs[doc.path.split("/", 1)[0].lower()] += 1

    def _keys(self, doc: SourceDocument) -> Iterator[tuple[str, str]]:
        page = self.source.page_location(doc.path).lower()
        yield "exact", page
        yield "leaf", page.rsplit("/", 1)[-1]
        for old in doc.meta.moved_from:
            yield "moved", _strip_variant(old.strip().strip("/").lower())
        module = _module_name(doc.path)
        if module:
            yield "module", module.rsplit(".", 1)[-1].lower()

    def changed(self, removed: list[SourceDocument], added: list[SourceDocument]) -> SourcePages:
        """These tables with ``removed`` documents taken out and ``added`` ones put in."""
        new = object.__new__(SourcePages)
        new.source = self.source
        tables = {
            "exact": dict(self.exact),
            "leaf": dict(self.leaf),
            "moved": dict(self.moved),
            "module": dict(self.module),
        }
        new.top_dirs = Counter(self.top_dirs)
        touched: set[tuple[str, str]] = set()
        for doc, sign in [(d, -1) for d in removed] + [(d, 1) for d in added]:
            for table, key in self._keys(doc):
                entries = tables[table]
                if (table, key) not in touched:
                    touched.add((table, key))
                    entries[key] = list(entries.get(key, ()))
                if sign < 0:
                    entries[key] = [d for d in entries[key] if d is not doc]
                else:
                    entries[key].append(doc)
            if "/" in doc.path:
                new.top_dirs[doc.path.split("/", 1)[0].lower()] += sign
        for table, key in touched:
            entries = tables[table]
            if entries[key]:
                entries[key].sort(key=lambda d: d.path)
            else:
                del entries[key]
        new.top_dirs = +new.top_dirs  # drops directories no page is in any more
        new.exact, new.leaf, new.moved = tables["exact"], tables["leaf"], tables["moved"]
        new.module = tables["module"]
        return new

    def resolve(self, path: str) -> Outcome | None:
        key = path.lower()
        hit = self.exact.get(key)
        if hit:
            return _outcome(self.source, hit, "exact")
        variant = _strip_variant(key)
        if variant != key:
            hit = self.exact.get(variant)
            if hit:
                return _outcome(self.source, hit, "variant")
        # An explicit moved_from record beats a guess from the last segment.
        hit = self.moved.get(variant)
        if hit:
            return _outcome(self.source, hit, "moved")
        leaf = variant.rsplit("/", 1)[-1]
        hit = self.leaf.get(leaf)
        if hit and len(hit) == 1:
            return Outcome("resolved", "canonical-leaf", hit[0])
        return None

    def python_module(self, module: str) -> tuple[list[SourceDocument], str]:
        """The Python files a dotted module name names, and by which rule: ``exact`` (the
        file's path from the source root), else ``canonical-leaf`` (the path's trailing
        packages, as a ``src/`` layout imports them). A ``.py`` file hides its ``.pyi`` stub."""
        docs = self.module.get(module.rsplit(".", 1)[-1].lower(), [])
        exact = [d for d in docs if _module_name(d.path) == module]
        if exact:
            return _without_stubs(exact), "exact"
        tail = [d for d in docs if _module_name(d.path).endswith("." + module)]
        return _without_stubs(tail), "canonical-leaf"

    def leaf_pages(self, path: str) -> list[SourceDocument]:
        """The pages whose last segment is the path's, when several share it (a leaf miss).

        They are what a caller can choose from: the leaf rule refuses to guess among them.
        """
        leaf = _strip_variant(path.lower()).rsplit("/", 1)[-1]
        hit = self.leaf.get(leaf, [])
        return list(hit) if len(hit) > 1 else []


def _outcome(source: Source, docs: list[SourceDocument], rule: str) -> Outcome:
    if len(docs) == 1:
        return Outcome("resolved", rule, docs[0])
    return Outcome("ambiguous", rule, None, sorted(d.path for d in docs))


def _strip_variant(path: str) -> str:
    for suffix in _VARIANT_SUFFIXES:
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if path.endswith("/index"):
        path = path[: -len("/index")]
    return path


def _without_stubs(docs: list[SourceDocument]) -> list[SourceDocument]:
    """``docs`` less the ``.pyi`` stubs whose ``.py`` file is among them."""
    modules = {d.path.removesuffix(".py") for d in docs if d.path.endswith(".py")}
    return [d for d in docs if not d.path.endswith(".pyi") or d.path[:-4] not in modules]


def _module_name(path: str) -> str:
    """``pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py`` -> ``pkg``; "" for other files."""
    stem = next((path[: -len(s)] for s in _PYTHON_SUFFIXES if path.endswith(s)), "")
    stem = stem.removesuffix("/__init__")
    parts = stem.split("/")
    return ".".join(parts) if stem and all(p.isidentifier() for p in parts) else ""


def normalize_location(raw: str) -> tuple[str, str]:
    """Validate and split a requested location into (path, fragment).

    Percent-encoding is decoded once before the checks, so an encoded ``..`` is refused too.
    """
    if len(raw) > MAX_LOCATION_CHARS:
        raise InvalidArgument(f"location is longer than {MAX_LOCATION_CHARS} characters")
    decoded = unquote(raw).strip()
    if "\x00" in decoded or any(ord(ch) < 32 for ch in decoded):
        raise InvalidArgument("location contains control characters")
    path, _, fragment = decoded.partition("#")
    path = path.replace("\\", "/")
    if re.match(r"^[A-Za-z]:/", path) or path.startswith("//") or path.startswith("~"):
        raise InvalidArgument("absolute paths are not accepted as locations")
    path = path.strip().strip("/")
    if any(seg == ".." for seg in path.split("/")):
        raise InvalidArgument("'..' segments are not accepted in locations")
    if not path:
        raise InvalidArgument("location is empty")
    return path, fragment.strip()


class Resolver:
    """Resolves locations against every source of one snapshot (seed site-selection order)."""

    def __init__(self, sources: list[Source], snapshot: Snapshot) -> None:
        self.sources = sources
        by_source: dict[str, list[SourceDocument]] = defaultdict(list)
        for (source_name, _), doc in snapshot.docs.items():
            by_source[source_name].append(doc)
        self.pages = {s.name: SourcePages(s, by_source.get(s.name, [])) for s in sources}
        self.by_name = {s.name.lower(): s for s in sources}

    def changed(self, removed: list[SourceDocument], added: list[SourceDocument]) -> Resolver:
        """A resolver for the next generation: this one with one change applied."""
        new = object.__new__(Resolver)
        new.sources, new.by_name = self.sources, self.by_name
        new.pages = dict(self.pages)
        for name, pages in self.pages.items():
            gone = [d for d in removed if d.source == name]
            came = [d for d in added if d.source == name]
            if gone or came:
                new.pages[name] = pages.changed(gone, came)
        return new

    def qualify(self, source: Source, location: str) -> str:
        return location if source.is_default else f"{source.name}/{location}"

    @telemetry.traced(telemetry.RESOLVE, telemetry.describe_resolved)
    def resolve(self, raw: str) -> Resolved:
        path, fragment = normalize_location(raw)
        segments = path.split("/")
        named = self.by_name.get(segments[0].lower())
        if named is not None:
            rest = "/".join(segments[1:])
            outcome = self.pages[named.name].resolve(rest) if rest else None
            if outcome is None and not rest:
                outcome = self.pages[named.name].resolve("index")
            if outcome is None:
                outcome = self.pages[named.name].resolve(path)
            if outcome is None:
                shared = self._shared_leaf([named], rest or path, raw)
                if shared:
                    raise shared
                raise self._miss(raw, "not_found", f"no page at that location in {named.name}")
            return self._finish(raw, named, outcome, fragment)
        defaults = [s for s in self.sources if s.is_default]
        for source in defaults:
            outcome = self.pages[source.name].resolve(path)
            if outcome is not None:
                return self._finish(raw, source, outcome, fragment)
        found: list[tuple[Source, Outcome]] = []
        for source in self.sources:
            if source.is_default:
                continue
            outcome = self.pages[source.name].resolve(path)
            if outcome is not None:
                found.append((source, outcome))
        if len(found) == 1:
            return self._finish(raw, found[0][0], found[0][1], fragment)
        if len(found) > 1:
            candidates = []
            for source, outcome in found:
                if outcome.doc is not None:
                    page = source.page_location(outcome.doc.path)
                    candidates.append(f"{source.name}/{page}")
                else:
                    candidates += [
                        f"{source.name}/{source.page_location(c)}" for c in outcome.candidates
                    ]
            raise self._ambiguous(
                raw, "canonical-leaf", sorted(candidates), "matches several sources"
            )
        head = segments[0].lower()
        if (
            len(segments) > 1
            and "-" in head
            and not any(head in p.top_dirs for p in self.pages.values())
        ):
            # The detail never quotes the request: it becomes the status message.
            raise self._miss(raw, "unknown_site", "its first segment names no configured source")
        if not fragment and _MODULE_PATH.match(path):
            module = self._python_module(raw, path)
            if module is not None:
                return module
        shared = self._shared_leaf(self.sources, path, raw)
        if shared:
            raise shared
        raise self._miss(raw, "not_found", "no page at that location; search to find it")

    def _python_module(self, raw: str, path: str) -> Resolved | None:
        """``package.module.Class.method``: the longest prefix that names a Python file (default
        sources first, exact before canonical-leaf), the rest the definition in it; None when
        no prefix names one."""
        parts = path.split(".")
        for size in range(len(parts), 0, -1):
            found = self._modules(".".join(parts[:size]))
            if not found:
                continue
            rule = found[0][2]
            if len(found) > 1:
                symbol = ".".join(parts[size:])
                candidates = [
                    self.qualify(s, s.page_location(d.path)) + (f"#{symbol}" if symbol else "")
                    for s, d, _ in found
                ]
                raise self._ambiguous(raw, rule, candidates, "several Python files match")
            source, doc, _ = found[0]
            resolved = self._finish(raw, source, Outcome("resolved", rule, doc), "")
            resolved.fragment = ".".join(parts[size:])
            resolved.symbol_only = True
            resolved.resolution.detail = "resolved as a Python module path"
            return resolved
        return None

    def _modules(self, module: str) -> list[tuple[Source, SourceDocument, str]]:
        """The files of the best rule that ``module`` names in the first sources naming any."""
        found: list[tuple[Source, SourceDocument, str]] = []
        for default in (True, False):
            for source in (s for s in self.sources if s.is_default is default):
                docs, rule = self.pages[source.name].python_module(module)
                found += [(source, doc, rule) for doc in docs]
            if found:
                break
        exact = [f for f in found if f[2] == "exact"]
        return exact or found

    def _finish(self, raw: str, source: Source, outcome: Outcome, fragment: str) -> Resolved:
        if outcome.reason == "ambiguous" or outcome.doc is None:
            candidates = [self.qualify(source, source.page_location(c)) for c in outcome.candidates]
            raise self._ambiguous(raw, outcome.rule, candidates, "several pages match")
        page = source.page_location(outcome.doc.path)
        resolution = Resolution(
            reason="resolved",
            rule=outcome.rule,
            requested_location=raw,
            site=source.name,
            resolved_location=self.qualify(source, page),
        )
        return Resolved(source, outcome.doc, fragment, resolution)

    def _shared_leaf(self, sources: list[Source], path: str, raw: str) -> NotFound | None:
        """The not_found for a leaf several pages share, naming them; None when no leaf is shared.

        The reason stays not_found (the leaf rule never guesses); the candidates let the caller
        pick. The detail names the leaf, which is a segment of pages the caller may read.
        """
        candidates: list[str] = []
        for source in sources:
            for doc in self.pages[source.name].leaf_pages(path):
                candidates.append(self.qualify(source, source.page_location(doc.path)))
        if not candidates:
            return None
        leaf = _strip_variant(path.lower()).rsplit("/", 1)[-1]
        detail = f"the leaf {leaf!r} names {len(candidates)} pages; pass one of the candidates"
        return self._miss(raw, "not_found", detail, sorted(candidates))

    @staticmethod
    def _miss(raw: str, reason: str, detail: str, candidates: list[str] | None = None) -> NotFound:
        resolution = Resolution(
            reason=reason,
            rule="none",
            candidates=list(candidates or []),
            detail=detail,
            requested_location=raw,
        )
        return NotFound(f"{reason}: {detail}", resolution)

    @staticmethod
    def _ambiguous(raw: str, rule: str, candidates: list[str], detail: str):
        from scriptorium.domain.outcomes import FailedPrecondition

        resolution = Resolution(
            reason="ambiguous",
            rule=rule,
            candidates=candidates,
            detail=detail,
            requested_location=raw,
        )
        return FailedPrecondition(f"ambiguous location: {detail}", resolution)
