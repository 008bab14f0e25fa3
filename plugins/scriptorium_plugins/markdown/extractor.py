"""Cuts Markdown documents into heading blocks.

A heading block's extent runs to the next heading of the same or higher level (so GetContent
returns a section with its subsections), but its indexed ``body`` stops at the next heading of
any level, so nested sections are scored on their own and never counted twice.

MDX and site-flavoured Markdown (``mdx``) are indexed by the text a reader sees: their bodies
leave ESM lines, JSX tags and container markers out, and previews are cut from those bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import PurePosixPath

from scriptorium.plugin import (
    Block,
    Corpus,
    Extraction,
    Heading,
    RefKind,
    SlugAllocator,
    fenced_code_mask,
    github_slug,
    parse_headings,
    split_lines,
)
from scriptorium_plugins.markdown.frontmatter import parse_front_matter
from scriptorium_plugins.markdown.mdx import is_site_flavoured, reader_lines

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")


def _anchors(headings: list[Heading], slugify: Callable[[str], str]) -> list[str]:
    allocator = SlugAllocator(slugify)
    for heading in headings:
        if heading.custom_id:
            allocator.reserve(heading.custom_id)
    return [
        allocator.allocate(h.custom_id, custom=True) if h.custom_id else allocator.allocate(h.text)
        for h in headings
    ]


def _extents(headings: list[Heading], total: int) -> list[int]:
    """Last line of each heading's block: before the next heading of the same or higher level."""
    ends = [total] * len(headings)
    open_blocks: list[int] = []
    for position, heading in enumerate(headings):
        while open_blocks and headings[open_blocks[-1]].level >= heading.level:
            ends[open_blocks.pop()] = heading.line_no - 1
        open_blocks.append(position)
    return ends


class MarkdownExtractor:
    """The built-in extractor for Markdown files in documentation sources."""

    name = "markdown"
    version = "3"
    priority = 100

    def accepts(self, path: str, corpus: Corpus) -> bool:
        return corpus is Corpus.DOCS and path.lower().endswith(MARKDOWN_SUFFIXES)

    def extract(
        self, path: str, text: str, slugify: Callable[[str], str] = github_slug
    ) -> Extraction:
        """The blocks of ``text``; ``slugify`` is the site's heading-id rule (GitHub's)."""
        meta, skipped, _raw = parse_front_matter(text)
        lines = split_lines(text)
        total = len(lines)
        site = is_site_flavoured(path, text, lines)
        if site:
            lines = reader_lines(lines, fenced_code_mask(lines))
        headings = parse_headings(lines[skipped:], first_line_no=skipped + 1)
        if site:  # bodies show a heading as the page does, without its ``{#id}``
            for heading in headings:
                if heading.line_count == 1 and heading.custom_id:
                    lines[heading.line_no - 1] = "#" * heading.level + " " + heading.text
        if meta.title is None:
            first_h1 = next((h.text for h in headings if h.level == 1 and h.text), None)
            meta = replace(meta, title=first_h1 or PurePosixPath(path).stem)

        blocks: list[Block] = []
        first_heading = headings[0].line_no if headings else total + 1
        preamble = lines[skipped : first_heading - 1]
        if any(line.strip() for line in preamble):
            blocks.append(
                Block(
                    kind=RefKind.DOC,
                    start_line=skipped + 1,
                    end_line=first_heading - 1,
                    title=meta.title or "",
                    section_path=(),
                    anchor="",
                    body="\n".join(preamble),
                    level=0,
                )
            )

        ends = _extents(headings, total)
        trail: list[Heading] = []
        anchors = _anchors(headings, slugify)
        for position, (heading, anchor) in enumerate(zip(headings, anchors, strict=True)):
            own_end = headings[position + 1].line_no - 1 if position + 1 < len(headings) else total
            while trail and trail[-1].level >= heading.level:
                trail.pop()
            trail.append(heading)
            blocks.append(
                Block(
                    kind=RefKind.DOC,
                    start_line=heading.line_no,
                    end_line=ends[position],
                    title=heading.text or anchor,
                    section_path=tuple(h.text for h in trail),
                    anchor=anchor,
                    body="\n".join(lines[heading.line_no - 1 : own_end]),
                    level=heading.level,
                )
            )
        return Extraction(
            blocks=tuple(blocks), meta=meta, front_matter_lines=skipped, preview_from_body=site
        )
