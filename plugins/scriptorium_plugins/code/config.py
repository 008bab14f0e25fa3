"""Outlines of configuration files: the keys, tables, stages and targets an agent asks about.

TOML tables (``[tool.ruff]``, with ``tool`` spanning its run of subtables) and top-level keys,
YAML and JSON top-level keys (YAML one level deeper too, so ``jobs.test`` names a job),
Dockerfile stages (``FROM ... AS name``, else ``stage-N``) and Makefile targets. Each entry is a
path of names and a row range; the extractor turns them into blocks like definitions. Plain line
scanning keeps this dependency-free and tolerant: a malformed file still outlines what it can.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONFIG_LANGUAGES = frozenset({"toml", "yaml", "json", "dockerfile", "makefile"})


@dataclass(frozen=True, slots=True)
class Entry:
    """One named part of a configuration file (0-based, inclusive rows)."""

    path: tuple[str, ...]
    kind: str
    start_row: int
    end_row: int


def outline(language: str, lines: list[str]) -> list[Entry]:
    """The entries of a configuration file in ``language``; [] for other languages."""
    scanner = _SCANNERS.get(language)
    return scanner(lines) if scanner else []


def _blank(line: str) -> bool:
    return not line.strip()


def _trim_end(lines: list[str], start: int, end: int, comment: str = "#") -> int:
    """``end`` moved up past blank lines and comments that introduce what follows."""
    while end > start and (_blank(lines[end]) or lines[end].lstrip().startswith(comment)):
        end -= 1
    return end


# -- TOML ----------------------------------------------------------------------------------

_TOML_HEADER = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")
_TOML_KEY = re.compile(r"""^([A-Za-z0-9_\-."' ]+?)\s*=""")


def _toml_path(key: str) -> tuple[str, ...]:
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([^.\s]+)', key)
    return tuple(next(p for p in part if p) for part in parts if any(part))


def _toml(lines: list[str]) -> list[Entry]:
    headers: list[tuple[int, tuple[str, ...], str]] = []
    keys: list[tuple[int, tuple[str, ...]]] = []
    depth, quote = 0, None
    for row, line in enumerate(lines):
        if quote is not None:
            if line.count(quote) % 2 == 1:
                quote = None
            continue
        if depth == 0:
            header = _TOML_HEADER.match(line)
            if header and not line.lstrip().startswith("#"):
                kind = "table" if not line.lstrip().startswith("[[") else "array"
                headers.append((row, _toml_path(header.group(1)), kind))
                continue
            key = _TOML_KEY.match(line)
            if key and not headers:
                keys.append((row, _toml_path(key.group(1))))
        code = re.sub(r'"(?:\\.|[^"\\])*"|\'[^\']*\'', "", line).split("#", 1)[0]
        depth = max(
            0, depth + code.count("[") + code.count("{") - code.count("]") - code.count("}")
        )
        for mark in ('"""', "'''"):
            if line.count(mark) % 2 == 1:
                quote = mark
                break
    entries: list[Entry] = []
    first_header = headers[0][0] if headers else len(lines)
    for index, (row, path) in enumerate(keys):
        end = keys[index + 1][0] - 1 if index + 1 < len(keys) else first_header - 1
        entries.append(Entry(path, "key", row, _trim_end(lines, row, end)))
    ends = [
        _trim_end(lines, row, (headers[i + 1][0] - 1) if i + 1 < len(headers) else len(lines) - 1)
        for i, (row, _path, _kind) in enumerate(headers)
    ]
    explicit = {path for _row, path, _kind in headers}
    for i, (row, path, kind) in enumerate(headers):
        # A table's run: it and the subtables right after it (``[tool]`` then ``[tool.ruff]``).
        last = i
        while last + 1 < len(headers) and headers[last + 1][1][: len(path)] == path:
            last += 1
        entries.append(Entry(path, kind, row, ends[last]))
    # ``tool`` in ``[tool.ruff]`` ... ``[tool.mypy]``: a parent spanning its contiguous run.
    seen: set[tuple[str, ...]] = set()
    for i, (row, path, _kind) in enumerate(headers):
        for size in range(1, len(path)):
            prefix = path[:size]
            if prefix in explicit or prefix in seen:
                continue
            if i > 0 and headers[i - 1][1][:size] == prefix:
                continue
            last = i
            while last + 1 < len(headers) and headers[last + 1][1][:size] == prefix:
                last += 1
            seen.add(prefix)
            entries.append(Entry(prefix, "table", row, ends[last]))
    return entries


# -- YAML ----------------------------------------------------------------------------------

_YAML_KEY = re.compile(r"""^(\s*)("[^"]*"|'[^']*'|[^\s#'"\-?:][^#]*?|\?[^#]*?)\s*:(?:\s|$)""")


def _yaml(lines: list[str]) -> list[Entry]:
    return _yaml_level(lines, 0, len(lines) - 1, (), depth=2)


def _yaml_level(
    lines: list[str], first: int, last: int, parent: tuple[str, ...], depth: int
) -> list[Entry]:
    indents = [
        len(line) - len(line.lstrip())
        for line in lines[first : last + 1]
        if line.strip() and not line.lstrip().startswith(("#", "- ", "---", "..."))
    ]
    if not indents or depth == 0:
        return []
    indent = min(indents)
    starts: list[tuple[int, str]] = []
    for row in range(first, last + 1):
        match = _YAML_KEY.match(lines[row])
        if match and len(match.group(1)) == indent:
            starts.append((row, match.group(2).strip("\"'")))
        elif indent == 0 and lines[row].startswith(("---", "...")):
            starts.append((row, ""))  # a document boundary ends the key before it
    entries: list[Entry] = []
    for index, (row, name) in enumerate(starts):
        if not name:
            continue
        end = starts[index + 1][0] - 1 if index + 1 < len(starts) else last
        end = _trim_end(lines, row, end)
        path = (*parent, name)
        entries.append(Entry(path, "key", row, end))
        if end > row:
            entries.extend(_yaml_level(lines, row + 1, end, path, depth - 1))
    return entries


# -- JSON ----------------------------------------------------------------------------------


def _json(lines: list[str]) -> list[Entry]:
    """Top-level keys of the root object: a string at depth 1 followed by ``:``."""
    entries: list[tuple[int, str]] = []
    closes: list[int] = []
    depth, row = 0, 0
    pending: tuple[int, str] | None = None
    for row, line in enumerate(lines):
        col = 0
        while col < len(line):
            ch = line[col]
            if ch == '"':
                end = col + 1
                while end < len(line) and line[end] != '"':
                    end += 2 if line[end] == "\\" else 1
                if depth == 1:
                    pending = (row, line[col + 1 : end])
                col = end + 1
                continue
            if ch == ":" and depth == 1 and pending is not None:
                entries.append(pending)
                pending = None
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    closes.append(row)
            elif ch == "," and depth == 1:
                pending = None
            col += 1
    close = closes[0] if closes else len(lines) - 1
    out: list[Entry] = []
    for index, (start, name) in enumerate(entries):
        end = entries[index + 1][0] - 1 if index + 1 < len(entries) else close
        end = _trim_end(lines, start, end, comment="//")
        if index + 1 == len(entries) and end > start and lines[end].strip() == "}":
            end -= 1
        out.append(Entry((name,), "key", start, max(start, end)))
    return out


# -- Dockerfile ----------------------------------------------------------------------------

_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)


def _dockerfile(lines: list[str]) -> list[Entry]:
    starts: list[tuple[int, str]] = []
    continued = False
    for row, line in enumerate(lines):
        instruction = not continued and not line.lstrip().startswith("#")
        continued = line.rstrip().endswith("\\") and (continued or instruction)
        match = _FROM.match(line) if instruction else None
        if match:
            starts.append((row, match.group(2) or f"stage-{len(starts) + 1}"))
    entries: list[Entry] = []
    for index, (row, name) in enumerate(starts):
        end = starts[index + 1][0] - 1 if index + 1 < len(starts) else len(lines) - 1
        entries.append(Entry((name,), "stage", row, _trim_end(lines, row, end)))
    return entries


# -- Makefile ------------------------------------------------------------------------------

_RULE = re.compile(r"^([^\s#:=][^:=]*?)\s*::?(?![=])(.*)$")


def _makefile(lines: list[str]) -> list[Entry]:
    entries: list[Entry] = []
    row = 0
    while row < len(lines):
        match = _RULE.match(lines[row])
        if not match or match.group(1).startswith((".", "export ", "define ")):
            row += 1
            continue
        targets = match.group(1).split()
        end = row
        while end > row - 1 and lines[end].rstrip().endswith("\\") and end + 1 < len(lines):
            end += 1
        probe = end + 1
        while probe < len(lines) and (lines[probe].startswith("\t") or _blank(lines[probe])):
            if lines[probe].startswith("\t"):
                end = probe
            probe += 1
        for target in targets[:1]:
            entries.append(Entry((target,), "target", row, end))
        row = end + 1
    return entries


_SCANNERS = {
    "toml": _toml,
    "yaml": _yaml,
    "json": _json,
    "dockerfile": _dockerfile,
    "makefile": _makefile,
}
