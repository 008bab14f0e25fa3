"""The ``sphinx`` source: a published Sphinx site mirrored into a folder and indexed from it.

When the source is built, the site's ``searchindex.js`` lists its pages; each page's raw source
(``_sources/…``) is downloaded, or its HTML converted to Markdown when the site publishes no
sources, into the mirror folder, and ``objects.inv`` is kept beside them. The folder is then
an ordinary doc tree (the ``markdown`` kind's rules: the reST extractor, locations, watching),
so a Sphinx site searches, resolves and ranks like local pages, and its results link to the
published pages (``{url}/{docname}.html#{anchor}``). Each object ``objects.inv`` names is an
alias of the block that documents it (``api#pkg.func``): its autodoc directive's, else the
one holding its anchor, else the first whose line opens with the name. A mirror younger than
``refresh_hours`` is used as it is (restarts do not fetch again, build helpers never do); a site
that cannot be reached leaves the last mirror serving and logs why, so the daemon starts
either way.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import re
import time
from dataclasses import replace
from pathlib import Path

from scriptorium.plugin import SourceConfig, SourceContext, SourceDocument
from scriptorium_plugins.docsites.fetching import FetchFailed, PageCache, PoliteClient, write_atomic
from scriptorium_plugins.docsites.mirror import default_folder
from scriptorium_plugins.markdown.source import MarkdownSource
from scriptorium_plugins.sphinxsite.site import (
    SiteFormatError,
    SitePage,
    html_page_markdown,
    local_name,
    parse_inventory,
    parse_searchindex,
    source_url,
)

log = logging.getLogger(__name__)

INCLUDE = ("*.rst", "*.md")
STAMP = ".sphinx-mirror.json"
OBJECTS = ".sphinx-objects.json"
HTTP_CACHE = ".http-cache"


class SiteMirror:
    """Downloads a site's pages into ``folder``; one instance per source."""

    def __init__(self, url: str, folder: Path, timeout: float, max_pages: int) -> None:
        self.url = url.rstrip("/")
        self.folder = folder
        self.timeout = timeout
        self.max_pages = max_pages

    def fresh(self, hours: float) -> bool:
        try:
            stamp = json.loads((self.folder / STAMP).read_text("utf-8"))
        except (OSError, ValueError):
            return False
        return stamp.get("url") == self.url and time.time() - stamp.get("at", 0) < hours * 3600

    def refresh(self) -> dict:
        """Mirror the site; returns what was fetched. Raises on a site that is not Sphinx's.

        Requests carry the validators of the last mirror (``.http-cache/``), so a site that
        has not changed answers 304s and no page is rewritten.
        """
        client = PoliteClient(PageCache(self.folder / HTTP_CACHE), self.timeout, 0.0)
        try:
            index = client.get(f"{self.url}/searchindex.js")
            pages = parse_searchindex(index.text)[: self.max_pages]
            objects: dict[str, list[tuple[str, str]]] = {}
            try:
                objects = parse_inventory(client.get(f"{self.url}/objects.inv").body)
            except FetchFailed:
                pass  # a site without objects.inv has no object names
            except SiteFormatError as exc:
                log.warning("sphinx site %s: %s", self.url, exc)
            written = {self._page(client, page) for page in pages}
        finally:
            client.close()
        written.discard(None)
        for stale in self.folder.rglob("*"):
            relative = stale.relative_to(self.folder).as_posix()
            if stale.is_file() and stale.suffix in (".rst", ".md") and relative not in written:
                stale.unlink()
        write_atomic(self.folder / OBJECTS, json.dumps(objects).encode("utf-8"))
        report = {"url": self.url, "at": time.time(), "pages": len(written)}
        write_atomic(self.folder / STAMP, json.dumps(report).encode("utf-8"))
        return report

    def _page(self, client: PoliteClient, page: SitePage) -> str | None:
        """Mirror one page: its published source, else its HTML as Markdown."""
        try:
            response = client.get(source_url(self.url, page))
            from_html = "html" in response.content_type
        except FetchFailed:
            from_html = True
        if from_html:
            try:
                response = client.get(f"{self.url}/{page.docname}.html")
            except FetchFailed:
                return None
            text = html_page_markdown(response.text)
        else:
            text = response.text
        name = local_name(page, from_html)
        path = self.folder / name
        try:
            if path.read_text("utf-8") == text:
                return name  # unchanged: not rewritten, so not re-indexed
        except OSError:
            pass
        write_atomic(path, text.encode("utf-8"))
        return name


def _documenting(blocks: list, name: str, anchor: str) -> int | None:
    """The block that documents object ``name``: its autodoc directive (``::: name``), else
    its anchor, else a line that opens with the name (a ``py:function`` signature)."""
    opening = re.compile(rf"(?m)^[ \t]*(?:::: )?{re.escape(name)}\b")
    for test in (
        lambda b: f"::: {name}" in b.body,
        lambda b: anchor in (b.anchor, *b.aliases),
        lambda b: opening.search(b.body) is not None,
    ):
        found = next((i for i, b in enumerate(blocks) if test(b)), None)
        if found is not None:
            return found
    return None


class SphinxSiteSource(MarkdownSource):
    """A published Sphinx site, read from its mirror folder as a doc tree."""

    kind = "sphinx"
    include = INCLUDE

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        url = str(config.options.get("url") or "").strip()
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"source {config.name!r}: url must be an http(s) URL, not {url!r}")
        cache_dir = str(config.options.get("cache_dir") or "")
        folder = Path(cache_dir) if cache_dir else default_folder("sphinx", config.name)
        folder.mkdir(parents=True, exist_ok=True)
        options = {k: v for k, v in config.options.items() if k not in ("url", "cache_dir")}
        options.setdefault("include", list(INCLUDE))
        super().__init__(replace(config, root=folder, options=options), context)
        self.site_url = url.rstrip("/")
        mirror = SiteMirror(
            url,
            self.root,
            float(config.options.get("timeout_seconds", 10.0)),
            int(config.options.get("max_pages", 5000)),
        )
        # A build helper (a spawned child of the daemon) reads the mirror its parent made.
        helper = multiprocessing.parent_process() is not None
        if not helper and not mirror.fresh(float(config.options.get("refresh_hours", 24.0))):
            try:
                report = mirror.refresh()
                log.info("sphinx site %s: mirrored %d pages", url, report["pages"])
            except (FetchFailed, SiteFormatError, OSError) as exc:
                log.warning(
                    "sphinx site %s could not be mirrored (%s); serving the last mirror", url, exc
                )
        self._objects = self._read_objects()

    def _read_objects(self) -> dict[str, list[tuple[str, str]]]:
        try:
            raw = json.loads((self.root / OBJECTS).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return raw if isinstance(raw, dict) else {}

    def document_from_text(self, relpath: str, text: str) -> SourceDocument | None:
        doc = super().document_from_text(relpath, text)
        if doc is None:
            return doc
        named = self._objects.get(self.page_location(relpath)) or self._objects.get(
            relpath.rsplit(".", 1)[0]
        )
        if not named:
            return doc
        blocks = list(doc.blocks)
        for name, anchor in named:
            position = _documenting(blocks, name, anchor)
            if position is None or name in (blocks[position].anchor, *blocks[position].aliases):
                continue
            block = blocks[position]
            blocks[position] = replace(block, aliases=(*block.aliases, name))
        return replace(doc, blocks=tuple(blocks))

    def url_for(self, path: str, anchor: str = "") -> str:
        """The published page: ``{url}/{docname}.html#{anchor}``."""
        docname = path.rsplit(".", 1)[0] if path.endswith((".rst", ".md")) else path
        suffix = f"#{anchor}" if anchor else ""
        return f"{self.site_url}/{docname}.html{suffix}"
