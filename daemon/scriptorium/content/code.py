"""GetContent for code: definitions, exact lines, and snippets the size of a definition.

An agent that found a function wants that function, not twenty lines centred on it (half of
them the previous definition) nor the whole file. So a code cut is shaped by the definition
blocks the extractor made: SNIPPET returns the definition the anchor sits in when it fits the
budget, DEFINITION adds the signatures of the definitions around it, and exact line ranges
come back exactly as asked. FULL stays the whole file.
"""

from __future__ import annotations

from scriptorium import limits, telemetry
from scriptorium.content.cut import Cut, block_for_line, slice_lines
from scriptorium.domain.model import Block, RefKind, SourceDocument
from scriptorium.domain.outcomes import RangeMark
from scriptorium.text.code import interesting_code_ranges

SNIPPET_BUDGET = limits.CODE_SNIPPET_LINES
# A signature longer than this (a very long parameter list) is cut after its first line.
MAX_SIGNATURE_LINES = 12


def definition_at(doc: SourceDocument, line: int) -> Block | None:
    """The innermost definition (a block with a symbol) containing ``line``."""
    best: Block | None = None
    for block in doc.blocks:
        if block.symbol is None or not block.start_line <= line <= block.end_line:
            continue
        if best is None or block.end_line - block.start_line < best.end_line - best.start_line:
            best = block
    return best


def enclosing(doc: SourceDocument, inner: Block) -> list[Block]:
    """The definitions around ``inner`` (a method's class), outermost first."""
    found = [
        b
        for b in doc.blocks
        if b.symbol is not None
        and b is not inner
        and b.level < inner.level
        and b.start_line <= inner.start_line
        and inner.end_line <= b.end_line
        and inner.section_path[: len(b.section_path)] == b.section_path
    ]
    return sorted(found, key=lambda b: b.level)


def signature_rows(lines: list[str], block: Block, language: str | None) -> tuple[int, int]:
    """First and last line of a definition's signature: decorators and comments skipped, up to
    the line that opens the body (``:`` in Python, ``{`` elsewhere)."""
    comment = ("#",) if language == "python" else ("//", "/*", "*")
    row = block.start_line
    while row < block.end_line:
        text = lines[row - 1].strip()
        if not text or text.startswith(comment):
            row += 1
        elif text.startswith("@"):
            depth = _depth(text)
            row += 1
            while depth > 0 and row < block.end_line:
                depth += _depth(lines[row - 1])
                row += 1
        else:
            break
    first, depth = row, 0
    last = min(block.end_line, first + MAX_SIGNATURE_LINES - 1)
    for current in range(first, last + 1):
        text = lines[current - 1].split("#", 1)[0] if language == "python" else lines[current - 1]
        depth += _depth(text)
        stripped = text.rstrip()
        if depth <= 0 and (stripped.endswith(":") or "{" in stripped):
            return first, current
    return first, first


def _depth(text: str) -> int:
    """Open parentheses and brackets on a line, less the closed ones (a body's ``{`` is not
    counted: it ends a signature)."""
    return text.count("(") + text.count("[") - text.count(")") - text.count("]")


def _labels(doc: SourceDocument, block: Block | None) -> tuple[str, list[str]]:
    if block is None:
        return doc.path, [doc.path]
    return block.title, list(block.section_path)


def _cut(
    doc: SourceDocument,
    lines: list[str],
    span: tuple[int, int],
    max_lines: int,
    anchor: int,
    scope: str,
) -> Cut:
    """Lines ``span`` (capped at ``max_lines``) labelled by the block and definition at
    ``anchor``."""
    content, first, last, truncated = slice_lines(lines, span[0], span[1], max_lines)
    definition = definition_at(doc, anchor)
    block = definition or block_for_line(doc, anchor)
    title, section = _labels(doc, block)
    symbol = definition.anchor if definition else ""
    return Cut(
        content,
        first,
        last,
        truncated,
        [],
        title,
        section,
        RefKind.CODE,
        block,
        anchor,
        scope,
        symbol,
    )


@telemetry.traced(telemetry.CUT, telemetry.describe_cut)
def cut_code(
    doc: SourceDocument, lines: list[str], anchor_line: int, mode: str, max_lines: int
) -> Cut:
    """A code ref at ``anchor_line``: its definition or a window (snippet), the definition with
    its parents' signatures (definition), or the file (full, multi_range)."""
    anchor_line = max(1, min(anchor_line, max(len(lines), 1)))
    if mode == "snippet":
        return cut_snippet(doc, lines, anchor_line, max_lines)
    if mode == "definition":
        return cut_definition(doc, lines, anchor_line, max_lines)
    return cut_file_around(doc, lines, anchor_line, mode, max_lines)


def cut_snippet(doc: SourceDocument, lines: list[str], anchor: int, max_lines: int) -> Cut:
    """The definition the anchor sits in when it fits the budget; else a window of the budget
    inside that definition, or (outside every definition) one that starts after the previous
    definition ends."""
    budget = min(max_lines, SNIPPET_BUDGET)
    definition = definition_at(doc, anchor)
    if definition is not None and definition.end_line - definition.start_line < budget:
        span = (definition.start_line, definition.end_line)
        return _cut(doc, lines, span, max_lines, anchor, "definition")
    low, high = (definition.start_line, definition.end_line) if definition else (1, len(lines))
    start = max(low, min(anchor - budget // 2, high - budget + 1))
    if definition is None:
        start = _after_previous(doc, lines, start, anchor)
    cut = _cut(doc, lines, (start, min(high, start + budget - 1)), max_lines, anchor, "window")
    # The window shows part of a longer definition: say so.
    cut.truncated = cut.truncated or definition is not None
    return cut


def _after_previous(doc: SourceDocument, lines: list[str], start: int, anchor: int) -> int:
    """``start`` moved past every definition that contains it and ends before ``anchor``, and
    past the blank lines after it."""
    moved = start
    for block in doc.blocks:
        if block.symbol is not None and block.start_line <= moved <= block.end_line < anchor:
            moved = block.end_line + 1
    while start < moved < anchor and not lines[moved - 1].strip():
        moved += 1
    return min(moved, anchor)


def cut_definition(doc: SourceDocument, lines: list[str], anchor: int, max_lines: int) -> Cut:
    """The innermost definition around ``anchor``, preceded by its parents' signature lines;
    outside every definition, the snippet window."""
    definition = definition_at(doc, anchor)
    if definition is None:
        return cut_snippet(doc, lines, anchor, max_lines)
    return definition_with_context(doc, lines, definition, max_lines)


def definition_with_context(
    doc: SourceDocument, lines: list[str], definition: Block, max_lines: int
) -> Cut:
    """``definition`` (capped at ``max_lines``) after the signatures of the definitions around
    it, each of which ``context`` names."""
    context: list[RangeMark] = []
    head: list[str] = []
    for parent in enclosing(doc, definition):
        first, last = signature_rows(lines, parent, doc.language)
        last = min(last, definition.start_line - 1)
        if first <= last:
            context.append(RangeMark(first, last, parent.anchor))
            head.extend(lines[first - 1 : last])
    span = (definition.start_line, definition.end_line)
    cut = _cut(doc, lines, span, max_lines, definition.start_line, "definition")
    cut.content = "\n".join([*head, cut.content]) if head else cut.content
    cut.context = context
    return cut


@telemetry.traced(telemetry.CUT, telemetry.describe_cut)
def cut_symbol(
    doc: SourceDocument, lines: list[str], definition: Block, mode: str, max_lines: int
) -> Cut:
    """A symbol location: the definition itself (snippet), with its parents' signatures
    (definition), or the file cut around it (full, multi_range)."""
    if mode == "snippet":
        span = (definition.start_line, definition.end_line)
        return _cut(doc, lines, span, max_lines, definition.start_line, "definition")
    if mode == "definition":
        return definition_with_context(doc, lines, definition, max_lines)
    return cut_file_around(doc, lines, definition.start_line, mode, max_lines)


@telemetry.traced(telemetry.CUT, telemetry.describe_cut)
def cut_lines(
    doc: SourceDocument, lines: list[str], span: tuple[int, int], mode: str, max_lines: int
) -> Cut:
    """Exactly the lines asked for (the end clamped to the file); multi_range highlights the
    ranges inside them."""
    start, end = span[0], min(span[1], len(lines))
    cut = _cut(doc, lines, (start, end), max_lines, start, "lines")
    if mode == "multi_range":
        cut.ranges = _ranges_within(doc, lines, start, cut.start_line, cut.end_line)
    return cut


def cut_file_around(
    doc: SourceDocument, lines: list[str], anchor: int, mode: str, max_lines: int
) -> Cut:
    """The whole file; one longer than ``max_lines`` is cut around the anchor, not from line 1."""
    total = len(lines)
    start = 1 if total <= max_lines else max(1, min(anchor - max_lines // 2, total - max_lines + 1))
    cut = _cut(doc, lines, (start, total), max_lines, anchor, "file")
    cut.truncated = cut.truncated or start > 1
    if mode == "multi_range":
        cut.ranges = _ranges_within(doc, lines, anchor, cut.start_line, cut.end_line)
    return cut


def _ranges_within(
    doc: SourceDocument, lines: list[str], anchor: int, first: int, last: int
) -> list[RangeMark]:
    return [
        RangeMark(r_start, min(r_end, last), reason)
        for r_start, r_end, reason in interesting_code_ranges(lines, doc.language or "", anchor)
        if first <= r_start <= last
    ]
