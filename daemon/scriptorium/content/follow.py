"""Following re-exports from a public name to its definition (the ``re-export`` rule).

``pkg.Client`` resolves to ``pkg/__init__.py`` with ``Client`` to find in it; when the file
defines no such name but imports it for its users (``from ._client import Client``), the
definition is in ``pkg/_client.py`` and that is what the location names. A miss names the
file looked in and the closest public names, so the caller learns what the package offers.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from scriptorium.content.reexports import STAR, Export, read_exports
from scriptorium.content.resolve import Resolved, Resolver
from scriptorium.content.symbols import MAX_CANDIDATES, dotted, find_definition
from scriptorium.domain.model import SourceDocument
from scriptorium.domain.outcomes import NotFound, Resolution
from scriptorium.sources.base import Source

# How many files a chain of re-exports may pass through (a package's facade over a facade).
MAX_HOPS = 8


def follow_reexports(
    resolver: Resolver,
    resolved: Resolved,
    text_of: Callable[[SourceDocument], str],
    requested: str,
) -> None:
    """Point ``resolved`` at the file defining its fragment's name when the file it names only
    re-exports it; raise NotFound naming the file and its closest public names on a miss."""
    source, doc, fragment = resolved.source, resolved.doc, resolved.fragment
    page = source.page_location(doc.path)
    try:
        find_definition(doc, fragment, lambda f: resolver.qualify(source, f"{page}#{f}"), requested)
        return
    except NotFound as miss:
        first_miss = miss
    head, _, rest = dotted(fragment).partition(".")
    found = _chase(resolver, source, doc, head, text_of, set(), 0)
    if found is not None:
        target, name = found
        resolved.doc = target
        resolved.fragment = name + (f".{rest}" if rest else "")
        resolved.resolution.rule = "re-export"
        origin = source.page_location(target.path)
        resolved.resolution.detail = f"{page} re-exports it from {origin}"
        return
    public = _public_names(doc, text_of(doc))
    close = difflib.get_close_matches(head, public, n=MAX_CANDIDATES, cutoff=0.6)
    close += [n for n in public if n.casefold() == head.casefold() and n not in close]
    prefix = _prefix(requested, fragment, resolver.qualify(source, page))
    detail = f"no definition of that name in {page} or in what it re-exports"
    if close:
        detail += "; the candidates are its closest public names"
    # The file's own nearest definitions (language-qualified: ``Rack::Builder#use``) first,
    # then the public names it re-exports.
    own = list(first_miss.resolution.candidates if first_miss.resolution else [])
    candidates = list(dict.fromkeys([*own, *(prefix + name for name in close)]))
    resolution = Resolution(
        reason="not_found",
        rule="none",
        candidates=candidates[:MAX_CANDIDATES],
        detail=detail,
        requested_location=requested,
    )
    raise NotFound(f"not_found: {detail}", resolution)


def _chase(
    resolver: Resolver,
    source: Source,
    doc: SourceDocument,
    name: str,
    text_of: Callable[[SourceDocument], str],
    seen: set[tuple[str, str]],
    hops: int,
) -> tuple[SourceDocument, str] | None:
    """The document defining ``name`` through ``doc``'s re-exports, and its name there."""
    if hops >= MAX_HOPS or (doc.path, name) in seen:
        return None
    seen.add((doc.path, name))
    exports = read_exports(doc.path, doc.language, text_of(doc))
    for export in exports.named(name):
        original = name if export.name == STAR else export.original
        for target in _targets(resolver, source, export):
            if target.path == doc.path:
                continue
            if _defines(target, original):
                return target, original
            deeper = _chase(resolver, source, target, original, text_of, seen, hops + 1)
            if deeper is not None:
                return deeper
    return None


def _targets(resolver: Resolver, source: Source, export: Export) -> list[SourceDocument]:
    """The served documents an export points to, in the same source first."""
    docs = [resolver.docs.get((source.name, path)) for path in export.targets]
    found = [d for d in docs if d is not None]
    if export.module and not found:
        found = [resolver.document(s, p) for s, p, _ in resolver.python_files(export.module)]
    return found[:1] if export.targets else found


def _defines(doc: SourceDocument, name: str) -> bool:
    return any(b.symbol is not None and dotted(b.anchor) == name for b in doc.blocks)


def _public_names(doc: SourceDocument, text: str) -> list[str]:
    """What a file offers by name: ``__all__`` and its re-exports, then its own definitions."""
    exports = read_exports(doc.path, doc.language, text)
    own = [b.anchor for b in doc.blocks if b.symbol is not None and not b.anchor.startswith("_")]
    return list(dict.fromkeys([*exports.names(), *own]))


def _prefix(requested: str, fragment: str, page: str) -> str:
    """What goes before a name to make a location of the same form as the request's."""
    if "#" not in requested and requested.endswith("." + fragment):
        return requested[: -len(fragment)]  # a module path: ``pkg.`` + name
    return f"{page}#"
