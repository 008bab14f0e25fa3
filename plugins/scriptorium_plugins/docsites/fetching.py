"""Polite, conditional HTTP for crawled sites: one request at a time, paced, revalidated.

Every page a crawl downloads is kept on disk with its ``ETag`` and ``Last-Modified``; the next
crawl asks with ``If-None-Match`` / ``If-Modified-Since``, and a ``304 Not Modified`` re-uses
the kept copy, so refreshing an unchanged site costs one small answer per page and re-reads
nothing. Requests are spaced by the source's rate limit (or the site's ``Crawl-delay``, when
longer).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

USER_AGENT = "Scriptorium (documentation indexer)"
MAX_PAGE_BYTES = 20 * 2**20


_CHARSET = re.compile(r"charset=[\"']?([\w.:-]+)", re.I)


class FetchFailed(Exception):
    """A page did not answer: its HTTP status (0 without a response) and one sentence."""

    def __init__(self, url: str, status: int, error: str) -> None:
        super().__init__(error)
        self.url = url
        self.status = status
        self.error = error


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str  # where the body came from, after redirects
    body: bytes
    content_type: str
    unchanged: bool  # a 304: the kept copy was re-used

    @property
    def text(self) -> str:
        """The body decoded by the charset its content type names (UTF-8 when none does)."""
        charset = _CHARSET.search(self.content_type)
        try:
            return self.body.decode(charset.group(1) if charset else "utf-8", "replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", "replace")


class Pacer:
    """Keeps at least ``interval`` seconds between the starts of two requests."""

    def __init__(self, interval: float) -> None:
        self.interval = max(0.0, interval)
        self._last = 0.0

    def wait(self) -> None:
        gap = self._last + self.interval - time.monotonic()
        if gap > 0:
            time.sleep(gap)
        self._last = time.monotonic()


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` in ``path`` whole or not at all (written beside it, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".part")
    temporary.write_bytes(data)
    temporary.replace(path)


class PageCache:
    """Bodies and validators of fetched pages, in a hidden folder of the mirror."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._table_path = folder / "validators.json"
        try:
            table = json.loads(self._table_path.read_text("utf-8"))
        except (OSError, ValueError):
            table = {}
        self._table: dict[str, dict[str, str]] = table if isinstance(table, dict) else {}

    def _body_path(self, url: str) -> Path:
        return self.folder / (hashlib.sha256(url.encode()).hexdigest()[:32] + ".body")

    def validators(self, url: str) -> dict[str, str]:
        """The conditional headers for ``url`` when a copy is kept, else none."""
        entry = self._table.get(url)
        if not entry or not self._body_path(url).exists():
            return {}
        headers = {}
        if entry.get("etag"):
            headers["If-None-Match"] = entry["etag"]
        if entry.get("last_modified"):
            headers["If-Modified-Since"] = entry["last_modified"]
        return headers

    def kept(self, url: str) -> Fetched | None:
        entry = self._table.get(url)
        try:
            body = self._body_path(url).read_bytes()
        except OSError:
            return None
        if entry is None:
            return None
        return Fetched(entry.get("final", url), body, entry.get("type", ""), unchanged=True)

    def keep(self, url: str, response: httpx.Response, body: bytes) -> None:
        write_atomic(self._body_path(url), body)
        self._table[url] = {
            "etag": response.headers.get("etag", ""),
            "last_modified": response.headers.get("last-modified", ""),
            "type": response.headers.get("content-type", ""),
            "final": str(response.url),
        }

    def save(self) -> None:
        """Write the validator table (once per crawl)."""
        write_atomic(self._table_path, json.dumps(self._table, sort_keys=True).encode())


class PoliteClient:
    """GETs through one HTTP client, paced, revalidating what the cache keeps."""

    def __init__(self, cache: PageCache, timeout: float, interval: float) -> None:
        self.cache = cache
        self.pacer = Pacer(interval)
        self.client = httpx.Client(
            timeout=timeout, follow_redirects=True, headers={"User-Agent": USER_AGENT}
        )

    def close(self) -> None:
        self.client.close()
        self.cache.save()

    def get(self, url: str, *, conditional: bool = True) -> Fetched:
        """The page at ``url``; a 304 returns the kept copy. Raises ``FetchFailed``."""
        headers = self.cache.validators(url) if conditional else {}
        self.pacer.wait()
        try:
            with self.client.stream("GET", url, headers=headers) as response:
                body = _read_bounded(response, url) if response.status_code == 200 else b""
        except httpx.TimeoutException:
            raise FetchFailed(url, 0, "timed out") from None
        except httpx.HTTPError as exc:
            raise FetchFailed(url, 0, f"unreachable: {type(exc).__name__}") from None
        if response.status_code == 304:
            kept = self.cache.kept(url)
            if kept is not None:
                return kept
            raise FetchFailed(url, 304, "HTTP 304 without a kept copy")
        if response.status_code != 200:
            raise FetchFailed(url, response.status_code, f"HTTP {response.status_code}")
        if conditional:
            self.cache.keep(url, response, body)
        content_type = response.headers.get("content-type", "")
        return Fetched(str(response.url), body, content_type, unchanged=False)


def _read_bounded(response: httpx.Response, url: str) -> bytes:
    """A body of at most ``MAX_PAGE_BYTES`` (a larger page is never held whole)."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_PAGE_BYTES:
            bound = MAX_PAGE_BYTES
            shown = f"{bound // 2**20} MB" if bound % 2**20 == 0 else f"{bound} bytes"
            raise FetchFailed(url, 200, f"larger than {shown}")
        chunks.append(chunk)
    return b"".join(chunks)
