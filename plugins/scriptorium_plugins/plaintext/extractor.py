"""Cuts plain-text pages into blocks of whole paragraphs, each at most a bounded size.

A paragraph is a run of non-blank lines. Paragraphs are gathered in order into one block until
the next would take it past ``block_chars`` characters; a paragraph longer than that on its own
is cut between lines (a single longer line stays whole). A block's anchor is its line range,
``L12-L40``, so its location names exactly what GetContent returns; its title is its first line.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from scriptorium.plugin import Block, Corpus, DocMeta, Extraction, RefKind, split_lines

TEXT_SUFFIXES = (".txt",)
DEFAULT_BLOCK_CHARS = 4000
TITLE_CHARS = 80


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """0-based inclusive ``(start, end)`` of each run of non-blank lines."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for index, line in enumerate(lines):
        if line.strip():
            if start is None:
                start = index
        elif start is not None:
            runs.append((start, index - 1))
            start = None
    if start is not None:
        runs.append((start, len(lines) - 1))
    return runs


def _pieces(lines: list[str], start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """A paragraph as line ranges of at most ``limit`` characters (a longer line alone)."""
    pieces: list[tuple[int, int]] = []
    first, size = start, 0
    for index in range(start, end + 1):
        length = len(lines[index]) + 1
        if size and size + length > limit:
            pieces.append((first, index - 1))
            first, size = index, 0
        size += length
    pieces.append((first, end))
    return pieces


def group(lines: list[str], limit: int) -> list[tuple[int, int]]:
    """0-based inclusive line ranges of the blocks of ``lines``.

    A block's size counts every line of its range (the blank lines between its paragraphs
    too), so the text GetContent returns for it is at most ``limit`` characters.
    """
    ends = [0]
    for line in lines:
        ends.append(ends[-1] + len(line) + 1)
    ranges: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for start, end in _paragraphs(lines):
        for piece in _pieces(lines, start, end, limit):
            if current is not None and ends[piece[1] + 1] - ends[current[0]] > limit:
                ranges.append(current)
                current = None
            current = piece if current is None else (current[0], piece[1])
    if current is not None:
        ranges.append(current)
    return ranges


def _title(line: str) -> str:
    text = " ".join(line.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def cut_text(path: str, text: str, block_chars: int = DEFAULT_BLOCK_CHARS) -> Extraction:
    """The blocks of a plain-text page, ``block_chars`` characters at most each."""
    lines = split_lines(text)
    first = next((line for line in lines if line.strip()), "")
    page_title = _title(first) if first and len(first.strip()) <= TITLE_CHARS else ""
    meta = DocMeta(title=page_title or PurePosixPath(path).stem)
    blocks = []
    for start, end in group(lines, max(1, block_chars)):
        anchor = f"L{start + 1}-L{end + 1}"
        title = _title(lines[start]) or anchor
        body = "\n".join(lines[start : end + 1])
        path_titles = (meta.title, title) if meta.title != title else (title,)
        blocks.append(Block(RefKind.DOC, start + 1, end + 1, title, path_titles, anchor, body, 1))
    return Extraction(blocks=tuple(blocks), meta=meta)


class PlainTextExtractor:
    """The built-in extractor for ``.txt`` pages in documentation sources."""

    name = "plaintext"
    version = "1"
    priority = 100

    def accepts(self, path: str, corpus: Corpus) -> bool:
        return corpus is Corpus.DOCS and path.lower().endswith(TEXT_SUFFIXES)

    def extract(self, path: str, text: str) -> Extraction:
        return cut_text(path, text)
