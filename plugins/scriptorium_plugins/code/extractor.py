"""Cuts source files into definition blocks (tree-sitter) or line windows (everything else).

A parsed file yields one block per definition plus "module" blocks for the lines no top-level
definition covers (imports, app wiring, route registrations). A block's ``body`` holds its own
lines only: nested definitions are blocks of their own, so every line is indexed exactly once.
Files without a grammar, or whose parse fails, are cut into overlapping line windows instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from tree_sitter import Node, QueryCursor

from scriptorium.plugin import Block, Corpus, Extraction, RefKind, split_lines
from scriptorium_plugins.code.config import CONFIG_LANGUAGES, Entry, outline
from scriptorium_plugins.code.languages import (
    definitions_query,
    has_grammar,
    language_for_path,
    parser,
)
from scriptorium_plugins.code.naming import definition_name, refine, scope_joiner

MODULE_WINDOW_LINES = 40
FALLBACK_WINDOW_LINES = 40
FALLBACK_OVERLAP_LINES = 10

# Nodes that only wrap a single definition; the definition's extent grows to cover them, so
# ``export``, ``const x =`` and Python decorators belong to the block.
_WRAPPERS = frozenset(
    {
        "decorated_definition",
        "export_statement",
        "lexical_declaration",
        "variable_declaration",
        "type_declaration",
        "template_declaration",
    }
)
# Children of a wrapper that belong to the definition it wraps (``template <typename T>``).
_WRAPPER_PARTS = frozenset({"template_parameter_list", "requires_clause"})
_DECORATORS = frozenset({"decorator", "annotation", "marker_annotation", "attribute_item"})
_COMMENTS = frozenset({"comment", "line_comment", "block_comment", "multiline_comment"})
# Namespaces declared by a statement (``namespace App;``) rather than around a body: they hold
# every definition up to the next such statement or the end of the file.
# Grammars whose brace-less definitions run on over the comments and indent before the next one.
_TRAILING_TRIVIA = frozenset({"scala"})
_COMMENT_LINE = ("//", "/*", "*", "#")
_STATEMENT_NAMESPACES = frozenset({"file_scoped_namespace_declaration", "namespace_definition"})


@dataclass(slots=True, eq=False)
class _Definition:
    """One definition found in the tree, before it becomes a Block."""

    node: Node
    name: str
    kind: str
    start_row: int  # 0-based first row of the full extent (decorators, doc comments)
    end_row: int  # 0-based last row
    parent: _Definition | None = None
    children: list[_Definition] = field(default_factory=list)
    qualifier: tuple[str, ...] = ()  # scopes written in the name (Go receiver, C++ ``Type::``)
    label: str | None = None  # own segment of the anchor when not the name (``impl Point``)
    joiner: str = "."  # separator before this definition's segment in the qualified name
    scope_joiner: str = "."  # separator between the scopes of its qualifier

    def chain(self) -> list[_Definition]:
        chain: list[_Definition] = []
        current: _Definition | None = self
        while current is not None:
            chain.append(current)
            current = current.parent
        return chain[::-1]

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(name for d in self.chain() for name in (*d.qualifier, d.name))

    @property
    def qualified(self) -> str:
        """The name as the language writes it: ``Type::method``, ``Class#method``, ``A.b``."""
        out = ""
        for d in self.chain():
            own = d.label if (d is self and d.label) else d.name
            for segment in (*d.qualifier, own):
                if out:
                    out += d.scope_joiner if segment is not own else d.joiner
                out += segment
        return out

    @property
    def depth(self) -> int:
        depth, current = 1, self.parent
        while current is not None:
            depth, current = depth + 1, current.parent
        return depth


class CodeExtractor:
    """The block extractor for the code corpus."""

    name = "code"
    version = "2"  # 2: ten more grammars, config outlines, language separators
    priority = 200

    def accepts(self, path: str, corpus: Corpus) -> bool:
        return corpus is Corpus.CODE

    def extract(self, path: str, text: str) -> Extraction:
        language = language_for_path(path)
        lines = split_lines(text)
        if not any(line.strip() for line in lines):
            return Extraction((), language=language)
        blocks: list[Block] | None = None
        try:
            if has_grammar(language):
                blocks = _parsed_blocks(path, text, lines, language or "")
            elif language in CONFIG_LANGUAGES:
                blocks = _config_blocks(path, lines, language or "")
        except Exception:
            # Messy input must never fail indexing: the windows below still cover the file.
            blocks = None
        if blocks is None:
            blocks = window_blocks(path, lines)
        return Extraction(tuple(blocks), language=language)


# -- definitions ---------------------------------------------------------------------------


def _parsed_blocks(path: str, text: str, lines: list[str], language: str) -> list[Block] | None:
    ts_parser = parser(language)
    query = definitions_query(language)
    if ts_parser is None or query is None:
        return None
    tree = ts_parser.parse(text.encode("utf-8", "replace"))
    definitions = _definitions(tree.root_node, query, lines, language)
    blocks = [_definition_block(d, lines) for d in definitions]
    covered: set[int] = set()
    for definition in definitions:
        if definition.parent is None:
            covered.update(range(definition.start_row, definition.end_row + 1))
    blocks.extend(_module_blocks(path, lines, covered))
    blocks.sort(key=lambda b: (b.start_line, -b.end_line, b.level))
    return blocks


def _definitions(root: Node, query, lines: list[str], language: str) -> list[_Definition]:
    found: dict[tuple[int, int, str], _Definition] = {}
    for _pattern, captures in QueryCursor(query).matches(root):
        def_nodes = [(k, v) for k, v in captures.items() if k.startswith("definition.")]
        names = captures.get("name")
        if not def_nodes:
            continue
        capture, nodes = def_nodes[0]
        node = nodes[0]
        key = _key(node)
        if key in found:
            continue
        name = (_text(names[0]) if names else definition_name(node, language)).strip()
        start_row, end_row = _extent(node, lines)
        if language in _TRAILING_TRIVIA:
            end_row = _without_trailing_comments(lines, start_row, end_row)
            while start_row > 0 and lines[start_row - 1].strip().startswith(_COMMENT_LINE):
                start_row -= 1  # its doc comment, parsed into the definition before it
        found[key] = _Definition(
            node, name or "<anonymous>", capture.split(".", 1)[1], start_row, end_row
        )

    for definition in found.values():
        ancestor = definition.node.parent
        while ancestor is not None and _key(ancestor) not in found:
            ancestor = ancestor.parent
        if ancestor is not None:
            definition.parent = found[_key(ancestor)]
            definition.parent.children.append(definition)
    _adopt_by_statement_namespaces(list(found.values()), len(lines))
    # Parents first, so a method sees the kind its class was refined to.
    for definition in sorted(found.values(), key=lambda d: d.depth):
        _refine(definition, language)
    return sorted(found.values(), key=lambda d: (d.start_row, -d.end_row, d.depth))


def _adopt_by_statement_namespaces(definitions: list[_Definition], line_count: int) -> None:
    """``namespace App\\Models;`` (PHP) and ``namespace Acme;`` (C#) scope what follows them."""
    statements = sorted(
        (
            d
            for d in definitions
            if d.parent is None
            and d.node.type in _STATEMENT_NAMESPACES
            and d.node.child_by_field_name("body") is None
        ),
        key=lambda d: d.start_row,
    )
    for index, namespace in enumerate(statements):
        following = statements[index + 1] if index + 1 < len(statements) else None
        namespace.end_row = (following.start_row - 1) if following else line_count - 1
        for definition in definitions:
            if (
                definition.parent is None
                and definition is not namespace
                and namespace.start_row < definition.start_row <= namespace.end_row
            ):
                definition.parent = namespace
                namespace.children.append(definition)


def _refine(definition: _Definition, language: str) -> None:
    """Language details the query cannot express: methods, receivers, scopes, separators."""
    parent_kind = definition.parent.kind if definition.parent is not None else None
    naming = refine(definition.node, definition.name, definition.kind, parent_kind, language)
    definition.name, definition.kind = naming.name, naming.kind
    definition.qualifier, definition.label = naming.qualifier, naming.label
    definition.joiner = naming.joiner
    definition.scope_joiner = scope_joiner(language)


def _extent(node: Node, lines: list[str]) -> tuple[int, int]:
    """First and last row of a definition, grown over wrappers, decorators and doc comments."""
    outer = node
    while outer.parent is not None and outer.parent.type in _WRAPPERS:
        siblings = [
            c
            for c in outer.parent.named_children
            if c.type not in _DECORATORS
            and c.type not in _COMMENTS
            and c.type not in _WRAPPER_PARTS
        ]
        if len(siblings) != 1:
            break
        outer = outer.parent
    start_row = outer.start_point.row
    end_row = _end_row(outer, lines)
    previous = outer.prev_named_sibling
    while previous is not None and previous.type in _DECORATORS:
        start_row = previous.start_point.row
        previous = previous.prev_named_sibling
    while (
        previous is not None
        and previous.type in _COMMENTS
        and _end_row(previous, lines) >= start_row - 1
        and _starts_line(previous, lines)
        and not _text(previous).startswith("#!")  # a script's shebang documents no function
    ):
        start_row = previous.start_point.row
        previous = previous.prev_named_sibling
    return start_row, max(start_row, end_row)


def _without_trailing_comments(lines: list[str], start_row: int, end_row: int) -> int:
    """``end_row`` moved up past the blank and comment lines that introduce the next definition."""
    while end_row > start_row and end_row < len(lines):
        stripped = lines[end_row].strip()
        if stripped and not stripped.startswith(_COMMENT_LINE):
            break
        end_row -= 1
    return end_row


def _end_row(node: Node, lines: list[str]) -> int:
    """The last row holding the node's text: one it ends in the indent of is not its own."""
    row, column = node.end_point
    if row > node.start_point.row and (row >= len(lines) or not lines[row][:column].strip()):
        return row - 1
    return row


def _starts_line(node: Node, lines: list[str]) -> bool:
    row, column = node.start_point
    return row < len(lines) and not lines[row][:column].strip()


def _definition_block(definition: _Definition, lines: list[str]) -> Block:
    own_rows = set(range(definition.start_row, definition.end_row + 1))
    for child in definition.children:
        own_rows.difference_update(range(child.start_row, child.end_row + 1))
    own_rows.add(definition.start_row)
    body = _compact(lines[row] for row in sorted(own_rows) if row < len(lines))
    section_path = definition.path
    qualified = definition.qualified
    return Block(
        kind=RefKind.CODE,
        start_line=definition.start_row + 1,
        end_line=definition.end_row + 1,
        title=qualified,
        section_path=section_path,
        anchor=qualified,
        body=body,
        level=definition.depth,
        symbol=definition.name,
        symbol_kind=definition.kind,
    )


def _config_blocks(path: str, lines: list[str], language: str) -> list[Block] | None:
    """Keys, tables, stages and targets as blocks named by their dotted path (``tool.ruff``)."""
    entries = sorted(outline(language, lines), key=lambda e: (e.start_row, -e.end_row))
    if not entries:
        return None
    parents: dict[int, int | None] = {}
    for index, entry in enumerate(entries):
        parents[index] = next(
            (
                j
                for j in range(index - 1, -1, -1)
                if _contains(entries[j], entry)
                and entries[j].path == entry.path[: len(entries[j].path)]
            ),
            None,
        )
    blocks: list[Block] = []
    covered: set[int] = set()
    for index, entry in enumerate(entries):
        own = set(range(entry.start_row, entry.end_row + 1))
        for child, parent in parents.items():
            if parent == index:
                own.difference_update(range(entries[child].start_row, entries[child].end_row + 1))
        own.add(entry.start_row)
        if parents[index] is None:
            covered.update(range(entry.start_row, entry.end_row + 1))
        anchor = ".".join(entry.path)
        blocks.append(
            Block(
                kind=RefKind.CODE,
                start_line=entry.start_row + 1,
                end_line=entry.end_row + 1,
                title=anchor,
                section_path=entry.path,
                anchor=anchor,
                body=_compact(lines[row] for row in sorted(own) if row < len(lines)),
                level=len(entry.path),
                symbol=entry.path[-1],
                symbol_kind=entry.kind,
            )
        )
    blocks.extend(_module_blocks(path, lines, covered))
    blocks.sort(key=lambda b: (b.start_line, -b.end_line, b.level))
    return blocks


def _contains(outer: Entry, inner: Entry) -> bool:
    return outer.start_row <= inner.start_row and inner.end_row <= outer.end_row


def _has_word(line: str) -> bool:
    return any(ch.isalnum() for ch in line)


def _compact(lines: Iterable[str]) -> str:
    """Join lines, folding the blank runs left where nested definitions were cut out."""
    kept: list[str] = []
    for line in lines:
        if line.strip() or (kept and kept[-1].strip()):
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def _key(node: Node) -> tuple[int, int, str]:
    return (node.start_byte, node.end_byte, node.type)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


# -- line windows --------------------------------------------------------------------------


def _module_blocks(path: str, lines: list[str], covered: set[int]) -> list[Block]:
    """Blocks for contiguous runs of lines outside every top-level definition.

    A long run is cut into equal windows of at most ``MODULE_WINDOW_LINES`` so no window is a
    stray closing bracket; a run with nothing but punctuation (a lone ``)``) is skipped.
    """
    blocks: list[Block] = []
    run_start: int | None = None
    for row in range(len(lines) + 1):
        if row < len(lines) and row not in covered:
            if run_start is None:
                run_start = row
            continue
        if run_start is not None:
            blocks.extend(_run_blocks(path, lines, run_start, row - 1))
            run_start = None
    return blocks


def _run_blocks(path: str, lines: list[str], first: int, last: int) -> list[Block]:
    while first <= last and not lines[first].strip():
        first += 1
    while last >= first and not lines[last].strip():
        last -= 1
    if first > last or not any(_has_word(line) for line in lines[first : last + 1]):
        return []
    count = last - first + 1
    windows = -(-count // MODULE_WINDOW_LINES)
    size = -(-count // windows)
    blocks: list[Block] = []
    for start in range(first, last + 1, size):
        block = _window(path, lines, start, min(start + size - 1, last), "module", trim=True)
        if block is not None:
            blocks.append(block)
    return blocks


def window_blocks(path: str, lines: list[str]) -> list[Block]:
    """Overlapping line windows over the whole file, for files that are not parsed."""
    blocks: list[Block] = []
    step = FALLBACK_WINDOW_LINES - FALLBACK_OVERLAP_LINES
    start = 0
    while start < len(lines):
        end = min(start + FALLBACK_WINDOW_LINES, len(lines)) - 1
        block = _window(path, lines, start, end, "window", trim=False)
        if block is not None:
            blocks.append(block)
        if end == len(lines) - 1:
            break
        start += step
    return blocks


def _window(
    path: str, lines: list[str], first: int, last: int, kind: str, *, trim: bool
) -> Block | None:
    """A block over rows ``first..last``; None when they hold nothing worth indexing."""
    if trim:
        while first <= last and not lines[first].strip():
            first += 1
        while last >= first and not lines[last].strip():
            last -= 1
    body_lines = lines[first : last + 1]
    if not any(line.strip() for line in body_lines):
        return None
    start_line, end_line = first + 1, last + 1
    return Block(
        kind=RefKind.CODE,
        start_line=start_line,
        end_line=end_line,
        title=f"{PurePosixPath(path).name} lines {start_line}-{end_line}",
        section_path=(),
        anchor=f"L{start_line}-{end_line}",
        body="\n".join(body_lines),
        level=0,
        symbol=None,
        symbol_kind=kind,
    )
