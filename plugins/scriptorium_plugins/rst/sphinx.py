"""Sphinx projects in a doc tree: ``conf.py`` read as data, and the toctrees' page hierarchy.

A folder holding ``conf.py`` is a Sphinx project's source directory. Its ``conf.py`` is never
run: only plain literal assignments are read (``root_doc``/``master_doc``,
``exclude_patterns``), the way most projects write them; anything computed is ignored. The
``.. toctree::`` directives of its pages say which page is whose parent, from the root
document down; a page's breadcrumb is the titles of the pages above it, as Sphinx themes
render it. Pages are scanned with patterns (no docutils), so this is cheap enough to do for a
whole tree when a source starts.
"""

from __future__ import annotations

import ast
import fnmatch
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

RST_SUFFIX = ".rst"
# Folders (relative to a source's root) where projects keep their Sphinx sources.
PROJECT_FOLDERS = ("", "docs", "doc", "docs/source", "doc/source", "source")
# Only toctrees at the page's top level: an indented one is almost always an example inside a
# literal block (Sphinx's own pages show many).
_TOCTREE = re.compile(r"^()\.\.[ \t]+toctree::[ \t]*$")
_OPTION = re.compile(r"^:[\w-]+:")
_TITLED_ENTRY = re.compile(r"^(.*?)\s*<([^<>]+)>$")
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
MAX_DEPTH = 20


@dataclass(frozen=True, slots=True)
class SphinxConf:
    """What a ``conf.py`` says in literals: the root document and the excluded patterns."""

    root_doc: str = "index"
    exclude_patterns: tuple[str, ...] = ()


def read_conf(text: str) -> SphinxConf:
    """The literal settings of a ``conf.py``; never executes it, never raises."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return SphinxConf()
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name):
            try:
                values[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                values.pop(target.id, None)
    root = values.get("root_doc", values.get("master_doc", "index"))
    patterns = values.get("exclude_patterns", ())
    return SphinxConf(
        root_doc=root if isinstance(root, str) and root.strip() else "index",
        exclude_patterns=tuple(p for p in patterns if isinstance(p, str) and p.strip())
        if isinstance(patterns, (list, tuple))
        else (),
    )


def exclude_for_source(folder: str, conf: SphinxConf) -> list[str]:
    """``exclude_patterns`` (relative to the project folder) as gitignore patterns of the root."""
    prefix = f"/{folder}/" if folder else "/"
    return [prefix + pattern.lstrip("/") for pattern in conf.exclude_patterns]


def toctree_entries(text: str) -> list[tuple[str, bool]]:
    """``(entry, glob)`` of every toctree of a page, in order (``self`` and URLs left out)."""
    lines = text.splitlines()
    entries: list[tuple[str, bool]] = []
    index = 0
    while index < len(lines):
        match = _TOCTREE.match(lines[index])
        index += 1
        if match is None:
            continue
        indent = len(match.group(1).expandtabs())
        glob = False
        while index < len(lines):
            line = lines[index]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            index += 1
            item = line.strip()
            if not item:
                continue
            if _OPTION.match(item):
                glob = glob or item.startswith(":glob:")
                continue
            titled = _TITLED_ENTRY.match(item)
            target = titled.group(2).strip() if titled else item
            if target == "self" or "://" in target:
                continue
            entries.append((target, glob))
    return entries


def page_title(text: str) -> str | None:
    """A page's first section title, read from its adornments (an overline is optional)."""
    lines = text.splitlines()
    for index in range(len(lines) - 1):
        line, below = lines[index].strip(), lines[index + 1]
        if not line or _ADORNMENT.match(line) or line.startswith(".."):
            continue
        if _ADORNMENT.match(below) and len(below.strip()) >= len(line):
            return line
    return None


def _docname(path: str) -> str:
    return path[: -len(RST_SUFFIX)] if path.endswith(RST_SUFFIX) else path


@dataclass(slots=True)
class Project:
    """One Sphinx project: its folder (relative to the source root), settings and hierarchy."""

    folder: str
    conf: SphinxConf
    titles: dict[str, str] = field(default_factory=dict)  # docname -> title
    children: dict[str, list[str]] = field(default_factory=dict)  # docname -> toctree order

    def relative(self, path: str) -> str | None:
        """``path`` (relative to the source root) as a docname of this project, or None."""
        if self.folder and not path.startswith(self.folder + "/"):
            return None
        inner = path[len(self.folder) + 1 :] if self.folder else path
        return _docname(inner) if inner.endswith(RST_SUFFIX) else None

    def read_page(self, docname: str, text: str) -> None:
        """Record a page's title and the pages its toctrees name."""
        title = page_title(text)
        if title:
            self.titles[docname] = title
        else:
            self.titles.pop(docname, None)
        base = posixpath.dirname(docname)
        named: list[str] = []
        for entry, glob in toctree_entries(text):
            entry = _docname(entry)
            target = entry.lstrip("/") if entry.startswith("/") else posixpath.join(base, entry)
            target = posixpath.normpath(target)
            if glob and any(char in target for char in "*?["):
                named.extend(sorted(d for d in self.titles if fnmatch.fnmatchcase(d, target)))
            else:
                named.append(target)
        self.children[docname] = [n for n in named if n != docname]

    def parents(self) -> dict[str, str]:
        """Each page's parent: the first page, from the root document down, that names it."""
        parent: dict[str, str] = {}
        seen = {self.conf.root_doc}
        queue = [self.conf.root_doc]
        while queue:
            current = queue.pop(0)
            for child in self.children.get(current, ()):
                if child not in seen:
                    seen.add(child)
                    parent[child] = current
                    queue.append(child)
        for page, named in self.children.items():  # pages outside the root's tree
            for child in named:
                if child not in seen and child != page:
                    parent.setdefault(child, page)
        return parent

    def breadcrumb(self, docname: str) -> tuple[str, ...]:
        """Titles of the pages above ``docname`` in the toctrees, the root document first."""
        parent = self.parents()
        trail: list[str] = []
        current = docname
        for _ in range(MAX_DEPTH):
            above = parent.get(current)
            if above is None or above == docname:
                break
            trail.append(self.titles.get(above, posixpath.basename(above) or above))
            current = above
        return tuple(reversed(trail))


def find_projects(root: Path) -> list[Project]:
    """The Sphinx projects in the usual folders of a source root (deepest folder first)."""
    projects = []
    for folder in PROJECT_FOLDERS:
        conf = root / folder / "conf.py" if folder else root / "conf.py"
        try:
            text = conf.read_text("utf-8", "replace") if conf.is_file() else None
        except OSError:
            text = None
        if text is not None:
            projects.append(Project(folder, read_conf(text)))
    return sorted(projects, key=lambda p: -len(p.folder))
