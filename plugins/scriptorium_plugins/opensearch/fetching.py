"""A page read back from the cluster, cut as a local fetch cuts it.

The page document holds the whole text and every block, so a ref or a location is answered
with the same cut (section, definition, lines, file), location, ref and version a local source
of the same kind would give; only the provider differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptorium.plugin import (
    ContentOutcome,
    Corpus,
    FetchMiss,
    FetchRequest,
    FetchResult,
    Ref,
    RefKind,
    RemotePage,
    Resolution,
    code_location,
    cut_code,
    cut_doc,
    cut_file,
    cut_lines,
    cut_symbol,
    doc_version,
    find_doc_block,
    parse_line_range,
    split_lines,
)

if TYPE_CHECKING:
    from scriptorium_plugins.opensearch.source import OpenSearchSource


def outcome(
    source: OpenSearchSource, page: RemotePage, request: FetchRequest, fragment: str
) -> FetchResult:
    lines = split_lines(page.text)
    mode, max_lines = request.mode, request.max_lines
    ref = request.ref
    detail = ""
    if ref is not None:
        kind = ref.kind
        if kind is RefKind.DOC:
            block = find_doc_block(page, ref.anchor) if ref.anchor else None
            if ref.anchor and block is None:
                return FetchMiss(Resolution("not_found", "ref", detail="the heading is gone"))
            cut = cut_doc(page, lines, block, mode, max_lines)
        elif kind is RefKind.CODE:
            line = ref.line
            if not page.content_hash.startswith(ref.content_hash) and ref.anchor:
                moved = next((b for b in page.blocks if b.anchor == ref.anchor), None)
                line = moved.start_line if moved is not None else line
            if line > len(lines):
                return FetchMiss(Resolution("not_found", "ref", detail="the file is shorter now"))
            cut = cut_code(page, lines, line, mode, max_lines)
        else:
            cut = cut_file(page, lines, max_lines)
        rule = "ref"
    elif page.corpus is Corpus.CODE:
        span = parse_line_range(fragment) if fragment else None
        named = None
        if fragment and span is None:
            named = next(
                (b for b in page.blocks if fragment in (b.anchor, b.symbol)),
                None,
            )
        if span is not None:
            cut = cut_lines(page, lines, span, mode, max_lines)
        elif named is not None:
            cut = cut_symbol(page, lines, named, mode, max_lines)
        else:
            if fragment:
                detail = f"no definition {fragment!r} in this file; returned the file"
            cut = cut_file(page, lines, max_lines)
        rule = "exact"
    else:
        block = find_doc_block(page, fragment) if fragment else None
        if fragment and block is None:
            detail = f"no section {fragment!r} on this page; returned the page"
        cut = cut_doc(page, lines, block, mode, max_lines)
        rule = "exact"
    page_location = page.location
    if cut.kind is RefKind.DOC:
        anchor = cut.block.anchor if cut.block else ""
        location = f"{page_location}#{anchor}" if anchor else page_location
        ref_out = Ref(source.name, RefKind.DOC, page.path, anchor, cut.start_line, page.version)
        url_anchor = anchor
    elif cut.kind is RefKind.CODE:
        location = code_location(page, page_location, cut, named=False)
        block_anchor = cut.block.anchor if cut.block else ""
        ref_out = Ref(
            source.name, RefKind.CODE, page.path, block_anchor, cut.anchor_line, page.version
        )
        url_anchor = f"L{cut.anchor_line}"
    else:
        location = page_location
        ref_out = Ref(source.name, RefKind.FILE, page.path, "", 1, page.version)
        url_anchor = ""
    resolution = Resolution(
        "resolved",
        rule,
        detail=detail,
        requested_location=request.location,
        site=source.name,
        resolved_location=location,
    )
    return ContentOutcome(
        location=location,
        requested_location=request.location,
        url=f"{page.url}#{url_anchor}" if page.url and url_anchor else page.url,
        source=source.name,
        content=cut.content,
        ranges=cut.ranges,
        truncated=cut.truncated,
        total_lines=len(lines),
        doc_version=doc_version(page),
        resolution=resolution,
        ref_id=ref_out.encode(),
        kind=cut.kind,
        title=cut.title,
        start_line=cut.start_line,
        end_line=cut.end_line,
        provider=source.name,
        source_revision=page.revision,
        section_path=cut.section_path,
        scope=cut.scope,
        symbol=cut.symbol,
        context=cut.context,
    )
