"""Cuts Jupyter notebooks into heading blocks and cell blocks, read with the stdlib ``json``.

A notebook's JSON is not what anyone reads, so the document's text (what GetContent returns,
what line ranges count) is the notebook rendered as Markdown: each Markdown cell's source as
it is, each code cell in a fence of the notebook's language, one blank line between cells,
outputs left out. Blocks:

* every heading of a Markdown cell is a heading block, as in a Markdown page (GitHub's slug as
  its anchor, JupyterLab's id as an alias); its extent runs to the next heading of the same or
  higher level, cells included, and its body stops at the next heading or the end of its cell;
* every code cell, and the text of a Markdown cell before its first heading, is a cell block
  anchored ``cell-N`` (N counts the notebook's cells from 1, whatever their type); a Markdown
  cell that opens with a heading answers to ``cell-N`` through that heading's block.

So ``analysis/nb.ipynb#cell-3`` names the third cell, and ``#loading-the-data`` its heading.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from typing import Any

from scriptorium.plugin import (
    Block,
    Corpus,
    DocMeta,
    Extraction,
    Heading,
    RefKind,
    SlugAllocator,
    parse_headings,
    split_lines,
)

NOTEBOOK_SUFFIXES = (".ipynb",)
# A file that is not a notebook's JSON is indexed as nothing, at this confidence.
UNREADABLE_CONFIDENCE = 0.5
DEFAULT_LANGUAGE = "python"
MAX_LEVEL = 6
TITLE_CHARS = 80
_BACKTICKS = re.compile(r"`{3,}")
_TAG = re.compile(r"<[^<>]{0,2000}>")


@dataclass(frozen=True, slots=True)
class Cell:
    """One rendered cell: its number, type and 1-based lines (fences included for code)."""

    number: int
    kind: str  # "markdown" or "code"
    start: int
    end: int


def _source(cell: dict[str, Any], key: str = "source") -> str:
    value = cell.get(key, "")
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def _cells(notebook: dict[str, Any]) -> list[tuple[str, str]]:
    """``(kind, source)`` of each cell, nbformat 4 or 3 (worksheets, heading cells)."""
    raw = notebook.get("cells")
    if raw is None and isinstance(notebook.get("worksheets"), list) and notebook["worksheets"]:
        first = notebook["worksheets"][0]
        raw = first.get("cells") if isinstance(first, dict) else None
    if not isinstance(raw, list):
        raise ValueError("no cells")
    cells: list[tuple[str, str]] = []
    for cell in raw:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        if kind == "code":
            cells.append(("code", _source(cell) or _source(cell, "input")))
        elif kind == "markdown":
            cells.append(("markdown", _source(cell)))
        elif kind == "heading":  # nbformat 3
            level = cell.get("level", 1)
            level = level if isinstance(level, int) and 1 <= level <= MAX_LEVEL else 1
            cells.append(("markdown", "#" * level + " " + _source(cell).strip()))
        else:  # raw cells are passed through by converters, not read
            cells.append(("raw", ""))
    return cells


def language_of(notebook: dict[str, Any]) -> str:
    """The notebook's language: its kernelspec's, else its language_info's, else Python."""
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        for key, field in (("kernelspec", "language"), ("language_info", "name")):
            section = metadata.get(key)
            if isinstance(section, dict) and isinstance(section.get(field), str):
                name = section[field].strip().lower()
                if name:
                    return name
    return DEFAULT_LANGUAGE


def render(cells: list[tuple[str, str]], language: str) -> tuple[str, list[Cell]]:
    """The notebook as Markdown text, and where each non-empty cell landed in it."""
    out: list[str] = []
    placed: list[Cell] = []
    for number, (kind, source) in enumerate(cells, start=1):
        lines = split_lines(source.rstrip("\n"))
        if kind == "raw" or not source.strip():
            continue
        if out:
            out.append("")
        start = len(out) + 1
        if kind == "code":
            longest = max((len(m) for m in _BACKTICKS.findall(source)), default=2)
            fence = "`" * max(3, longest + 1)
            out.extend([fence + language, *lines, fence])
        else:
            out.extend(lines)
        placed.append(Cell(number, kind, start, len(out)))
    return "\n".join(out) + ("\n" if out else ""), placed


def _jupyter_id(text: str) -> str:
    """The id JupyterLab gives a heading: its text with spaces as hyphens."""
    return text.strip().replace(" ", "-")


def _first_words(lines: list[str]) -> str:
    for line in lines:
        text = _TAG.sub("", line).strip().lstrip("#").strip()
        if text:
            return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
    return ""


class _Builder:
    """Blocks in document order, with the heading trail they sit under."""

    def __init__(self, lines: list[str], cells: list[Cell]) -> None:
        self.lines = lines
        self.blocks: list[Block] = []
        self.heading_positions: list[int] = []
        self.trail: list[tuple[int, str]] = []
        self.slugs = SlugAllocator()
        for cell in cells:
            self.slugs.reserve(f"cell-{cell.number}")

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])

    def cell_block(self, cell: Cell, start: int, end: int, body: str) -> None:
        title = f"Cell {cell.number}"
        words = _first_words(split_lines(body))
        if words:
            title = f"{title}: {words}"
        level = min((self.trail[-1][0] + 1) if self.trail else 1, MAX_LEVEL)
        path = (*(t for _, t in self.trail), title)
        anchor = f"cell-{cell.number}"
        self.blocks.append(Block(RefKind.DOC, start, end, title, path, anchor, body, level))

    def heading_block(self, heading: Heading, own_end: int, alias: str | None) -> None:
        while self.trail and self.trail[-1][0] >= heading.level:
            self.trail.pop()
        self.trail.append((heading.level, heading.text))
        if heading.custom_id:
            anchor = self.slugs.allocate(heading.custom_id, custom=True)
        else:
            anchor = self.slugs.allocate(heading.text)
        aliases = [alias] if alias else []
        jupyter = _jupyter_id(heading.text)
        if jupyter and jupyter.lower() != anchor.lower():
            aliases.append(jupyter)
        self.heading_positions.append(len(self.blocks))
        self.blocks.append(
            Block(
                kind=RefKind.DOC,
                start_line=heading.line_no,
                end_line=own_end,  # widened to the section in ``finish``
                title=heading.text or anchor,
                section_path=tuple(t for _, t in self.trail),
                anchor=anchor,
                body=self.text(heading.line_no, own_end),
                level=heading.level,
                aliases=tuple(aliases),
            )
        )

    def markdown_cell(self, cell: Cell) -> None:
        cell_lines = self.lines[cell.start - 1 : cell.end]
        headings = parse_headings(cell_lines, first_line_no=cell.start)
        first = headings[0].line_no if headings else cell.end + 1
        if first > cell.start and self.text(cell.start, first - 1).strip():
            self.cell_block(cell, cell.start, first - 1, self.text(cell.start, first - 1))
        for position, heading in enumerate(headings):
            following = headings[position + 1].line_no - 1 if position + 1 < len(headings) else None
            alias = f"cell-{cell.number}" if position == 0 and first == cell.start else None
            self.heading_block(heading, following or cell.end, alias)

    def finish(self, total: int) -> tuple[Block, ...]:
        """Heading blocks run to the next heading of the same or higher level."""
        blocks = self.blocks
        positions = self.heading_positions
        for order, position in enumerate(positions):
            level = blocks[position].level
            end = total
            for later in positions[order + 1 :]:
                if blocks[later].level <= level:
                    end = blocks[later].start_line - 1
                    break
            end = max(end, blocks[position].start_line)
            blocks[position] = replace(blocks[position], end_line=end)
        return tuple(blocks)


def _unreadable(path: str) -> Extraction:
    meta = DocMeta(title=PurePosixPath(path).stem, parse_confidence=UNREADABLE_CONFIDENCE)
    return Extraction(blocks=(), meta=meta)


class NotebookExtractor:
    """The built-in extractor for Jupyter notebooks in documentation sources."""

    name = "notebook"
    version = "1"
    priority = 100

    def accepts(self, path: str, corpus: Corpus) -> bool:
        return corpus is Corpus.DOCS and path.lower().endswith(NOTEBOOK_SUFFIXES)

    def extract(self, path: str, text: str) -> Extraction:
        try:
            notebook = json.loads(text)
            if not isinstance(notebook, dict):
                raise ValueError("not a notebook")
            cells = _cells(notebook)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            return _unreadable(path)
        language = language_of(notebook)
        rendered, placed = render(cells, language)
        lines = split_lines(rendered)
        builder = _Builder(lines, placed)
        for cell in placed:
            if cell.kind == "code":
                body = builder.text(cell.start + 1, cell.end - 1)
                builder.cell_block(cell, cell.start, cell.end, body)
            else:
                builder.markdown_cell(cell)
        blocks = builder.finish(len(lines))
        top = next((b.title for b in blocks if b.level == 1 and b.anchor[:5] != "cell-"), None)
        meta = DocMeta(title=top or PurePosixPath(path).stem)
        return Extraction(blocks=blocks, meta=meta, language=language, text=rendered)
