"""The folder a crawled site is kept in: its pages as Markdown, and what the last crawl did.

The folder is an ordinary doc tree for the ``markdown`` kind's rules; beside the pages it holds
``.crawl.json`` (when and from where the last crawl ran, its report, and which URL each page
came from) and ``.http-cache/`` (the fetched bodies and their validators). A page is written
only when its text changed, so an unchanged site re-indexes nothing. Pages the site no longer
has are removed after a complete crawl; after a partial one only those that answered 404 or
410 are, so a page that failed for a while keeps its last copy.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from scriptorium.plugin import CrawlReport
from scriptorium_plugins.docsites.fetching import write_atomic
from scriptorium_plugins.docsites.tally import COMPLETE, CrawlTally, report_from_json

STAMP = ".crawl.json"
CACHE = ".http-cache"
GONE = (404, 410)


def default_folder(kind: str, name: str) -> Path:
    """Where a fetched site of ``kind`` named ``name`` is kept without a ``cache_dir``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "site"
    return Path(base) / "scriptorium" / kind / safe


class Mirror:
    def __init__(self, folder: Path, converter: int = 0) -> None:
        self.folder = folder
        self.converter = converter
        self.cache_folder = folder / CACHE
        self.stamp = self._read_stamp()
        self.written: dict[str, str] = {}  # relpath -> page URL, this crawl

    def _read_stamp(self) -> dict[str, Any]:
        try:
            stamp = json.loads((self.folder / STAMP).read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        return stamp if isinstance(stamp, dict) else {}

    def fresh(self, key: str, hours: float) -> bool:
        """Whether the last crawl was made with ``key`` (the site and the settings that shape
        the crawl) and is younger than ``hours``."""
        at = self.stamp.get("at", 0)
        same = self.stamp.get("key") == key
        return same and isinstance(at, int | float) and time.time() - at < hours * 3600

    def put(self, relpath: str, url: str, text: str) -> None:
        """Keep one page (rewritten only when its text changed)."""
        if relpath in self.written:
            return  # two URLs for one file: the first one wins
        self.written[relpath] = url
        path = self.folder / relpath
        try:
            if path.read_text("utf-8") == text:
                return
        except OSError:
            pass
        write_atomic(path, text.encode("utf-8"))

    def reuse(self, relpath: str, url: str) -> bool:
        """Keep a page as the last crawl wrote it (its source answered 304), when the same
        converter wrote it from the same URL; False when it has to be made again."""
        pages = self.stamp.get("pages") or {}
        if self.stamp.get("converter") != self.converter or pages.get(relpath) != url:
            return False
        if relpath in self.written or not (self.folder / relpath).is_file():
            return False
        self.written[relpath] = url
        return True

    def finish(self, key: str, tally: CrawlTally) -> None:
        """Drop the pages the site no longer has and record the crawl."""
        before: dict[str, str] = dict(self.stamp.get("pages") or {})
        gone = {url for url, status, _error in tally.failures if status in GONE}
        pages = dict(self.written)
        if tally.state != "failed":
            for path in self.folder.rglob("*.md"):
                relpath = path.relative_to(self.folder).as_posix()
                if relpath in pages:
                    continue
                if tally.state == COMPLETE or before.get(relpath) in gone:
                    path.unlink()
                elif relpath in before:
                    pages[relpath] = before[relpath]  # kept from an earlier crawl
        else:
            pages = {**before, **pages}
        # A crawl that got nothing is tried again at the next start.
        at = self.stamp.get("at", 0) if tally.state == "failed" else time.time()
        self.stamp = {
            "key": key,
            "at": at,
            "converter": self.converter,
            "report": tally.as_json(),
            "pages": pages,
        }
        write_atomic(self.folder / STAMP, json.dumps(self.stamp, sort_keys=True).encode("utf-8"))

    def report(self) -> CrawlReport | None:
        report = self.stamp.get("report")
        return report_from_json(report) if isinstance(report, dict) else None

    def url_of(self, relpath: str) -> str:
        pages = self.stamp.get("pages") or {}
        return str(pages.get(relpath, "")) if isinstance(pages, dict) else ""
