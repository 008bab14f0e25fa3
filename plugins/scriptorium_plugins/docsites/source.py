"""The ``site`` and ``llms_txt`` sources: a documentation site crawled into a folder and indexed.

Like the ``sphinx`` kind, the site is fetched when the source is built (at start-up, when the
last crawl is older than ``refresh_hours``), kept as Markdown pages in a folder, and that
folder is then an ordinary doc tree: the Markdown extractor cuts it, its locations resolve like
local pages, and its results link to the published pages. Every page is fetched with the
validators of its kept copy, so a refresh of an unchanged site is a round of 304s. What the
crawl did is kept beside the pages and shown by ListSources; a site that cannot be reached
leaves the last copy serving and says so.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import threading
import time
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from scriptorium.plugin import CrawlReport, SourceConfig, SourceContext
from scriptorium_plugins.docsites.convert import CONVERTER_VERSION, page_markdown
from scriptorium_plugins.docsites.crawl import (
    SiteCrawl,
    is_html,
    mirror_path,
    normalize,
    scope_for,
)
from scriptorium_plugins.docsites.fetching import FetchFailed, PageCache, PoliteClient
from scriptorium_plugins.docsites.keys import DEFAULT_RATE, LLMS_KEYS, SITE_KEYS
from scriptorium_plugins.docsites.llms import linked_urls, split_full
from scriptorium_plugins.docsites.mirror import Mirror, default_folder
from scriptorium_plugins.docsites.tally import (
    CRAWLING,
    OUT_OF_SCOPE,
    OVER_BOUND,
    CrawlTally,
    report_from_json,
)
from scriptorium_plugins.markdown.source import MarkdownSource
from scriptorium_plugins.mkdocs.pages import with_header

log = logging.getLogger(__name__)
# Keys that do not change what a crawl fetches: changing them does not make one due.
_NOT_SHAPING = frozenset({"refresh_hours", "timeout_seconds", "requests_per_second", "cache_dir"})


def _http_url(config: SourceConfig, key: str, value: object) -> str:
    url = str(value or "").strip()
    if not url.startswith(("http://", "https://")) or not urlsplit(url).netloc:
        raise ValueError(f"source {config.name!r}: {key} must be an http(s) URL, not {url!r}")
    return url


class CrawledSource(MarkdownSource):
    """A site's pages kept in a folder; subclasses say how the site is read (``crawl``)."""

    own_keys: tuple[str, ...] = ()

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        options = config.options
        self.options = dict(options)  # the kind's own keys are not passed on to the tree
        self.origin = self.origin_of(config)  # refuses a bad URL before anything is written
        folder = Path(str(options.get("cache_dir") or "") or default_folder(self.kind, config.name))
        folder.mkdir(parents=True, exist_ok=True)
        names = set(self.own_keys)
        kept = {k: v for k, v in options.items() if k not in names}
        kept["include"] = ["*.md"]
        super().__init__(replace(config, root=folder, options=kept), context)
        self.mirror = Mirror(self.root, CONVERTER_VERSION)
        # A build helper (a spawned child of the daemon) reads the pages its parent kept.
        helper = multiprocessing.parent_process() is not None
        # A crawl is due when it is old, or when the settings that shape it changed.
        shape = {k: options.get(k) for k in sorted(names) if k not in _NOT_SHAPING}
        self.crawl_key = json.dumps([self.origin, shape], sort_keys=True, default=str)
        self._crawling: CrawlTally | None = None
        if helper or self.mirror.fresh(self.crawl_key, float(options.get("refresh_hours", 24.0))):
            return
        tally = CrawlTally(self.origin)
        if not self.mirror.stamp.get("pages"):
            self._crawl_now(tally)  # nothing to serve yet: the first crawl comes first
            return
        # A refresh runs beside the daemon, which serves the kept pages meanwhile; the watch
        # re-indexes the pages it rewrites.
        self._crawling = tally
        threading.Thread(
            target=self._crawl_now, args=(tally,), name=f"crawl-{config.name}", daemon=True
        ).start()

    def _crawl_now(self, tally: CrawlTally) -> None:
        options = self.options
        budget = float(options.get("max_crawl_minutes", 10.0)) * 60
        self.deadline = time.monotonic() + budget
        rate = float(options.get("requests_per_second", DEFAULT_RATE))
        client = PoliteClient(
            PageCache(self.mirror.cache_folder),
            float(options.get("timeout_seconds", 10.0)),
            1.0 / rate,
        )
        try:
            self.crawl(client, tally)
        except (OSError, RecursionError, ValueError) as exc:  # keep what was fetched; say so
            log.warning("%s source %r: crawl stopped: %r", self.kind, self.name, exc)
            tally.fail(self.origin, 0, f"crawl stopped: {type(exc).__name__}")
        finally:
            client.close()
            self.mirror.finish(self.crawl_key, tally)
            self._crawling = None
        log.info("%s source %r: %s", self.kind, self.name, tally.detail())

    def origin_of(self, config: SourceConfig) -> str:
        raise NotImplementedError

    def crawl(self, client: PoliteClient, tally: CrawlTally) -> None:
        raise NotImplementedError

    def keep_html(self, url: str, html: str, relpath: str, unchanged: bool = False) -> None:
        """Keep a page's Markdown; a page that answered 304 keeps the file made last time."""
        if unchanged and self.mirror.reuse(relpath, url):
            return
        markdown, title = page_markdown(html)
        extra = {"title": title} if title else None
        text = with_header(
            markdown, source_url=url, site=self.name, retrieved=None, converted=True, extra=extra
        )
        self.mirror.put(relpath, url, text)

    def crawl_report(self) -> CrawlReport | None:
        """What the last crawl did, or the one under way so far (ListSources shows it)."""
        running = self._crawling
        if running is None:
            return self.mirror.report()
        so_far = running.as_json()
        detail = f"{CRAWLING}: " + so_far["detail"].split(": ", 1)[1]
        return report_from_json(
            {**so_far, "state": CRAWLING, "detail": detail, "finished_at": None}
        )

    def url_for(self, path: str, anchor: str = "") -> str:
        """The published page the file was made from, plus the section anchor."""
        url = self.mirror.url_of(path)
        if not url:
            return super().url_for(path, anchor)
        return f"{url}#{anchor}" if anchor else url


class SiteSource(CrawledSource):
    """Static HTML documentation, crawled from its start URLs within its scope."""

    kind = "site"
    own_keys = tuple(k.name for k in SITE_KEYS)

    def origin_of(self, config: SourceConfig) -> str:
        starts = self.options.get("start_urls") or []
        if not starts:
            raise ValueError(f"source {config.name!r}: start_urls names no page to start from")
        self.starts = [normalize(_http_url(config, "start_urls", s)) for s in starts]
        options = self.options
        self.scope = scope_for(
            self.starts[0],
            options.get("scope", "prefix") == "origin",
            options.get("include") or (),
            options.get("exclude") or (),
        )
        return self.starts[0]

    def crawl(self, client: PoliteClient, tally: CrawlTally) -> None:
        options = self.options
        crawl = SiteCrawl(
            client,
            self.scope,
            tally,
            max_pages=int(options.get("max_pages", 500)),
            max_depth=int(options.get("max_depth", 10)),
            use_sitemap=bool(options.get("sitemap", True)),
            deadline=self.deadline,
        )

        def store(url: str, html: str, unchanged: bool) -> None:
            relpath = mirror_path(url, self.scope.prefix)
            if relpath is not None:
                self.keep_html(url, html, relpath, unchanged)

        crawl.run(self.starts, store)


class LlmsTxtSource(CrawledSource):
    """A site's ``llms.txt`` and the Markdown pages it links, or its ``llms-full.txt``."""

    kind = "llms_txt"
    own_keys = tuple(k.name for k in LLMS_KEYS)

    def origin_of(self, config: SourceConfig) -> str:
        url = _http_url(config, "url", self.options.get("url")).rstrip("/")
        name = "llms-full.txt" if self.options.get("full") else "llms.txt"
        if not url.endswith(".txt"):
            url = f"{url}/{name}"
        self.index_url = url
        return url

    def crawl(self, client: PoliteClient, tally: CrawlTally) -> None:
        try:
            index = client.get(self.index_url)
        except FetchFailed as failure:
            tally.fail(failure.url, failure.status, failure.error)
            return
        tally.got(index.unchanged)
        if self.options.get("full"):
            for page in split_full(index.text):
                text = with_header(
                    page.text,
                    source_url=self.index_url,
                    site=self.name,
                    retrieved=None,
                    converted=False,
                )
                self.mirror.put(f"{page.slug}.md", f"{self.index_url}#{page.slug}", text)
            return
        self.mirror.put("llms.md", self.index_url, index.text)
        self._linked(client, tally, linked_urls(index.text, self.index_url))

    def _linked(self, client: PoliteClient, tally: CrawlTally, urls: list[str]) -> None:
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.index_url))
        same_origin = bool(self.options.get("same_origin", True))
        limit = int(self.options.get("max_pages", 500))
        stored = 0
        for url in urls:
            if same_origin and not url.startswith(origin + "/"):
                tally.skip(OUT_OF_SCOPE)
                continue
            if stored >= limit or time.monotonic() >= self.deadline:
                tally.skip(OVER_BOUND)
                continue
            try:
                page = client.get(url)
            except FetchFailed as failure:
                tally.fail(failure.url, failure.status, failure.error)
                continue
            relpath = mirror_path(url, "/")
            if relpath is None or relpath == "llms.md":
                tally.skip(OUT_OF_SCOPE)
                continue
            tally.got(page.unchanged)
            stored += 1
            if is_html(page.content_type, page.body) and "markdown" not in page.content_type:
                self.keep_html(url, page.text, relpath, page.unchanged)
                continue
            text = with_header(
                page.text, source_url=url, site=self.name, retrieved=None, converted=False
            )
            self.mirror.put(relpath, url, text)
