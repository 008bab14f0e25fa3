"""GetContent: cut the requested block, file or page out of a resolved document.

Markdown resolves to heading blocks (a block includes its nested headings); code is cut in
``content.code`` (definitions, exact lines, definition-sized snippets); file refs to the whole
file. Content is served from the indexed
revision, and the response says which revision (``doc_version``) that was.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scriptorium import limits, telemetry
from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument, innermost_block
from scriptorium.domain.outcomes import RangeMark
from scriptorium.text.markdown import interesting_ranges

DEFAULT_MAX_LINES = limits.CONTENT_MAX_LINES_DEFAULT
MAX_LINES_CAP = limits.CONTENT_MAX_LINES_CAP
DEFAULT_SNIPPET_LINES = limits.CONTENT_SNIPPET_LINES


@dataclass(slots=True)
class Cut:
    """The lines chosen for a response."""

    content: str
    start_line: int
    end_line: int
    truncated: bool
    ranges: list[RangeMark]
    title: str
    section_path: list[str]
    kind: RefKind
    block: Block | None
    anchor_line: int
    # section, page, definition, window, lines or file (see GetContentResponse.scope).
    scope: str = ""
    symbol: str = ""  # the definition returned or enclosing the anchor (code)
    context: list[RangeMark] = field(default_factory=list)  # enclosing signatures (definition)


def clamp_max_lines(value: int) -> int:
    if value <= 0:
        return DEFAULT_MAX_LINES
    return min(value, MAX_LINES_CAP)


def find_doc_block(doc: SourceDocument, anchor: str) -> Block | None:
    """The heading block with this anchor (slug), case-insensitively; "" is the whole page.

    A block's own anchor wins over another block's alias of the same spelling.
    """
    wanted = anchor.lower()
    aliased: Block | None = None
    for block in doc.blocks:
        if block.kind is not RefKind.DOC:
            continue
        if block.anchor.lower() == wanted:
            return block
        if aliased is None and any(alias.lower() == wanted for alias in block.aliases):
            aliased = block
    return aliased


def block_for_line(doc: SourceDocument, line: int) -> Block | None:
    """The innermost block containing ``line``."""
    index = innermost_block(doc.blocks, line)
    return None if index is None else doc.blocks[index]


def slice_lines(
    lines: list[str], start: int, end: int, max_lines: int
) -> tuple[str, int, int, bool]:
    """Lines ``start``..``end`` (clamped to the file), at most ``max_lines`` of them."""
    end = min(end, len(lines))
    start = max(1, min(start, end if end else 1))
    truncated = end - start + 1 > max_lines
    if truncated:
        end = start + max_lines - 1
    return "\n".join(lines[start - 1 : end]), start, end, truncated


@telemetry.traced(telemetry.CUT, telemetry.describe_cut)
def cut_doc(
    doc: SourceDocument,
    lines: list[str],
    block: Block | None,
    mode: str,
    max_lines: int,
) -> Cut:
    """A Markdown block (or the whole page when ``block`` is None)."""
    if block is None:
        start, end = 1, len(lines)
        title = doc.meta.title or doc.path
        section: list[str] = [title]
    else:
        start, end = block.start_line, block.end_line
        title = block.title
        section = list(block.section_path)
    if mode == "snippet":
        max_lines = min(max_lines, DEFAULT_SNIPPET_LINES)
    content, first, last, truncated = slice_lines(lines, start, end, max_lines)
    ranges: list[RangeMark] = []
    if mode == "multi_range":
        # Analyse the whole block (a cut may start inside a fence), then clip to the window.
        for r_start, r_end, reason in interesting_ranges(lines[start - 1 : end], start):
            if r_start <= last and r_end >= first:
                ranges.append(RangeMark(max(r_start, first), min(r_end, last), reason))
    scope = "page" if block is None else "section"
    return Cut(
        content, first, last, truncated, ranges, title, section, RefKind.DOC, block, first, scope
    )


@telemetry.traced(telemetry.CUT, telemetry.describe_cut)
def cut_doc_lines(
    doc: SourceDocument, lines: list[str], span: tuple[int, int], mode: str, max_lines: int
) -> Cut:
    """Exactly lines ``span`` of a page (the end clamped to it), labelled by the innermost
    section holding the first: a search result's ``start_line``..``end_line`` fetched as such."""
    content, first, last, truncated = slice_lines(lines, span[0], span[1], max_lines)
    block = block_for_line(doc, first)
    if block is None:
        title = doc.meta.title or doc.path
        section: list[str] = [title]
    else:
        title, section = block.title, list(block.section_path)
    ranges: list[RangeMark] = []
    if mode == "multi_range":
        for r_start, r_end, reason in interesting_ranges(lines[first - 1 : last], first):
            ranges.append(RangeMark(r_start, min(r_end, last), reason))
    return Cut(
        content, first, last, truncated, ranges, title, section, RefKind.DOC, block, first, "lines"
    )


@telemetry.traced(telemetry.CUT, telemetry.describe_cut)
def cut_file(doc: SourceDocument, lines: list[str], max_lines: int) -> Cut:
    content, first, last, truncated = slice_lines(lines, 1, len(lines), max_lines)
    title = doc.meta.title or doc.path
    kind = RefKind.FILE
    return Cut(content, first, last, truncated, [], title, [title], kind, None, 1, "file")


def is_code(doc: SourceDocument) -> bool:
    return doc.corpus is Corpus.CODE
