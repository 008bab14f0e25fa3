"""Docutils' doctree of a reST document, turned into heading blocks (see ``extractor``).

Kept apart from the extractor so docutils is imported when the first ``.rst`` file is cut,
not when the daemon starts.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from docutils import nodes

from scriptorium.plugin import Block, DocMeta, Extraction, RefKind
from scriptorium_plugins.rst.docutils_setup import AUTODOC, parse

MAX_LEVEL = 6

_SKIPPED = (
    nodes.system_message,
    nodes.comment,
    nodes.target,
    nodes.substitution_definition,
    nodes.raw,
    nodes.pending,
)


def node_text(node: nodes.Node) -> str:
    """What a reader sees of ``node``: inline text joined, blocks separated by blank lines."""
    if isinstance(node, _SKIPPED):
        return ""
    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, nodes.TextElement):
        return "".join(node_text(child) for child in node.children)
    parts = [node_text(child) for child in node.children]
    if isinstance(node, nodes.container) and AUTODOC.match(node.get("directive", "")):
        first = node.children[0] if node.children else None
        if isinstance(first, nodes.paragraph) and "directive-argument" in first["classes"]:
            parts[0] = "::: " + parts[0]
    return "\n\n".join(part for part in parts if part.strip())


def _own_text(node: nodes.Element) -> str:
    """The text of ``node``'s children up to its first nested section (titles included)."""
    parts = []
    for child in node.children:
        if isinstance(child, nodes.section):
            break
        parts.append(node_text(child))
    return "\n\n".join(part for part in parts if part.strip())


def _is_adornment(line: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= 2 and not stripped[0].isalnum() and len(set(stripped)) == 1


def _title_start(title: nodes.title, lines: list[str]) -> int:
    """The first line of a section title: its overline when it has one, else its text.

    Docutils numbers a title by its underline; the text is the line before it.
    """
    underline = title.line or 1
    text_line = max(1, underline - 1)
    overline = text_line - 1
    if overline >= 1 and _is_adornment(lines[overline - 1]) and _is_adornment(lines[underline - 1]):
        return overline
    return text_line


def _extents(starts: list[int], depths: list[int], total: int) -> list[int]:
    """Last line of each section: before the next section of the same or higher level."""
    ends = [total] * len(starts)
    open_sections: list[int] = []
    for position, depth in enumerate(depths):
        while open_sections and depths[open_sections[-1]] >= depth:
            ends[open_sections.pop()] = starts[position] - 1
        open_sections.append(position)
    return ends


def extract_sections(path: str, text: str, lines: list[str]) -> Extraction:
    """The blocks of ``text``; raises whatever docutils raises on input it cannot read."""
    document = parse(text, path)
    total = len(lines)
    sections = [s for s in document.findall(nodes.section) if isinstance(s[0], nodes.title)]
    depths = [len([a for a in _ancestors(s) if isinstance(a, nodes.section)]) for s in sections]
    starts = [_title_start(s[0], lines) for s in sections]
    titles = [s[0].astext().strip() for s in sections]
    top = next((t for t, d in zip(titles, depths, strict=True) if d == 1 and t), None)
    meta = DocMeta(title=top or PurePosixPath(path).stem)

    blocks: list[Block] = []
    preamble = _own_text(document)
    first = starts[0] if starts else total + 1
    if preamble.strip():
        blocks.append(
            Block(RefKind.DOC, 1, max(first - 1, 1), meta.title or "", (), "", preamble, 0)
        )
    ends = _extents(starts, depths, total)
    trail: list[tuple[int, str]] = []
    for position, section in enumerate(sections):
        depth, title = depths[position], titles[position]
        while trail and trail[-1][0] >= depth:
            trail.pop()
        trail.append((depth, title))
        ids = list(section["ids"]) or [nodes.make_id(title)]
        blocks.append(
            Block(
                kind=RefKind.DOC,
                start_line=starts[position],
                end_line=max(ends[position], starts[position]),
                title=title or ids[0],
                section_path=tuple(t for _, t in trail),
                anchor=ids[0],
                body=_own_text(section),
                level=min(depth, MAX_LEVEL),
                aliases=tuple(ids[1:]),
            )
        )
    return Extraction(blocks=tuple(blocks), meta=meta, preview_from_body=True)


def _ancestors(node: nodes.Node):
    """``node`` and the elements enclosing it, innermost first."""
    while node is not None:
        yield node
        node = node.parent
