"""Turning a document and a ref or location into a cut, its location, its ref and the answer.

Local content and every source that serves pages itself (a cluster, a remote site) answer
GetContent the same way: the same dispatch on the ref's kind, the same recovery of a definition
that moved, the same location and ``Ref`` for what the cut covers, and one ``ContentOutcome``
that always carries the trace id. Written once here so the answers cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from scriptorium import telemetry
from scriptorium.content.code import cut_code, cut_lines, cut_symbol
from scriptorium.content.cut import Cut, cut_doc, cut_doc_lines, cut_file, find_doc_block
from scriptorium.content.symbols import definition_fragment, line_fragment, parse_line_range
from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument
from scriptorium.domain.outcomes import ContentOutcome, Resolution
from scriptorium.domain.refs import Ref


class StaleRef(Exception):
    """A ref whose section or line is gone: ``str(exc)`` is the message, ``detail`` the cause."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a cut sits: its location, the URL fragment of that place, and its ref."""

    location: str
    url_anchor: str
    ref: Ref


def cut_for_ref(doc: SourceDocument, lines: list[str], ref: Ref, mode: str, max_lines: int) -> Cut:
    """The cut a ref names; a code ref whose file changed follows its definition if it moved.

    Raises ``StaleRef`` when the section is gone or the file is shorter than the line.
    """
    if ref.kind is RefKind.DOC:
        block = find_doc_block(doc, ref.anchor) if ref.anchor else None
        if ref.anchor and block is None:
            raise StaleRef(
                "the referenced section no longer exists", "stale ref: the heading is gone"
            )
        return cut_doc(doc, lines, block, mode, max_lines)
    if ref.kind is RefKind.CODE:
        line = ref.line
        if not doc.content_hash.startswith(ref.content_hash) and ref.anchor:
            moved = next((b for b in doc.blocks if b.anchor == ref.anchor), None)
            line = moved.start_line if moved is not None else line
        if line > len(lines):
            raise StaleRef(
                "the referenced line no longer exists", "stale ref: the file is shorter now"
            )
        return cut_code(doc, lines, line, mode, max_lines)
    return cut_file(doc, lines, max_lines)


def cut_for_fragment(
    doc: SourceDocument, lines: list[str], fragment: str, mode: str, max_lines: int
) -> tuple[Cut, str]:
    """The cut a location's fragment names in a page that carries its blocks, and a note when
    the fragment was not found and the whole page or file came back instead.

    Code: a line range, else a definition by anchor or name, else the file. Docs: the section
    with that anchor, else a line range (``L10-L20``), else the page.
    """
    if doc.corpus is Corpus.CODE:
        span = parse_line_range(fragment) if fragment else None
        if span is not None:
            return cut_lines(doc, lines, span, mode, max_lines), ""
        named = named_block(doc, fragment) if fragment else None
        if named is not None:
            return cut_symbol(doc, lines, named, mode, max_lines), ""
        note = f"no definition {fragment!r} in this file; returned the file" if fragment else ""
        return cut_file(doc, lines, max_lines), note
    block = find_doc_block(doc, fragment) if fragment else None
    if fragment and block is None:
        span = parse_line_range(fragment)
        if span is not None:
            return cut_doc_lines(doc, lines, span, mode, max_lines), ""
    note = (
        f"no section {fragment!r} on this page; returned the page" if fragment and not block else ""
    )
    return cut_doc(doc, lines, block, mode, max_lines), note


def named_block(doc: SourceDocument, fragment: str) -> Block | None:
    """The first block whose anchor or qualified name is ``fragment``."""
    return next((b for b in doc.blocks if fragment in (b.anchor, b.symbol)), None)


def placed(
    cut: Cut,
    doc: SourceDocument,
    source: str,
    page: str,
    version: str,
    named: bool = False,
) -> Placed:
    """The location, URL fragment and ref of what ``cut`` returned from ``page``.

    ``version`` is the content hash the ref records; ``named`` says the definition was asked
    for by name (its location then names it rather than its lines).
    """
    if cut.kind is RefKind.DOC:
        anchor = cut.block.anchor if cut.block else ""
        location = f"{page}#{anchor}" if anchor else page
        if cut.scope == "lines":
            # The lines asked for; the URL and the ref point at the section holding them.
            location = f"{page}#{line_fragment(cut.start_line, cut.end_line)}"
        return Placed(
            location, anchor, Ref(source, RefKind.DOC, doc.path, anchor, cut.start_line, version)
        )
    if cut.kind is RefKind.CODE:
        block_anchor = cut.block.anchor if cut.block else ""
        ref = Ref(source, RefKind.CODE, doc.path, block_anchor, cut.anchor_line, version)
        return Placed(code_location(doc, page, cut, named), f"L{cut.anchor_line}", ref)
    return Placed(page, "", Ref(source, RefKind.FILE, doc.path, "", cut.anchor_line, version))


def code_location(doc: SourceDocument, page: str, cut: Cut, named: bool = False) -> str:
    """The location of what a code cut returned: the file, the lines, or (asked for by name)
    the definition's name, or its lines when another definition shares that name."""
    if cut.scope == "file":
        return page
    if named and cut.block is not None and cut.block.symbol is not None:
        return f"{page}#{definition_fragment(doc, cut.block)}"
    return f"{page}#{line_fragment(cut.start_line, cut.end_line)}"


def anchored_url(url: str, anchor: str) -> str:
    """``url`` pointing at ``anchor`` (no fragment when either is empty)."""
    return f"{url}#{anchor}" if url and anchor else url


def content_outcome(
    cut: Cut,
    *,
    source: str,
    provider: str,
    location: str,
    requested: str,
    url: str,
    total_lines: int,
    doc_version: str,
    resolution: Resolution,
    ref_id: str,
    revision_skew: bool = False,
    source_revision: str = "",
) -> ContentOutcome:
    """The GetContent answer for ``cut``, with the id of the trace that produced it."""
    return ContentOutcome(
        location=location,
        requested_location=requested,
        url=url,
        source=source,
        content=cut.content,
        ranges=cut.ranges,
        truncated=cut.truncated,
        total_lines=total_lines,
        doc_version=doc_version,
        resolution=resolution,
        ref_id=ref_id,
        kind=cut.kind,
        title=cut.title,
        start_line=cut.start_line,
        end_line=cut.end_line,
        provider=provider,
        revision_skew=revision_skew,
        source_revision=source_revision,
        section_path=cut.section_path,
        trace_id=telemetry.current_trace_id(),
        scope=cut.scope,
        symbol=cut.symbol,
        context=cut.context,
    )
