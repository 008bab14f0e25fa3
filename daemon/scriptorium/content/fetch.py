"""GetContent: resolve a ref or location and cut the requested content.

``LocalContent`` answers from the served generation (and is the local provider's fetch);
``FetchService`` picks who answers: the remote source a ref names, the provider chain for a
location when remote sources exist, the local content otherwise.
"""

from __future__ import annotations

import logging
from typing import Protocol

from scriptorium import telemetry
from scriptorium.cancel import hold
from scriptorium.content.assemble import (
    Placed,
    StaleRef,
    content_outcome,
    cut_for_fragment,
    cut_for_ref,
    placed,
)
from scriptorium.content.code import cut_code, cut_lines, cut_symbol
from scriptorium.content.cut import (
    MAX_LINES_CAP,
    Cut,
    clamp_max_lines,
    cut_file,
    find_doc_block,
)
from scriptorium.content.follow import follow_reexports
from scriptorium.content.outline import as_outline
from scriptorium.content.parts import fit, validate_max_chars
from scriptorium.content.resolve import Resolved, Resolver
from scriptorium.content.symbols import (
    find_definition,
    parse_line_range,
)
from scriptorium.domain.model import Corpus, RefKind, SourceDocument, doc_version
from scriptorium.domain.outcomes import (
    ContentOutcome,
    ContentParams,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Resolution,
)
from scriptorium.domain.refs import Ref, decode_ref
from scriptorium.index.served import ServedIndex
from scriptorium.retrieval.providers import ProviderChain, miss_error
from scriptorium.sources.base import PathEscapeError
from scriptorium.sources.catalog import SourceCatalog
from scriptorium.sources.remote import FetchMiss, FetchRequest, FetchResult
from scriptorium.text.quoting import clipped

log = logging.getLogger(__name__)


class ServedPages(ServedIndex, Protocol):
    """The served index as GetContent reads it: with the locations resolver of its generation."""

    @property
    def resolver(self) -> Resolver: ...


class FetchService:
    """Resolves refs and locations to content cuts, locally or through the chain."""

    def __init__(self, catalog: SourceCatalog, local: LocalContent, chain: ProviderChain) -> None:
        self.catalog = catalog
        self.local = local
        self.chain = chain

    @telemetry.traced_fetch
    async def get_content(self, params: ContentParams) -> ContentOutcome:
        await hold("rpc.get_content")
        if params.ref_id and params.location:
            raise InvalidArgument("give either ref_id or location, not both")
        if not params.ref_id and not params.location:
            raise InvalidArgument("ref_id or location is required")
        if params.max_lines < 0:
            raise InvalidArgument("max_lines must not be negative")
        validate_max_chars(params.max_chars)
        mode = params.mode or "snippet"
        max_lines = clamp_max_lines(params.max_lines)
        if params.max_chars and not params.max_lines:
            # Parts page through the whole block or file, not through the default line cap.
            max_lines = MAX_LINES_CAP
        if mode == "outline":
            return self.local.outline(await self._fetch(params, "snippet", max_lines))
        return fit(await self._fetch(params, mode, max_lines), params.max_chars, params.cursor)

    async def _fetch(self, params: ContentParams, mode: str, max_lines: int) -> ContentOutcome:
        """The whole answer, from the source that owns it."""
        if params.ref_id:
            ref = decode_ref(params.ref_id)
            remote = self.catalog.remote_by_name.get(ref.source)
            if remote is not None:
                return await self._remote_fetch(remote, params, ref, mode, max_lines)
            out = self.local.by_ref(params.ref_id, mode, max_lines)
        elif not self.chain.sole:
            request = FetchRequest(
                location=params.location,
                mode=mode,
                max_lines=max_lines,
                seen_doc_version=params.seen_doc_version,
            )
            return await self.chain.fetch(request)
        else:
            out = self.local.by_location(params.location, mode, max_lines)
        if params.seen_doc_version and params.seen_doc_version != out.doc_version:
            out.revision_skew = True
        return out

    async def _remote_fetch(
        self, remote, params: ContentParams, ref: Ref, mode: str, max_lines: int
    ) -> ContentOutcome:
        """A ref owned by a remote source goes straight to it, not through the chain."""
        request = FetchRequest(
            ref=ref, mode=mode, max_lines=max_lines, seen_doc_version=params.seen_doc_version
        )
        result = await remote.fetch(request)
        if isinstance(result, FetchMiss):
            raise miss_error(result.resolution)
        result.provider = remote.name
        if not result.trace_id:
            result.trace_id = telemetry.current_trace_id()
        return result


class LocalContent:
    """Content from the served generation: by ref, by location, or as the local provider."""

    def __init__(self, catalog: SourceCatalog, indexer: ServedPages) -> None:
        self.catalog = catalog
        self.indexer = indexer

    def local_fetch(self, request: FetchRequest) -> FetchResult:
        """The local provider's answer for the chain: content, or the miss as a resolution."""
        try:
            out = self.by_location(request.location, request.mode, request.max_lines)
        except (NotFound, FailedPrecondition) as exc:
            if exc.resolution is None:
                raise
            return FetchMiss(exc.resolution)
        seen = request.seen_doc_version
        out.revision_skew = bool(seen) and seen != out.doc_version
        return out

    def outline(self, out: ContentOutcome) -> ContentOutcome:
        """The outline of the document a resolved answer came from (local sources only)."""
        doc = None
        if out.provider == "local":
            ref = decode_ref(out.ref_id)
            doc = self.indexer.snapshot.docs.get((ref.source, ref.path))
        if doc is None:
            raise FailedPrecondition(
                f"an outline needs a locally indexed document; {out.source!r} is served remotely"
            )
        return as_outline(out, doc, self.indexer.lines_of(doc))

    def by_ref(self, ref_id: str, mode: str, max_lines: int) -> ContentOutcome:
        ref = decode_ref(ref_id)
        source = self.catalog.by_name.get(ref.source)
        if source is None:
            if ref.kind is not RefKind.DOC and not any(
                s.corpus is Corpus.CODE for s in self.catalog.local
            ):
                raise FailedPrecondition(
                    "code and file refs are unavailable: no code source is configured",
                    Resolution("not_found", "ref", detail="docs-only configuration"),
                )
            raise NotFound(
                f"unknown source {clipped(ref.source)}",
                Resolution(
                    "unknown_site", "ref", detail="the ref names a source that is not configured"
                ),
            )
        try:
            from scriptorium.sources.paths import safe_relative_path

            path = safe_relative_path(ref.path)
        except PathEscapeError as exc:
            raise InvalidArgument(f"ref path refused: {exc}") from None
        snapshot = self.indexer.snapshot
        doc = snapshot.docs.get((source.name, path))
        if doc is None:
            raise NotFound(
                "the referenced document is no longer indexed",
                Resolution("not_found", "ref", detail="stale ref: the document was removed"),
            )
        skew = not doc.content_hash.startswith(ref.content_hash)
        lines = self.indexer.lines_of(doc)
        try:
            cut = cut_for_ref(doc, lines, ref, mode, max_lines)
        except StaleRef as exc:
            raise NotFound(str(exc), Resolution("not_found", "ref", detail=exc.detail)) from None
        where = placed(cut, doc, source.name, source.page_location(doc.path), doc.content_hash)
        qualified = where.location if source.is_default else f"{source.name}/{where.location}"
        resolution = Resolution(
            "resolved", "ref", requested_location="", site=source.name, resolved_location=qualified
        )
        out = self._outcome(source, doc, cut, where, qualified, "", resolution, ref_id)
        out.revision_skew = skew
        return out

    def by_location(self, location: str, mode: str, max_lines: int) -> ContentOutcome:
        resolved = self.indexer.resolver.resolve(location)
        fragment = resolved.fragment
        if resolved.doc.corpus is Corpus.CODE and fragment and resolved.symbol_only is False:
            resolved.symbol_only = parse_line_range(fragment) is None
        if resolved.doc.corpus is Corpus.CODE and fragment and resolved.symbol_only:
            follow_reexports(self.indexer.resolver, resolved, self._text, location)
        source, doc, fragment = resolved.source, resolved.doc, resolved.fragment
        lines = self.indexer.lines_of(doc)
        page = source.page_location(doc.path)
        if doc.corpus is Corpus.CODE:
            cut = self._code_cut(resolved, lines, mode, max_lines, location)
            named = bool(fragment) and (resolved.symbol_only or parse_line_range(fragment) is None)
        else:
            if fragment and find_doc_block(doc, fragment) is None:
                span = parse_line_range(fragment)
                if span is not None:
                    _check_span(span, len(lines), resolved, location, "page")
            cut, note = cut_for_fragment(doc, lines, fragment, mode, max_lines)
            resolved.resolution.detail = note or resolved.resolution.detail
            named = False
        where = placed(cut, doc, source.name, page, doc.content_hash, named)
        qualified = where.location if source.is_default else f"{source.name}/{where.location}"
        resolved.resolution.resolved_location = qualified
        return self._outcome(
            source, doc, cut, where, qualified, location, resolved.resolution, where.ref.encode()
        )

    def _text(self, doc: SourceDocument) -> str:
        return "\n".join(self.indexer.lines_of(doc))

    def _code_cut(
        self, resolved: Resolved, lines: list[str], mode: str, max_lines: int, requested: str
    ) -> Cut:
        """A code location: the whole file, exact lines (``#L10-L20``), or a definition
        (``#Class.method``, or the rest of a Python module path)."""
        source, doc, fragment = resolved.source, resolved.doc, resolved.fragment
        if not fragment:
            return cut_file(doc, lines, max_lines)
        span = None if resolved.symbol_only else parse_line_range(fragment)
        if span is None:
            page = source.page_location(doc.path)
            qualify = self.indexer.resolver.qualify
            match = find_definition(
                doc, fragment, lambda f: qualify(source, f"{page}#{f}"), requested
            )
            if match.rule != "exact" and resolved.resolution.rule == "exact":
                resolved.resolution.rule = match.rule  # the weaker of the two rules
            return cut_symbol(doc, lines, match.block, mode, max_lines)
        _check_span(span, len(lines), resolved, requested, "file")
        if mode == "definition":
            return cut_code(doc, lines, span[0], mode, max_lines)
        return cut_lines(doc, lines, span, mode, max_lines)

    def _outcome(
        self,
        source,
        doc: SourceDocument,
        cut: Cut,
        where: Placed,
        location: str,
        requested: str,
        resolution: Resolution,
        ref_id: str,
    ) -> ContentOutcome:
        return content_outcome(
            cut,
            source=source.name,
            provider="local",
            location=location,
            requested=requested,
            url=source.url_for(doc.path, where.url_anchor),
            total_lines=len(self.indexer.lines_of(doc)),
            doc_version=doc_version(doc),
            resolution=resolution,
            ref_id=ref_id,
        )


def _check_span(
    span: tuple[int, int], total: int, resolved: Resolved, requested: str, noun: str
) -> None:
    """A line range starting past the end of a ``total``-line file or page is NOT_FOUND; one
    running past it is answered up to its end, and the resolution says so."""
    if span[0] > total:
        raise NotFound(
            f"line anchor is past the end of the {noun}",
            Resolution(
                "not_found",
                resolved.resolution.rule,
                requested_location=requested,
                detail=f"the {noun} has {total} lines",
            ),
        )
    if span[1] > total:
        resolved.resolution.detail = f"the {noun} has {total} lines; the range stops there"
