"""GetContent's OUTLINE mode: a document's headings or a code file's definitions, with sizes.

A cheap first look before fetching: each entry says where a heading block or a definition sits
(its line range, lines and characters) and gives a location to fetch exactly it. Entries come
from the blocks the extractors cut at index time, so they match what search returns: heading
blocks for docs (each runs to the next heading of the same or higher level), definitions for
code (decorators and body included), whose ``path#Lstart-Lend`` location fetches exactly those
lines. The preamble before a document's first heading and the line windows code extractors cut
between definitions are not entries.
"""

from __future__ import annotations

from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument
from scriptorium.domain.outcomes import ContentOutcome, OutlineEntry
from scriptorium.domain.refs import Ref


def _chars(lines: list[str], start: int, end: int) -> int:
    """Characters of lines ``start..end`` (1-based, inclusive) joined by newlines."""
    chosen = lines[start - 1 : end]
    return sum(map(len, chosen)) + max(0, len(chosen) - 1)


def _entry(block: Block, doc: SourceDocument, lines: list[str], page: str) -> OutlineEntry:
    end = min(block.end_line, len(lines))
    if block.kind is RefKind.DOC:
        kind, location = "heading", f"{page}#{block.anchor}"
    else:
        kind, location = block.symbol_kind or "definition", f"{page}#L{block.start_line}-L{end}"
    ref = Ref(doc.source, block.kind, doc.path, block.anchor, block.start_line, doc.content_hash)
    return OutlineEntry(
        kind=kind,
        title=block.title,
        level=block.level,
        location=location,
        ref_id=ref.encode(),
        start_line=block.start_line,
        end_line=end,
        lines=end - block.start_line + 1,
        chars=_chars(lines, block.start_line, end),
        section_path=list(block.section_path),
    )


def _wanted(block: Block, doc: SourceDocument) -> bool:
    if doc.corpus is Corpus.CODE:
        return block.kind is RefKind.CODE and bool(block.symbol)
    return block.kind is RefKind.DOC and bool(block.anchor)


def outline_entries(doc: SourceDocument, lines: list[str], page: str) -> list[OutlineEntry]:
    """The outline of ``doc`` in line order; ``page`` is its (qualified) location."""
    blocks = sorted(
        (b for b in doc.blocks if _wanted(b, doc)), key=lambda b: (b.start_line, -b.end_line)
    )
    return [_entry(block, doc, lines, page) for block in blocks]


def as_outline(out: ContentOutcome, doc: SourceDocument, lines: list[str]) -> ContentOutcome:
    """A resolved answer turned into the outline of its whole document (content left empty)."""
    page = out.location.split("#", 1)[0]
    out.outline = outline_entries(doc, lines, page)
    out.location = page
    out.content = ""
    out.ranges = []
    out.truncated = False
    out.start_line, out.end_line = (1, len(lines)) if lines else (0, 0)
    out.title = doc.meta.title or doc.path
    out.section_path = [out.title]
    code = doc.corpus is Corpus.CODE
    out.kind = RefKind.FILE if code else RefKind.DOC
    out.scope, out.symbol, out.context = ("file" if code else "page"), "", []
    return out
