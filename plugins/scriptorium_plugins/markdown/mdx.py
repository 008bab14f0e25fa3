"""MDX and site-flavoured Markdown (Docusaurus, VitePress, react.dev): the text a reader sees.

Such pages mix Markdown with ESM lines (``import Tabs from '@theme/Tabs'``), JSX components
(``<Sandpack>``, ``<TabItem label="npm">``), JSX comments and custom containers (``::: tip``).
The site renders none of that markup as text, so the indexed bodies leave it out: ESM blocks
and JSX comments go, a component's tags go (its children stay, and a tab's ``label`` or
``title`` stays as text), and a container's marker becomes its title (``::: tip NOTE`` reads
``NOTE``, a bare ``::: warning`` reads ``Warning``). Fenced code is never touched. The
transformed lines keep the file's line count, so line ranges still point into the real file,
and GetContent still returns the file's own lines.

Headings take the ids these sites render: ``{#id}`` (Docusaurus, VitePress) is an attribute
list the Markdown parser already reads; react.dev's ``{/*id*/}`` is turned into one.

A ``.md`` file is read this way only when it shows one of these constructs outside code, so
plain Markdown is indexed exactly as before; ``.mdx`` files always are.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from scriptorium.plugin import fenced_code_mask

_ESM = re.compile(r"^(?:import|export)[ \t{*]")
_TAG_NAME = r"[A-Z][\w.]*"
_JSX_TAG = re.compile(rf"</?{_TAG_NAME}(?:\s[^<>]{{0,2000}}?)?/?>")
_JSX_ONLY = re.compile(rf"^\s*(?:</?{_TAG_NAME}(?:\s[^<>]{{0,2000}}?)?/?>\s*)+$")
_JSX_OPEN_UNCLOSED = re.compile(rf"^\s*<{_TAG_NAME}(?:\s[^<>]*)?$")
_JSX_COMMENT = re.compile(r"\{/\*.{0,2000}?\*/\}")
_REACT_ID = re.compile(r"[ \t]*\{/\*[ \t]*([\w-]+)[ \t]*\*/\}[ \t]*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]")
_CONTAINER = re.compile(r"^[ \t]*:{3,}[ \t]*([\w-]*)(?:\[([^\]]*)\])?[ \t]*(.*?)[ \t]*$")
_LABEL = re.compile(r"""\b(?:label|title)=(?:"([^"]*)"|'([^']*)'|\{["']([^"']*)["']\})""")
# Containers whose marker carries no words of its own (VitePress tabs, raw blocks).
_SILENT_CONTAINERS = frozenset({"", "code-group", "raw", "v-pre"})
# The container kinds of VitePress and Docusaurus (and the closing ``:::``): ``::: name`` with
# any other name is mkdocstrings' directive, which the Markdown reading keeps as written.
_CONTAINER_KINDS = _SILENT_CONTAINERS | frozenset(
    {"info", "tip", "note", "warning", "warn", "danger", "caution", "important", "details"}
    | {"success", "secondary"}
)
MDX_SUFFIXES = (".mdx",)


_TAG_START = re.compile(r"</?[A-Z]")


def _maybe(text: str) -> bool:
    """Whether ``text`` could hold such markup at all: substring scans in C, most pages fail."""
    return (
        "{/*" in text
        or ":::" in text
        or "\nimport" in text
        or "\nexport" in text
        or text.startswith(("import", "export"))
        or _TAG_START.search(text) is not None
    )


def _signal(line: str) -> bool:
    """Whether ``line`` (outside code) is MDX or site markup that plain Markdown lacks."""
    if _ESM.match(line) or _JSX_COMMENT.search(line):
        return True
    if line.lstrip().startswith(":::") and _container_match(line):
        return True
    return bool(_JSX_ONLY.match(line) or _JSX_OPEN_UNCLOSED.match(line))


def is_site_flavoured(path: str, text: str, lines: Sequence[str]) -> bool:
    """``.mdx``, or Markdown that uses MDX or container markup outside its code.

    Only a page with a line that could be such markup pays for finding its fenced code.
    """
    if path.lower().endswith(MDX_SUFFIXES):
        return True
    if not _maybe(text):
        return False
    mask = fenced_code_mask(lines)
    return any(not mask[i] and _signal(line) for i, line in enumerate(lines))


def _container_match(line: str) -> re.Match[str] | None:
    """The ``:::`` line of a VitePress or Docusaurus container, not a mkdocstrings directive."""
    match = _CONTAINER.match(line)
    if match is None or match.group(1).lower() not in _CONTAINER_KINDS:
        return None
    if not match.group(1) and match.group(3):  # ``::: pkg.name``: its kind group is empty
        return None
    return match


def _tag_text(tags: str) -> str:
    """A tab's or component's ``label``/``title`` attributes: the words the page shows."""
    shown = [next(g for g in m.groups() if g is not None) for m in _LABEL.finditer(tags)]
    return " ".join(text for text in shown if text)


def _container(match: re.Match[str]) -> str:
    kind, bracketed, title = match.group(1), match.group(2), match.group(3)
    title = (bracketed or title or "").strip()
    if title.startswith("{"):  # ``::: code-group {.attrs}`` and similar options
        title = ""
    if title:
        return title
    return "" if kind.lower() in _SILENT_CONTAINERS else kind.replace("-", " ").capitalize()


def reader_lines(lines: Sequence[str], mask: Sequence[bool]) -> list[str]:
    """``lines`` with site markup replaced by what the page shows (same number of lines)."""
    out: list[str] = []
    in_esm = False
    in_tag = False
    for index, line in enumerate(lines):
        if mask[index]:
            in_esm = in_tag = False
            out.append(line)
            continue
        if in_esm:
            in_esm = bool(line.strip())
            out.append("")
            continue
        if in_tag:  # the attribute lines of a multi-line opening tag
            in_tag = ">" not in line
            out.append(_tag_text(line))
            continue
        if _ESM.match(line):
            in_esm = True
            out.append("")
            continue
        if _HEADING.match(line):
            line = _REACT_ID.sub(lambda m: " {#" + m.group(1) + "}", line)
        line = _JSX_COMMENT.sub("", line)
        if line.lstrip().startswith(":::"):
            container = _container_match(line)
            if container:
                out.append(_container(container))
                continue
        if _JSX_ONLY.match(line):
            out.append(_tag_text(line))
            continue
        if _JSX_OPEN_UNCLOSED.match(line):
            in_tag = True
            out.append(_tag_text(line))
            continue
        if "<" in line:
            line = _JSX_TAG.sub("", line)
        out.append(line)
    return out


def vitepress_slug(text: str) -> str:
    """VitePress's heading slug (``@mdit-vue/shared``'s ``slugify``) of a heading's text.

    Accents are removed after NFKD, runs of punctuation and spaces become one hyphen, hyphens
    at either end go, a leading digit gets ``_`` and the result is lower-cased.
    """
    text = unicodedata.normalize("NFKD", text)
    text = _COMBINING.sub("", text)
    text = _CONTROL.sub("", text)
    text = _SPECIAL.sub("-", text)
    text = re.sub(r"-{2,}", "-", text).strip("-")
    text = re.sub(r"^(\d)", r"_\1", text)
    return text.lower()


_COMBINING = re.compile("[\u0300-\u036f]")
_CONTROL = re.compile("[\u0000-\u001f]")
_SPECIAL = re.compile(r"""[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:"'“”‘’<>,.?/]+""")
