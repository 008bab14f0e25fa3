"""Line-level structure of Markdown: fences, headings, lists, labelled steps, paragraphs.

Kept whole past 500 lines: the patterns and the passes over them agree on what is a fence, a
heading and a list item only while they sit together; split, the three users would drift.

One pure, regex-driven pass per question, shared by the Markdown extractor (heading blocks),
GetContent (MULTI_RANGE highlights) and SummarizeFlow (step candidates), so all three agree
on what is code, what is a heading and what is a step. It is deliberately not a full CommonMark
parser: it only needs the block structure, and it must stay fast on large documents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from scriptorium.text import compiled
from scriptorium.text.slugs import strip_inline_markup

# -- patterns ---------------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_ATTR_LIST = re.compile(r"[ \t]*\{:?([^{}]*)\}[ \t]*$")
_ATTR_TOKEN = re.compile(r"""#([^\s#.{}=]+)|\.[^\s#.{}=]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+)""")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_BULLET = re.compile(r"^([ \t]*)([-*+])[ \t]+(?=\S)")
_ORDERED = re.compile(r"^([ \t]*)(\d{1,9})[.)][ \t]+(?=\S)")
_MARKER_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+|\d{1,9}[.)][ \t]+|#{1,6}[ \t]+)?")
_BLOCK_START = re.compile(r"^ {0,3}(?:>|///|!!!|\?\?\?|<[A-Za-z/!])")
_HTML_LINE = re.compile(r"^\s*<[^>]*>\s*$|^\s*<!--|^\s*</?[A-Za-z][\w-]*(?:\s[^>]*)?>\s*$")
_NON_PROSE = re.compile(r"^\s*(?:///|!!!|\?\?\?|\{\*|\{!|\||!\[[^\]]*\]\([^)]*\)\s*$)")
_NUMBER = r"(?:\d+|[一二三四五六七八九十百]+)"
_LABEL_END = r"(?=$|[\s:：.．)）、,，\-—–*_])"
_LABEL_WORD = r"(?:step|手順|ステップ|步骤|步驟)[ \t]*" + _NUMBER
_LABEL_ORDINAL = r"第[ \t]*" + _NUMBER + r"[ \t]*[步歩]"
_LABEL = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]*|[-*+][ \t]+)?(?:\*\*|__)?[ \t]*"
    rf"(?:{_LABEL_WORD}|{_LABEL_ORDINAL}){_LABEL_END}",
    re.IGNORECASE,
)
_ENDS_SENTENCE = re.compile(r"(?:^|[.!?:;。！？：；])$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])")

# First characters (after leading whitespace) a line needs for any block pattern to match it;
# decimal digits (of every script, as ``\d`` counts them) open ordered list items too.
_LIST_FIRST = frozenset("-*+")
_BLOCK_FIRST = frozenset("#=-*+_>/!?<{|")

TITLE_CHARS = 80
# A sentence that introduces code ends with a colon; the step carries that many of its lines.
_INTRODUCES = re.compile(r"[:：]\s*$")
INTRODUCED_CODE_LINES = 12
DESCRIPTION_CHARS = 300
MAX_PARAGRAPH_ITEMS = 8
# Longer lines are minified or generated text; only their start is worth reading.
MAX_LINE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Heading:
    """One ATX or setext heading; ``line_no`` is 1-based, ``line_count`` includes an underline."""

    line_no: int
    level: int
    text: str
    custom_id: str | None = None
    line_count: int = 1


@dataclass(frozen=True, slots=True)
class FlowItem:
    """A step candidate for SummarizeFlow; ``origin`` names the rule that found it."""

    origin: str
    title: str
    description: str
    line_no: int
    # The fenced code block the item's sentence introduces ("" when none).
    code: str = ""


# -- small helpers ----------------------------------------------------------------------------


def _indent(line: str) -> int:
    if line[:1] not in (" ", "\t"):  # most lines: no indentation to measure
        return 0
    lead = len(line) - len(line.lstrip(" \t"))
    if "\t" not in line[:lead]:
        return lead
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _blank(line: str) -> bool:
    return not line.strip()


def collapse(text: str) -> str:
    """All whitespace runs become one space."""
    return " ".join(text.split())


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def first_sentence(text: str, limit: int = TITLE_CHARS) -> str:
    """The first sentence of ``text`` (whitespace collapsed), cut to about ``limit`` characters."""
    text = collapse(text)
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
    return _cap(sentence.strip(), limit)


def _clean(line: str) -> str:
    return _MARKER_PREFIX.sub("", line, count=1).strip()


# -- fenced code ------------------------------------------------------------------------------


# The compiled line loops (``native/``), or None: the Python ones below are the reference.
_native = compiled.markdown_lines()


def fenced_code_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """0-based inclusive index ranges of fenced code blocks, fence lines included.

    A fence opens with three or more backticks or tildes indented at most three spaces (deeper
    inside list items, where MkDocs content is indented four) and closes with a line of the
    same character at least as long; an unclosed fence runs to the end. Admonition markers
    such as ``/// tip`` are not fences.
    """
    if _native is not None:
        found = _native.fenced_code_spans(lines)
        if found is not None:
            return found
    return _fenced_code_spans(lines)


def _fenced_code_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    opened: tuple[int, str, int, int] | None = None  # start, char, length, indent
    in_list = False
    after_blank = False
    for index, line in enumerate(lines):
        if opened is None:
            # Every pattern below starts after spaces and tabs, so the first other character
            # decides which of them can match at all.
            first = line.lstrip(" \t")[:1]
            if first == "`" or first == "~":
                match = _FENCE_OPEN.match(line)
                indent = _indent(line)
                if match and (indent <= 3 or in_list):
                    fence = match.group(2)
                    if fence[0] != "`" or "`" not in match.group(3):
                        opened = (index, fence[0], len(fence), indent)
                        continue
            if not line.strip():
                after_blank = True
                continue
            if first in _LIST_FIRST or first.isdecimal():
                if _BULLET.match(line) or _ORDERED.match(line):
                    in_list = True
                elif after_blank and _indent(line) < 2:
                    in_list = False
            elif after_blank and _indent(line) < 2:
                in_list = False
            after_blank = False
            continue
        close = _FENCE_CLOSE.match(line)
        if (
            close
            and close.group(1)[0] == opened[1]
            and len(close.group(1)) >= opened[2]
            and _indent(line) <= max(3, opened[3] + 3)
        ):
            spans.append((opened[0], index))
            opened = None
            after_blank = False
    if opened is not None:
        spans.append((opened[0], len(lines) - 1))
    return spans


def fenced_code_mask(lines: Sequence[str]) -> list[bool]:
    """For every line, whether it belongs to a fenced code block (fence lines included)."""
    mask = [False] * len(lines)
    for start, end in fenced_code_spans(lines):
        for index in range(start, end + 1):
            mask[index] = True
    return mask


# -- headings ---------------------------------------------------------------------------------


def split_attr_list(text: str) -> tuple[str, str | None]:
    """Split a trailing MkDocs attribute list (``{ #id .class key=value }``) off heading text.

    Returns the text without it and the declared id (None when there is none). Braces that are
    not a well-formed attribute list are left alone.
    """
    # The list holds no brace, so it opens at the last one: the pattern is tried there only
    # (every heading of a MkDocs page has a list, and trying each position was most of this).
    brace = text.rfind("{")
    match = _ATTR_LIST.match(text, brace) if brace >= 0 else None
    if match is None:
        return text, None
    inner = match.group(1)
    tokens = list(_ATTR_TOKEN.finditer(inner))
    if not tokens or _ATTR_TOKEN.sub("", inner).strip():
        return text, None
    ids = [token.group(1) for token in tokens if token.group(1)]
    return text[: match.start()].rstrip(), (ids[-1] if ids else None)


def without_attr_lists(lines: Sequence[str]) -> list[str]:
    """``lines`` with each ATX heading's trailing attribute list (``{ #id }``) left out: what a
    preview shows of them. MkDocs sites give every heading one, and in a window of about 200
    characters each took a sixth of the text."""
    return [
        split_attr_list(line.rstrip())[0] if "{" in line and _ATX.match(line) else line
        for line in lines
    ]


def _heading_text(raw: str) -> tuple[str, str | None]:
    text = raw.strip()[:MAX_LINE_CHARS]
    custom_id = None
    if "#" in text or "{" in text:  # closing hashes and attribute lists need one of them
        text = _without_closing_hashes(text)
        text, custom_id = split_attr_list(text)
        text = _without_closing_hashes(text)
    return collapse(strip_inline_markup(text)), custom_id


def _without_closing_hashes(text: str) -> str:
    """``text`` without an ATX heading's closing hashes (asked of the pattern only when it
    ends with one: the search costs a microsecond or two a call, and headings are many)."""
    if not text.rstrip(" \t").endswith("#"):
        return text
    return _CLOSING_HASHES.sub("", text)


def _opens_list(line: str) -> bool:
    return bool(_BULLET.match(line) or _ORDERED.match(line)) and _indent(line) <= 3


def parse_headings(lines: Sequence[str], *, first_line_no: int = 1) -> list[Heading]:
    """ATX and setext headings outside fenced code, in document order.

    ``lines[0]`` is line ``first_line_no``. Empty headings without a custom id are skipped.
    A setext underline only counts after a plain paragraph (not a list item, quote or HTML).
    """
    return _parse_headings(lines, first_line_no, fenced_code_mask(lines))


def _parse_headings(
    lines: Sequence[str], first_line_no: int, mask: Sequence[bool]
) -> list[Heading]:
    if _native is not None:
        marks = _native.heading_marks(lines, mask)
        if marks is not None:
            return _headings_from(marks, lines, first_line_no)
    return _py_parse_headings(lines, first_line_no, mask)


def _headings_from(
    marks: list[tuple[int, int, str | int]], lines: Sequence[str], first_line_no: int
) -> list[Heading]:
    """Headings from the compiled pass's marks: ``(row, level, text after the hashes)`` for
    an ATX heading, ``(row, level, first row)`` for a setext one."""
    headings: list[Heading] = []
    for index, level, found in marks:
        if isinstance(found, str):
            text, custom_id = _heading_text(found)
            if text or custom_id:
                headings.append(Heading(first_line_no + index, level, text, custom_id))
            continue
        raw = " ".join(part.strip() for part in lines[found:index])
        text, custom_id = _heading_text(raw)
        if text or custom_id:
            span = index - found + 1
            headings.append(Heading(first_line_no + found, level, text, custom_id, span))
    return headings


def _py_parse_headings(
    lines: Sequence[str], first_line_no: int, mask: Sequence[bool]
) -> list[Heading]:
    headings: list[Heading] = []
    para_start: int | None = None
    in_list = False
    for index, line in enumerate(lines):
        if mask[index]:
            para_start, in_list = None, False
            continue
        body = line.lstrip()
        if not body:
            para_start, in_list = None, False
            continue
        first = body[0]
        if first not in _BLOCK_FIRST and not first.isdecimal():
            # Prose: no heading, underline, list item, rule, block opener or markup line.
            if para_start is None and not in_list:
                para_start = None if _indent(line) >= 4 else index
            continue
        atx = _ATX.match(line)
        if atx:
            text, custom_id = _heading_text(atx.group(2))
            if text or custom_id:
                level = len(atx.group(1))
                headings.append(Heading(first_line_no + index, level, text, custom_id))
            para_start, in_list = None, False
            continue
        underline = _SETEXT.match(line)
        if underline and para_start is not None and not in_list:
            raw = " ".join(part.strip() for part in lines[para_start:index])
            text, custom_id = _heading_text(raw)
            if text or custom_id:
                level = 1 if underline.group(1)[0] == "=" else 2
                span = index - para_start + 1
                headings.append(Heading(first_line_no + para_start, level, text, custom_id, span))
            para_start = None
            continue
        if _opens_list(line):
            para_start, in_list = None, True
            continue
        if in_list:
            continue
        if _THEMATIC.match(line) or _BLOCK_START.match(line) or _NON_PROSE.match(line):
            para_start = None
            continue
        if para_start is None:
            para_start = None if _indent(line) >= 4 else index
    return headings


# -- lists ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Item:
    kind: str  # "ordered" or "bullet"
    start: int  # 0-based inclusive
    end: int
    group: int  # items of one list share a group


def _item_kind(line: str) -> tuple[str, int] | None:
    if _THEMATIC.match(line):
        return None
    match = _ORDERED.match(line)
    if match:
        return "ordered", _indent(match.group(1))
    match = _BULLET.match(line)
    if match:
        return "bullet", _indent(match.group(1))
    return None


def _interrupts(line: str) -> bool:
    return bool(
        _ATX.match(line)
        or (_FENCE_OPEN.match(line) and _indent(line) <= 3)
        or _THEMATIC.match(line)
        or _BLOCK_START.match(line)
    )


def _list_items(lines: Sequence[str], mask: Sequence[bool]) -> list[_Item]:
    """Top-level list items with their continuation lines (nested lists belong to the item)."""
    items: list[_Item] = []
    group = 0
    count = len(lines)
    index = 0
    while index < count:
        found = None if mask[index] else _item_kind(lines[index])
        if found is None or found[1] > 3:
            index += 1
            continue
        kind, base = found
        group += 1
        while True:
            end = index
            cursor = index + 1
            after_blank = False
            sibling = None
            while cursor < count:
                line = lines[cursor]
                if _blank(line):
                    after_blank = True
                    cursor += 1
                    continue
                indent = _indent(line)
                if indent >= base + 2:
                    end, after_blank = cursor, False
                    cursor += 1
                    continue
                sibling = None if mask[cursor] else _item_kind(line)
                if sibling is not None or mask[cursor] or after_blank or _interrupts(line):
                    break
                end = cursor
                cursor += 1
            items.append(_Item(kind, index, end, group))
            if sibling is not None and sibling[0] == kind and sibling[1] <= 3 and cursor < count:
                index, base = cursor, sibling[1]
                continue
            index = max(cursor, end + 1)
            break
    return items


class _Structure:
    """The block structure of one run of lines, computed once and queried by the analyses."""

    def __init__(self, lines: Sequence[str], first_line_no: int) -> None:
        self.lines = lines
        self.first = first_line_no
        self.mask = fenced_code_mask(lines)
        self.headings = _parse_headings(lines, first_line_no, self.mask)
        # Row -> heading text on a heading's first row, "" on its other rows (setext underline).
        self.heading_rows: dict[int, str] = {}
        for heading in self.headings:
            row = heading.line_no - first_line_no
            self.heading_rows[row] = heading.text
            for extra in range(row + 1, row + heading.line_count):
                self.heading_rows[extra] = ""
        self.items = _list_items(lines, self.mask)

    def nested_headings(self) -> list[Heading]:
        return [h for h in self.headings if h.line_no > self.first]

    def text(self, start: int, end: int) -> str:
        """Prose of rows ``start..end`` on one line: no code, no markers, no markup.

        A paragraph's lines are joined before its markup is read: a code span or emphasis
        that wraps a line is one span, not two halves that pair with their neighbours."""
        parts: list[str] = []
        run: list[str] = []

        def paragraph_ends() -> None:
            if run:
                parts.append(strip_inline_markup(" ".join(run)))
                run.clear()

        for row in range(start, end + 1):
            line = self.lines[row]
            if row in self.heading_rows:
                paragraph_ends()
                heading = self.heading_rows[row]
                parts.append(heading if _ENDS_SENTENCE.search(heading) else f"{heading}.")
            elif not (self.mask[row] or _blank(line) or _NON_PROSE.match(line)):
                run.append(_clean(line[:MAX_LINE_CHARS]))
            else:
                paragraph_ends()
        paragraph_ends()
        return collapse(" ".join(part for part in parts if part))

    def introduced_code(self, start: int, end: int) -> str:
        """The fenced code the prose of rows ``start..end`` introduces ("You can set timeouts
        for an individual request:"), as a fenced block: the first fence inside the rows or
        right after them (blank rows between) whose prose just before ends with a colon."""
        for first, last in fenced_code_spans(self.lines):
            if first <= start:
                continue
            if first > end + 1 and any(not _blank(self.lines[r]) for r in range(end + 1, first)):
                break
            before = first - 1
            while before >= start and _blank(self.lines[before]):
                before -= 1
            if before < start or self.mask[before] or not _INTRODUCES.search(self.lines[before]):
                continue
            fence = self.lines[first].strip()
            closed = last > first and self.lines[last].strip().startswith(fence[:3])
            body = list(self.lines[first + 1 : last if closed else last + 1])
            indent = min((_indent(b) for b in body if not _blank(b)), default=0)
            body = [b[indent:].rstrip() for b in body]
            if len(body) > INTRODUCED_CODE_LINES:
                body = [*body[:INTRODUCED_CODE_LINES], "…"]
            return "\n".join([fence, *body, fence[:3]])
        return ""

    def paragraph_end(self, start: int) -> int:
        """Last row of the paragraph that starts at ``start``."""
        end = start
        for row in range(start + 1, len(self.lines)):
            if self.mask[row] or _blank(self.lines[row]) or row in self.heading_rows:
                break
            end = row
        return end

    def labelled_sections(self) -> list[tuple[int, int]]:
        """(start, end) of each labelled step: the label line up to the next label or heading."""
        starts = [
            row
            for row, line in enumerate(self.lines)
            if not self.mask[row] and _LABEL.match(line) is not None
        ]
        sections: list[tuple[int, int]] = []
        for position, start in enumerate(starts):
            limit = starts[position + 1] if position + 1 < len(starts) else len(self.lines)
            end = start
            for row in range(start + 1, limit):
                if self.heading_rows.get(row):
                    break
                if not _blank(self.lines[row]):
                    end = row
            sections.append((start, end))
        return sections

    def paragraphs(self) -> list[tuple[int, int]]:
        """(start, end) of each run of prose rows outside code, headings and markup-only lines."""
        runs: list[tuple[int, int]] = []
        start: int | None = None
        for row, line in enumerate(self.lines):
            prose = not (
                self.mask[row]
                or _blank(line)
                or row in self.heading_rows
                or _NON_PROSE.match(line)
                or _HTML_LINE.match(line)
                or _THEMATIC.match(line)
                or _SETEXT.match(line)
            )
            if prose and start is None:
                start = row
            elif not prose and start is not None:
                runs.append((start, row - 1))
                start = None
        if start is not None:
            runs.append((start, len(self.lines) - 1))
        return runs


# -- public analyses --------------------------------------------------------------------------


def interesting_ranges(lines: Sequence[str], first_line_no: int) -> list[tuple[int, int, str]]:
    """Flow-relevant line ranges of a block for GetContent MULTI_RANGE highlights.

    ``lines[0]`` is line ``first_line_no``; ranges are 1-based and inclusive with a reason:
    ordered-list, bullet-list, nested-heading, labelled-step or code-block. Ranges with the
    same reason never overlap; the list is sorted by start line.
    """
    doc = _Structure(lines, first_line_no)
    ranges: list[tuple[int, int, str]] = []
    lists: dict[int, list[_Item]] = {}
    for item in doc.items:
        lists.setdefault(item.group, []).append(item)
    for members in lists.values():
        reason = "ordered-list" if members[0].kind == "ordered" else "bullet-list"
        ranges.append((members[0].start, members[-1].end, reason))
    for heading in doc.nested_headings():
        row = heading.line_no - first_line_no
        ranges.append((row, row + heading.line_count - 1, "nested-heading"))
    ranges.extend((s, e, "labelled-step") for s, e in doc.labelled_sections())
    ranges.extend((s, e, "code-block") for s, e in fenced_code_spans(lines))
    return sorted((s + first_line_no, e + first_line_no, reason) for s, e, reason in ranges)


def _flow_item(origin: str, title: str, text: str, line_no: int, code: str = "") -> FlowItem | None:
    if not text:
        return None
    title = first_sentence(title or text)
    return FlowItem(origin, title, _cap(text, DESCRIPTION_CHARS), line_no, code)


def flow_candidates(lines: Sequence[str], first_line_no: int) -> list[FlowItem]:
    """Step candidates for a flow summary, from the highest-priority kind that has two or more.

    Priority: numbered list items, labelled steps (``Step 1``, ``手順1``, ``第1步``, ...), bullet
    items, nested headings, then the first sentence of up to eight paragraphs as a fallback.
    ``title`` is the item's first sentence (a heading's text when the item is a heading) and
    ``description`` the item's whole prose on one line.
    """
    doc = _Structure(lines, first_line_no)

    def keep(found: Iterable[FlowItem | None]) -> list[FlowItem]:
        return [item for item in found if item is not None]

    def list_items(kind: str, origin: str) -> list[FlowItem]:
        return keep(
            _flow_item(
                origin,
                "",
                doc.text(i.start, i.end),
                first_line_no + i.start,
                doc.introduced_code(i.start, i.end),
            )
            for i in doc.items
            if i.kind == kind
        )

    def labelled() -> list[FlowItem]:
        return keep(
            _flow_item(
                "labelled",
                doc.heading_rows.get(s) or doc.text(s, doc.paragraph_end(s)),
                doc.text(s, e),
                first_line_no + s,
                doc.introduced_code(s, e),
            )
            for s, e in doc.labelled_sections()
        )

    def headings() -> list[FlowItem]:
        nested = doc.nested_headings()
        if not nested:
            return []
        stops = [h.line_no - first_line_no for h in nested[1:]]
        stops.append(len(lines))
        return keep(
            _flow_item(
                "heading",
                h.text,
                doc.text(h.line_no - first_line_no, stop - 1),
                h.line_no,
                doc.introduced_code(h.line_no - first_line_no, stop - 1),
            )
            for h, stop in zip(nested, stops, strict=True)
        )

    for produce in (
        lambda: list_items("ordered", "numbered"),
        labelled,
        lambda: list_items("bullet", "bullet"),
        headings,
    ):
        candidates = produce()
        if len(candidates) >= 2:
            return candidates
    paragraphs = keep(
        _flow_item("paragraph", "", doc.text(s, e), first_line_no + s, doc.introduced_code(s, e))
        for s, e in doc.paragraphs()
    )
    return paragraphs[:MAX_PARAGRAPH_ITEMS]


# Include directives of the documentation toolchains: ``{* path *}``, ``{! path !}`` and
# ``--8<-- "path"`` (snippets).
INCLUDE_DIRECTIVE = re.compile(
    r"\{\*\s*([^\s*]+)[^*]*\*\}|\{!\s*([^\s!]+)\s*!\}|--8<--\s*\"([^\"]+)\""
)


@lru_cache(maxsize=1024)
def _include_tail(include: str) -> str:
    return "/".join(p for p in PurePosixPath(include).parts if p not in ("..", "."))


def includes_in(text: str) -> list[str]:
    """Code files a Markdown document includes, as path tails without ``..`` segments."""
    # A page holding none of what every match of ``INCLUDE_DIRECTIVE`` starts with is not
    # scanned (a substring test is about five times cheaper than the scan; a third of the
    # FastAPI pages include nothing). Spelled out, not a loop over a tuple: asked of every
    # page a build adds.
    if "{*" not in text and "{!" not in text and "--8<--" not in text:
        return []
    return [
        _include_tail(next(g for g in m.groups() if g)) for m in INCLUDE_DIRECTIVE.finditer(text)
    ]
