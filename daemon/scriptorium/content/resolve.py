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
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from scriptorium import limits, telemetry
from scriptorium.content.pages import Outcome, PageEntry, SourcePages, strip_variant
from scriptorium.domain.model import SourceDocument
from scriptorium.domain.outcomes import NotFound, Resolution
from scriptorium.domain.refs import normalize_location
from scriptorium.index.catalog import Snapshot
from scriptorium.index.doctable import DocTable
from scriptorium.sources.base import Source

MAX_LOCATION_CHARS = limits.MAX_LOCATION_CHARS
# The rules that read a location as written (no guess from its last segment).
_STRICT = ("exact", "variant")
_MODULE_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


@dataclass(slots=True)
class Resolved:
    source: Source
    doc: SourceDocument
    fragment: str
    resolution: Resolution
    # The fragment came from a module path: it names a definition, never lines.
    symbol_only: bool = False


class Resolver:
    """Resolves locations against every source of one snapshot (seed site-selection order)."""

    def __init__(self, sources: list[Source], snapshot: Snapshot) -> None:
        self.sources = sources
        self.docs: DocTable = snapshot.docs
        by_source: dict[str, list[PageEntry]] = defaultdict(list)
        for (source_name, _), page in snapshot.docs.page_entries():
            by_source[source_name].append(page)
        self.pages = {s.name: SourcePages(s, by_source.get(s.name, ())) for s in sources}
        self.by_name = {s.name.lower(): s for s in sources}

    def changed(
        self,
        removed: Iterable[tuple[tuple[str, str], PageEntry]],
        added: Iterable[SourceDocument],
        docs: DocTable,
    ) -> Resolver:
        """A resolver for the next generation (serving ``docs``): this one with one change
        applied. ``removed`` gives each page gone as ((source, path), (path, moved_from))."""
        new = object.__new__(Resolver)
        new.sources, new.by_name, new.docs = self.sources, self.by_name, docs
        new.pages = dict(self.pages)
        gone: dict[str, list[PageEntry]] = defaultdict(list)
        came: dict[str, list[PageEntry]] = defaultdict(list)
        for (source_name, _), page in removed:
            gone[source_name].append(page)
        for doc in added:
            came[doc.source].append((doc.path, tuple(doc.meta.moved_from)))
        for name, pages in self.pages.items():
            if name in gone or name in came:
                new.pages[name] = pages.changed(gone.get(name, []), came.get(name, []))
        return new

    def document(self, source: Source, path: str) -> SourceDocument:
        """The served document at ``path`` (made now if no request has asked for it yet)."""
        return self.docs[(source.name, path)]

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
            if outcome is None or outcome.rule not in _STRICT:
                # ``docs/ranking`` in a source named ``docs`` rooted above its ``docs/`` folder:
                # the whole path is the page's own location, so it resolves as exactly that.
                whole = self._strict_default(path)
                if whole is not None:
                    return self._finish(raw, whole[0], whole[1], fragment)
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
                if outcome.path is not None:
                    page = source.page_location(outcome.path)
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

    def _strict_default(self, path: str) -> tuple[Source, Outcome] | None:
        """The default source where ``path`` names one page exactly (or as a variant)."""
        for source in self.sources:
            if source.is_default:
                outcome = self.pages[source.name].resolve(path)
                if outcome is not None and outcome.rule in _STRICT and outcome.path is not None:
                    return source, outcome
        return None

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
                    self.qualify(s, s.page_location(p)) + (f"#{symbol}" if symbol else "")
                    for s, p, _ in found
                ]
                raise self._ambiguous(raw, rule, candidates, "several Python files match")
            source, path, _ = found[0]
            resolved = self._finish(raw, source, Outcome("resolved", rule, path), "")
            resolved.fragment = ".".join(parts[size:])
            resolved.symbol_only = True
            resolved.resolution.detail = "resolved as a Python module path"
            return resolved
        return None

    def _modules(self, module: str) -> list[tuple[Source, str, str]]:
        """The files of the best rule that ``module`` names in the first sources naming any."""
        found: list[tuple[Source, str, str]] = []
        for default in (True, False):
            for source in (s for s in self.sources if s.is_default is default):
                paths, rule = self.pages[source.name].python_module(module)
                found += [(source, path, rule) for path in paths]
            if found:
                break
        exact = [f for f in found if f[2] == "exact"]
        return exact or found

    def python_files(self, module: str) -> list[tuple[Source, str, str]]:
        """(source, path, rule) of the Python files a dotted module name names."""
        return self._modules(module)

    def _finish(self, raw: str, source: Source, outcome: Outcome, fragment: str) -> Resolved:
        if outcome.reason == "ambiguous" or outcome.path is None:
            candidates = [self.qualify(source, source.page_location(c)) for c in outcome.candidates]
            raise self._ambiguous(raw, outcome.rule, candidates, "several pages match")
        page = source.page_location(outcome.path)
        resolution = Resolution(
            reason="resolved",
            rule=outcome.rule,
            requested_location=raw,
            site=source.name,
            resolved_location=self.qualify(source, page),
        )
        return Resolved(source, self.document(source, outcome.path), fragment, resolution)

    def _shared_leaf(self, sources: list[Source], path: str, raw: str) -> NotFound | None:
        """The not_found for a leaf several pages share, naming them; None when no leaf is shared.

        The reason stays not_found (the leaf rule never guesses); the candidates let the caller
        pick. The detail names the leaf, which is a segment of pages the caller may read.
        """
        candidates: list[str] = []
        for source in sources:
            for page in self.pages[source.name].leaf_pages(path):
                candidates.append(self.qualify(source, source.page_location(page)))
        if not candidates:
            return None
        leaf = strip_variant(path.lower()).rsplit("/", 1)[-1]
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
