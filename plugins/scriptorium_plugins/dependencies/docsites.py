"""A dependency's published documentation site, attached to it at the pinned version.

For a library whose metadata names a documentation URL, the site is probed for a folder of the
pinned version (``<base>/1.2/``, ``<base>/v1.2/``, ``<base>/en/1.2/``, ``<base>/1.2.3/``; else
the base, as ``latest``), then for what it serves (``llms.txt`` or ``llms-full.txt``; MkDocs'
``search/search_index.json``; Sphinx's ``objects.inv``; else plain HTML), and its pages are
fetched by the existing kinds (``llms_txt``, ``sphinx``, ``site``; an MkDocs site is crawled as
``site`` pages) into a folder of their own, bounded, cached and revalidated as those kinds do.
The decision is kept beside the pages (``attach.json``), so a restart or a build helper reads
the pages without asking the network again until ``docs_refresh_hours`` pass.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scriptorium.plugin import SourceConfig, SourceContext

log = logging.getLogger("scriptorium.dependencies")

DOCS_PREFIX = "docs@"
LATEST = "latest"
DECISION = "attach.json"
PAGE_SUFFIXES = (".md", ".rst")
# The kinds' own stamps: a folder holding one was fetched to the end at least once.
STAMPS = (".crawl.json", ".sphinx-mirror.json")
KEEP_HOURS = 1e9  # a kind built only to read its kept copy never finds it due
_MAJOR_MINOR = re.compile(r"^v?(\d+)\.(\d+)")


@dataclass(slots=True)
class DocsOptions:
    """The ``docs_*`` keys of a dependencies source."""

    enabled: bool = False
    max_pages: int = 20
    cache_dir: str = ""
    refresh_hours: float = 24.0
    timeout_seconds: float = 10.0
    requests_per_second: float = 2.0

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> DocsOptions:
        return cls(
            enabled=bool(options.get("docs_sites", False)),
            max_pages=int(options.get("docs_max_pages", 20)),
            cache_dir=str(options.get("docs_cache_dir", "") or ""),
            refresh_hours=float(options.get("docs_refresh_hours", 24.0)),
            timeout_seconds=float(options.get("docs_timeout_seconds", 10.0)),
            requests_per_second=float(options.get("docs_requests_per_second", 2.0)),
        )


@dataclass(slots=True)
class Attached:
    """What was attached to one library (or why nothing was)."""

    library: str
    url: str = ""
    kind: str = ""
    version: str = ""
    detail: str = ""
    folder: Path | None = None
    #: Page paths inside ``folder`` (``quickstart.md``), in path order.
    pages: list[str] = field(default_factory=list)
    #: The kind's source reading the folder (the published URL of a page); None in helpers.
    reader: Any = None

    @property
    def segment(self) -> str:
        """``docs@1.2``: the folder a library's pages are listed under."""
        return f"{DOCS_PREFIX}{self.version}"

    def url_for(self, relpath: str, anchor: str = "") -> str:
        if self.reader is None:
            return ""
        return str(self.reader.url_for(relpath, anchor))


def version_folders(base: str, version: str) -> list[tuple[str, str]]:
    """(URL, docs version) to probe for ``version``, in order: the major.minor forms, then
    the whole version."""
    base = base.rstrip("/")
    forms: list[tuple[str, str]] = []
    match = _MAJOR_MINOR.match(version)
    if match:
        short = f"{match.group(1)}.{match.group(2)}"
        forms += [(f"{base}/{short}/", short), (f"{base}/v{short}/", short)]
        forms.append((f"{base}/en/{short}/", short))
    if version and (not match or version != short):
        forms.append((f"{base}/{version}/", version))
    return forms


class Unreached(Exception):
    """The documentation site did not answer at all."""


def _ok(client: Any, url: str) -> bool:
    """Whether ``url`` answers 200; a network error is raised as :class:`Unreached`."""
    import httpx

    try:
        with client.stream("GET", url) as response:  # the status only: the body is not read
            status = response.status_code
    except httpx.TimeoutException:
        raise Unreached("timed out") from None
    except httpx.HTTPError as exc:
        raise Unreached(f"unreachable: {type(exc).__name__}") from None
    return status == 200


def probe(client: Any, base: str, version: str) -> tuple[str, str, str, bool]:
    """(docs URL, docs version, kind, full) for a library's documentation ``base``."""
    chosen, docs_version = "", LATEST
    for url, short in version_folders(base, version):
        if _ok(client, url):
            chosen, docs_version = url, short
            break
    if not chosen:
        chosen = base.rstrip("/") + "/"
        if not _ok(client, chosen):
            raise Unreached(f"{chosen} did not answer 200")
    for name, kind, full in (
        ("llms.txt", "llms_txt", False),
        ("llms-full.txt", "llms_txt", True),
        ("search/search_index.json", "mkdocs", False),
        ("objects.inv", "sphinx", False),
    ):
        if _ok(client, chosen + name):
            return chosen, docs_version, kind, full
    return chosen, docs_version, "site", False


def _folder_for(options: DocsOptions, source: str, library: str) -> Path:
    base = options.cache_dir or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scriptorium"
    )
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in library) or "library"
    return Path(base) / "dependency-docs" / source / safe


def _reader(
    decision: dict[str, Any],
    folder: Path,
    options: DocsOptions,
    context: SourceContext,
    fetch: bool,
) -> Any:
    """The existing kind's source over ``folder``; with ``fetch`` it fetches the site when its
    copy is older than ``docs_refresh_hours``, without it only reads the copy kept."""
    kind, url = decision["kind"], decision["url"]
    shared = {
        "cache_dir": str(folder),
        "refresh_hours": options.refresh_hours if fetch else KEEP_HOURS,
        "timeout_seconds": options.timeout_seconds,
        "max_pages": options.max_pages,
    }
    name = f"docs-{folder.name}"
    if kind == "sphinx":
        from scriptorium_plugins.sphinxsite.source import SphinxSiteSource

        config = SourceConfig(name=name, kind=kind, options={**shared, "url": url})
        return SphinxSiteSource(config, context)
    from scriptorium_plugins.docsites.source import LlmsTxtSource, SiteSource

    shared["requests_per_second"] = options.requests_per_second
    shared["max_crawl_minutes"] = 2.0
    if kind == "llms_txt":
        settings = {**shared, "url": url, "full": bool(decision.get("full"))}
        return LlmsTxtSource(SourceConfig(name=name, kind=kind, options=settings), context)
    settings = {**shared, "start_urls": [url]}
    return SiteSource(SourceConfig(name=name, kind="site", options=settings), context)


def _pages(folder: Path) -> list[str]:
    """The page files a kind kept in ``folder`` (hidden folders and files left out)."""
    found = []
    for path in folder.rglob("*"):
        relpath = path.relative_to(folder).as_posix()
        if path.suffix in PAGE_SUFFIXES and not any(p.startswith(".") for p in relpath.split("/")):
            found.append(relpath)
    return sorted(found)


def _read_decision(folder: Path) -> dict[str, Any]:
    try:
        decision = json.loads((folder / DECISION).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return decision if isinstance(decision, dict) else {}


class DocsAttacher:
    """Attaches each library's documentation site; remembers what it did per library.

    Only a background thread asks the network (one library after the other), so a listing
    never waits on a site: it lists the pages kept so far, and the pages a fetch adds are
    indexed at the next listing (``[server] rescan_interval``, or a manifest edit).
    """

    def __init__(self, source: str, options: DocsOptions, context: SourceContext) -> None:
        self.source = source
        self.options = options
        self.context = context
        self.helper = multiprocessing.parent_process() is not None
        self.attached: dict[str, Attached] = {}
        self._tried: dict[str, float] = {}  # library -> when its site was last asked
        self._queue: list[tuple[str, str, str, Path]] = []
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._busy: set[str] = set()  # libraries queued or being fetched
        #: Counts the fetches finished: a listing that sees it change lists the pages again.
        self.fetched = 0
        self._said = ""

    def attach(self, library: str, version: str, urls: tuple[str, ...]) -> Attached | None:
        """The library's attached docs as kept now (a fetch is queued when one is due); None
        when its metadata names no documentation URL."""
        base = next((u for u in urls if u.startswith(("http://", "https://"))), "")
        if not base:
            return None
        folder = _folder_for(self.options, self.source, f"{library}@{version}")
        decision = _read_decision(folder)
        age = time.time() - float(decision.get("at", 0))
        fresh = decision.get("base") == base and age < self.options.refresh_hours * 3600
        with self._lock:
            known = self.attached.get(library)
        if known is None and decision.get("base") == base:
            kept = self._read(library, decision, folder, fetch=False)
            with self._lock:
                known = self.attached.setdefault(library, kept)
        elif known is not None and known.reader is not None and known.folder is not None:
            known.pages = _pages(known.folder)
        if not (fresh or self.helper):
            self._queue_fetch(library, version, base, folder)
        return known

    def _queue_fetch(self, library: str, version: str, base: str, folder: Path) -> None:
        with self._lock:
            tried = self._tried.get(library)
            if tried is not None and time.monotonic() - tried < self.options.refresh_hours * 3600:
                return
            if library in self._busy:
                return
            self._busy.add(library)
            self._tried[library] = time.monotonic()
            self._queue.append((library, version, base, folder))
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._work, name=f"docs-sites-{self.source}", daemon=True
                )
                self._worker.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._worker = None
                    break
                library, version, base, folder = self._queue.pop(0)
            try:
                found = self._fetch(library, version, base, folder)
            except Exception as exc:  # one library's site never stops the others'
                log.warning("%s: documentation site of %s: %r", self.source, library, exc)
                found = Attached(library, detail=f"could not be read: {type(exc).__name__}")
            with self._lock:
                self.attached[library] = found
                self._busy.discard(library)
                self.fetched += 1
        self.say()

    def _fetch(self, library: str, version: str, base: str, folder: Path) -> Attached:
        import httpx

        old = _read_decision(folder)
        headers = {"User-Agent": "Scriptorium (documentation indexer)"}
        timeout = self.options.timeout_seconds
        try:
            with httpx.Client(timeout=timeout, follow_redirects=True, headers=headers) as client:
                url, docs_version, kind, full = probe(client, base, version)
        except Unreached as exc:
            if old.get("base") == base:  # the last copy keeps serving
                kept = self._read(library, old, folder, fetch=False)
                if kept.pages:
                    kept.detail = f"not reached ({exc}); serving the copy fetched before"
                    return kept
            return Attached(library, detail=f"not reached: {base} ({exc})")
        folder.mkdir(parents=True, exist_ok=True)
        decision = {
            "base": base,
            "url": url,
            "version": docs_version,
            "kind": kind,
            "full": full,
            "at": time.time(),
        }
        if old.get("detected") == kind and old.get("url") == url:
            decision.update(kind="site", detected=kind)  # its kind's files failed last time
        (folder / DECISION).write_text(json.dumps(decision, sort_keys=True), "utf-8")
        return self._read(library, decision, folder, fetch=True)

    def _read(
        self, library: str, decision: dict[str, Any], folder: Path, *, fetch: bool
    ) -> Attached:
        """The pages kept for ``decision``; with ``fetch`` its kind fetches them when due."""
        found = Attached(
            library,
            url=str(decision.get("url", "")),
            kind=str(decision.get("kind", "")),
            version=str(decision.get("version", LATEST)),
            folder=folder / "pages",
        )
        pages = folder / "pages"
        if not fetch and not any((pages / stamp).is_file() for stamp in STAMPS):
            found.detail = "not fetched yet"
            return found
        try:
            found.reader = _reader(decision, pages, self.options, self.context, fetch)
        except (OSError, ValueError) as exc:
            found.detail = f"could not be read: {exc}"
            return found
        found.pages = _pages(pages)
        if fetch and not found.pages and found.kind != "site":
            # The kind's own files could not be read (an older searchindex.js, an empty
            # llms.txt): its HTML pages are crawled as any site's are.
            plain = {**decision, "kind": "site", "detected": found.kind}
            (folder / DECISION).write_text(json.dumps(plain, sort_keys=True), "utf-8")
            return self._read(library, plain, folder, fetch=True)
        report = getattr(found.reader, "crawl_report", lambda: None)()
        crawled = f" ({report.detail})" if report is not None and report.detail else ""
        found.detail = f"attached {found.kind} at {found.version}: {len(found.pages)} pages"
        if found.kind == "mkdocs":
            found.detail += ", its HTML pages crawled"
        if decision.get("detected"):
            found.detail += f", crawled as HTML: its {decision['detected']} files could not be read"
        found.detail += crawled
        return found

    def say(self) -> str:
        """One sentence on every library's docs site; logged when it changes and no fetch is
        under way (so a start logs one line)."""
        with self._lock:
            done = list(self.attached.values())
            busy = self._worker is not None
        attached = [a for a in done if a.pages]
        missed = [a for a in done if not a.pages]
        line = f"documentation sites: {len(attached)} attached"
        if attached:
            line += " (" + ", ".join(f"{a.library} {a.version}" for a in attached) + ")"
        if missed:
            listed = ", ".join(f"{a.library}: {a.detail}" for a in missed)
            line += f", {len(missed)} not attached ({listed})"
        if busy:
            return line + "; fetching"
        with self._lock:
            said, self._said = self._said, line
        if line != said and not self.helper:
            log.info("%s: %s", self.source, line)
        return line
