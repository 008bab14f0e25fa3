"""Crawling a static documentation site: scope, robots.txt, sitemap, bounds.

The crawl starts at the configured URLs (and the URLs of the site's ``sitemap.xml``, when it
has one), follows ``<a href>`` links breadth first, and keeps to the scope: the same origin,
under the start URL's folder unless ``scope = "origin"``, matching the ``include`` patterns
and none of the ``exclude`` ones, allowed by ``robots.txt``. It stops at ``max_pages`` pages,
``max_depth`` links from a start URL, and its time budget. Every link it does not follow is
counted with the reason, every page that does not answer with its status, so the source can
say what it did.
"""

from __future__ import annotations

import posixpath
import re
import time
import xml.etree.ElementTree as ElementTree
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from urllib.parse import unquote, urlsplit, urlunsplit
from urllib.robotparser import RobotFileParser

from scriptorium_plugins.docsites.convert import page_links
from scriptorium_plugins.docsites.fetching import USER_AGENT, FetchFailed, PoliteClient
from scriptorium_plugins.docsites.tally import (
    EXCLUDED,
    NOT_HTML,
    OUT_OF_SCOPE,
    OVER_BOUND,
    ROBOTS,
    CrawlTally,
)

# Links to these are files, not pages: counted as not HTML without a request.
_FILE_SUFFIX = re.compile(
    r"\.(?:txt|rst|md|json|xml|js|mjs|css|map|png|jpe?g|gif|svg|ico|webp|pdf|zip|gz|tgz|bz2|xz"
    r"|whl|tar|inv|woff2?|ttf|eot|mp4|webm|mp3|csv|py|ipynb)$",
    re.I,
)
_SAFE_SEGMENT = re.compile(r"[^\w.\-+@]")
MAX_SITEMAPS = 10


@dataclass(frozen=True, slots=True)
class Scope:
    """Which URLs belong to the site: the origin, a folder under it, patterns over paths."""

    origin: str  # scheme://host[:port]
    prefix: str  # a path ending in "/": "/" or "/docs/v2/"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def reason_to_skip(self, url: str) -> str | None:
        parts = urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}".lower() != self.origin or parts.query:
            return OUT_OF_SCOPE
        path = parts.path or "/"
        if not path.startswith(self.prefix) and path + "/" != self.prefix:
            return OUT_OF_SCOPE
        if self.include and not any(fnmatchcase(path, p) for p in self.include):
            return EXCLUDED
        if any(fnmatchcase(path, p) for p in self.exclude):
            return EXCLUDED
        return None


def normalize(url: str) -> str:
    """A URL without its fragment, with a lower-case scheme and host and a path; a folder's
    ``index.html`` is the folder (static hosts serve one for the other)."""
    parts = urlsplit(url.strip())
    path = parts.path or "/"
    if path.endswith("/index.html"):
        path = path[: -len("index.html")]
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def scope_for(start: str, whole_origin: bool, include=(), exclude=()) -> Scope:
    parts = urlsplit(normalize(start))
    folder = "/" if whole_origin else parts.path[: parts.path.rfind("/") + 1] or "/"
    return Scope(f"{parts.scheme}://{parts.netloc}", folder, tuple(include), tuple(exclude))


def mirror_path(url: str, prefix: str) -> str | None:
    """Where a page's Markdown is kept, relative to the mirror: ``user/quickstart.md`` for
    ``{prefix}user/quickstart.html``, ``guide/index.md`` for ``{prefix}guide/``."""
    path = unquote(urlsplit(url).path or "/")
    path = path[len(prefix) :] if path.startswith(prefix) else path.lstrip("/")
    if not path or path.endswith("/"):
        path += "index"
    for suffix in (".html", ".htm", ".md"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    segments = [_SAFE_SEGMENT.sub("_", s) for s in posixpath.normpath(path).split("/")]
    if any(s in ("", ".", "..") for s in segments):
        return None
    return "/".join(segments) + ".md"


def is_html(content_type: str, body: bytes) -> bool:
    if content_type:
        return "html" in content_type.lower()
    return body[:512].lstrip().lower().startswith((b"<!doctype html", b"<html"))


class SiteCrawl:
    """One crawl of one site; ``store(url, html, unchanged)`` receives every page that
    answered (``unchanged``: a 304 re-used the kept copy)."""

    def __init__(
        self,
        client: PoliteClient,
        scope: Scope,
        tally: CrawlTally,
        *,
        max_pages: int,
        max_depth: int,
        use_sitemap: bool,
        deadline: float = float("inf"),
    ) -> None:
        self.client = client
        self.scope = scope
        self.tally = tally
        self.max_pages = max_pages
        self.max_depth = max_depth
        self.use_sitemap = use_sitemap
        self.deadline = deadline  # time.monotonic() past which no page is fetched
        self.robots = RobotFileParser()
        self._seen: set[str] = set()
        self._queue: deque[tuple[str, int]] = deque()

    def run(self, starts: list[str], store: Callable[[str, str, bool], None]) -> None:
        self._read_robots()
        for start in starts:
            self._offer(start, 0)
        if self.use_sitemap:
            for url in self._sitemap_urls():
                self._offer(url, 1)
        stored = 0
        while self._queue:
            url, depth = self._queue.popleft()
            if stored >= self.max_pages or time.monotonic() >= self.deadline:
                self.tally.skip(OVER_BOUND)
                continue
            try:
                page = self.client.get(url)
            except FetchFailed as failure:
                self.tally.fail(failure.url, failure.status, failure.error)
                continue
            final = normalize(page.url)
            if final != url:  # redirected: to a page already seen, or out of the scope
                if final in self._seen:
                    continue
                self._seen.add(final)
                reason = self.scope.reason_to_skip(final)
                if reason is not None:
                    self.tally.skip(reason)
                    continue
            if not is_html(page.content_type, page.body):
                self.tally.skip(NOT_HTML)
                continue
            self.tally.got(page.unchanged)
            html = page.text
            store(final, html, page.unchanged)
            stored += 1
            for link in page_links(html, final):
                self._offer(link, depth + 1)

    def _offer(self, url: str, depth: int) -> None:
        """Queue a link, or count why not (each URL once)."""
        if not url.startswith(("http://", "https://")):
            return
        try:
            url = normalize(url)
        except ValueError:  # not a URL at all ("http://[::1" and the like)
            return
        if url in self._seen:
            return
        self._seen.add(url)
        reason = self.scope.reason_to_skip(url)
        if reason is None and _FILE_SUFFIX.search(urlsplit(url).path):
            reason = NOT_HTML
        if reason is None and not self.robots.can_fetch(USER_AGENT, url):
            reason = ROBOTS
        if reason is None and depth > self.max_depth:
            reason = OVER_BOUND
        if reason is not None:
            self.tally.skip(reason)
            return
        self._queue.append((url, depth))

    def _read_robots(self) -> None:
        """robots.txt as urllib reads it: 401/403 forbid everything, other misses allow all."""
        try:
            text = self.client.get(self.scope.origin + "/robots.txt", conditional=False).text
        except FetchFailed as failure:
            self.robots.parse(
                ["User-agent: *", "Disallow: /"] if failure.status in (401, 403) else []
            )
            return
        self.robots.parse(text.splitlines())
        delay = self.robots.crawl_delay(USER_AGENT)
        if delay:
            self.client.pacer.interval = max(self.client.pacer.interval, float(delay))

    def _sitemap_urls(self) -> list[str]:
        pending = list(self.robots.site_maps() or ()) or [
            self.scope.origin + self.scope.prefix + "sitemap.xml"
        ]
        urls: list[str] = []
        for _ in range(MAX_SITEMAPS):
            if not pending:
                break
            try:
                body = self.client.get(pending.pop(0), conditional=False).body
                root = ElementTree.fromstring(body)
            except (FetchFailed, ElementTree.ParseError):
                continue  # a site without a sitemap is crawled from its links
            locations = [
                (node.text or "").strip() for node in root.iter() if node.tag.endswith("loc")
            ]
            if root.tag.endswith("sitemapindex"):
                pending.extend(locations)
            else:
                urls.extend(location for location in locations if location)
        return urls
