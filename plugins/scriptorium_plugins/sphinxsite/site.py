"""Reading a published Sphinx site: its ``searchindex.js``, ``objects.inv`` and page sources.

A Sphinx HTML build publishes, beside its pages, ``searchindex.js`` (every page's docname,
source file name and title), ``objects.inv`` (every documented object: name, role, page and
anchor, zlib-compressed) and, unless ``html_copy_source`` is off, each page's source as
``_sources/<file name><html_sourcelink_suffix>`` (``usage/quickstart.rst.txt``). The raw source
is preferred, so the reST extractor cuts it with docutils' section ids, which are the ids the
site rendered; a page without a published source is read from its HTML instead.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass

from bs4 import BeautifulSoup

from scriptorium_plugins.mkdocs.pages import html_to_markdown

_SET_INDEX = re.compile(r"Search\.setIndex\((.*)\)\s*;?\s*$", re.S)
_INVENTORY_LINE = re.compile(r"^(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+(\S*)\s+(.*)$")
SOURCE_SUFFIXES = (".rst", ".md", ".txt")


class SiteFormatError(ValueError):
    """A published file is not what Sphinx writes."""


@dataclass(frozen=True, slots=True)
class SitePage:
    docname: str  # ``usage/quickstart``
    filename: str  # ``usage/quickstart.rst``
    title: str


def _safe_docname(docname: object) -> bool:
    if not isinstance(docname, str) or not docname.strip() or "\x00" in docname:
        return False
    if docname.startswith(("/", "~")) or "\\" in docname:
        return False
    return all(part not in ("", ".", "..") for part in docname.split("/"))


def parse_searchindex(text: str) -> list[SitePage]:
    """The pages ``searchindex.js`` lists, in its order."""
    match = _SET_INDEX.search(text.strip())
    try:
        data = json.loads(match.group(1) if match else text)
    except (ValueError, RecursionError) as exc:
        raise SiteFormatError(f"searchindex.js is not Sphinx's: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("docnames"), list):
        raise SiteFormatError("searchindex.js has no docnames")
    docnames = data["docnames"]
    filenames = data.get("filenames") or []
    titles = data.get("titles") or []
    pages = []
    for position, docname in enumerate(docnames):
        if not _safe_docname(docname):  # mirrored files must stay inside the mirror folder
            continue
        filename = filenames[position] if position < len(filenames) else docname + ".rst"
        title = titles[position] if position < len(titles) else docname
        filename = filename if isinstance(filename, str) else docname + ".rst"
        pages.append(SitePage(docname, filename, str(title)))
    return pages


def parse_inventory(raw: bytes) -> dict[str, list[tuple[str, str]]]:
    """``objects.inv`` (version 2) as ``{docname: [(object name, anchor), ...]}``."""
    lines = raw.split(b"\n", 4)
    if len(lines) < 5 or not lines[0].startswith(b"# Sphinx inventory version 2"):
        raise SiteFormatError("objects.inv is not a version 2 Sphinx inventory")
    try:
        body = zlib.decompress(lines[4]).decode("utf-8", "replace")
    except zlib.error as exc:
        raise SiteFormatError(f"objects.inv does not decompress: {exc}") from exc
    objects: dict[str, list[tuple[str, str]]] = {}
    for line in body.splitlines():
        match = _INVENTORY_LINE.match(line)
        if match is None:
            continue
        name, _role, _priority, uri = match.group(1, 2, 3, 4)
        page, _, anchor = uri.partition("#")
        anchor = anchor.replace("$", name)
        for suffix in (".html", "/"):
            if page.endswith(suffix):
                page = page[: -len(suffix)]
        objects.setdefault(page or "index", []).append((name, anchor))
    return objects


def source_url(base: str, page: SitePage, suffix: str = ".txt") -> str:
    """Where Sphinx publishes a page's source (``_sources/<file name>.txt``)."""
    name = page.filename if page.filename.endswith(suffix) else page.filename + suffix
    return f"{base}/_sources/{name}"


def local_name(page: SitePage, from_html: bool) -> str:
    """The mirrored file's path: the source's own suffix, or ``.md`` for converted HTML."""
    if from_html:
        return page.docname + ".md"
    for suffix in SOURCE_SUFFIXES[:2]:
        if page.filename.endswith(suffix):
            return page.docname + suffix
    return page.docname + ".rst"


def html_page_markdown(html: str) -> str:
    """A Sphinx HTML page as Markdown whose headings keep the ids of their sections."""
    soup = BeautifulSoup(html, "html.parser")
    for section in soup.select("section[id], div.section[id]"):
        heading = section.find(re.compile(r"^h[1-6]$"))
        if heading is not None and not heading.get("id"):
            heading["id"] = section["id"]
    markdown, _meta = html_to_markdown(str(soup))
    return markdown
