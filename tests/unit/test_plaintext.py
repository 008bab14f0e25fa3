"""Plain-text pages: whole paragraphs grouped into blocks of a bounded size, with line ranges."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.content.cut import find_doc_block
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium_plugins.plaintext.extractor import (
    DEFAULT_BLOCK_CHARS,
    PlainTextExtractor,
    cut_text,
)
from scriptorium_plugins.plaintext.source import TextSource

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/plaintext/vim"


def sizes(text: str, blocks) -> list[int]:
    lines = text.splitlines()
    return [sum(len(line) + 1 for line in lines[b.start_line - 1 : b.end_line]) for b in blocks]


@pytest.mark.parametrize("limit", [500, 2000, DEFAULT_BLOCK_CHARS])
def test_a_long_real_page_is_many_bounded_blocks_that_cover_it(limit: int) -> None:
    text = (FIXTURE / "cmdline.txt").read_text("utf-8")
    assert len(text) > 50_000
    blocks = cut_text("cmdline.txt", text, limit).blocks
    assert len(blocks) >= len(text) // limit
    assert all(size <= limit for size in sizes(text, blocks))
    lines = text.splitlines()
    covered = {n for b in blocks for n in range(b.start_line, b.end_line + 1)}
    assert {n for n, line in enumerate(lines, 1) if line.strip()} <= covered
    assert all(a.end_line < b.start_line for a, b in itertools.pairwise(blocks))
    for block in blocks:
        assert block.anchor == f"L{block.start_line}-L{block.end_line}"
        assert block.body == "\n".join(lines[block.start_line - 1 : block.end_line])
        assert lines[block.start_line - 1].strip()  # blocks start on text, not on blank lines
        assert block.title == " ".join(lines[block.start_line - 1].split())[:80]


def test_paragraphs_stay_whole_unless_one_alone_is_too_long() -> None:
    first = "alpha " * 30  # 180 characters
    second = "beta " * 30
    text = f"{first}\n\n{second}\n\n" + "\n".join(["gamma line"] * 60) + "\n" + "z" * 700 + "\n"
    blocks = cut_text("page.txt", text, 400).blocks
    # The two short paragraphs share a block; the long one is cut between lines.
    assert (blocks[0].start_line, blocks[0].end_line) == (1, 3)
    assert all(size <= 400 for size in sizes(text, blocks[:-1]))
    assert blocks[-1].body == "z" * 700  # a longer line stays whole, alone
    assert cut_text("empty.txt", "\n\n  \n").blocks == ()


def test_text_source_lists_txt_pages_and_applies_its_block_size(tmp_path: Path) -> None:
    root = tmp_path / "pages"
    shutil.copytree(FIXTURE, root / "vim")
    (root / "notes.md").write_text("# Not text\n", "utf-8")
    context = SourceContext(extractors=ExtractorChain([PlainTextExtractor()]))

    def source(**options) -> TextSource:
        return TextSource(SourceConfig("pages", "text", root, options=options), context)

    assert [s.path for s in source().list_files()] == ["vim/cmdline.txt"]
    default = source().load("vim/cmdline.txt")
    small = source(block_chars=800).load("vim/cmdline.txt")
    assert len(small.blocks) > len(default.blocks)
    assert all(size <= 800 for size in sizes(small.text, small.blocks))
    block = small.blocks[3]
    assert source().block_location(small, block, None) == f"vim/cmdline#{block.anchor}"
    assert find_doc_block(small, block.anchor.lower()) == block
    assert source().page_location("guide/index.txt") == "guide"
