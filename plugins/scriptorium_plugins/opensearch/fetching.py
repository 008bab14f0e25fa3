"""A page read back from the cluster, cut as a local fetch cuts it.

The page document holds the whole text and every block, so a ref or a location is answered
with the same cut (section, definition, lines, file), location, ref and version a local source
of the same kind would give; only the provider differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptorium.plugin import (
    FetchMiss,
    FetchRequest,
    FetchResult,
    RemotePage,
    Resolution,
    StaleRef,
    anchored_url,
    content_outcome,
    cut_for_fragment,
    cut_for_ref,
    doc_version,
    placed,
    split_lines,
)

if TYPE_CHECKING:
    from scriptorium_plugins.opensearch.source import OpenSearchSource


def outcome(
    source: OpenSearchSource, page: RemotePage, request: FetchRequest, fragment: str
) -> FetchResult:
    lines = split_lines(page.text)
    mode, max_lines = request.mode, request.max_lines
    if request.ref is not None:
        try:
            cut = cut_for_ref(page, lines, request.ref, mode, max_lines)
        except StaleRef as exc:
            return FetchMiss(Resolution("not_found", "ref", detail=exc.detail))
        rule, detail = "ref", ""
    else:
        cut, detail = cut_for_fragment(page, lines, fragment, mode, max_lines)
        rule = "exact"
    where = placed(cut, page, source.name, page.location, page.version)
    resolution = Resolution(
        "resolved",
        rule,
        detail=detail,
        requested_location=request.location,
        site=source.name,
        resolved_location=where.location,
    )
    return content_outcome(
        cut,
        source=source.name,
        provider=source.name,
        location=where.location,
        requested=request.location,
        url=anchored_url(page.url, where.url_anchor),
        total_lines=len(lines),
        doc_version=doc_version(page),
        resolution=resolution,
        ref_id=where.ref.encode(),
        source_revision=page.revision,
    )
