"""Documentation sites for the crawl tests: a real docs tree from Debian, served on loopback.

``debian_html(package)`` downloads a Debian ``-doc`` package with ``apt-get download`` (the
machine's only route to real published HTML; ``apt-get update`` first when the package lists
are missing), unpacks it with ``dpkg-deb`` once into
``~/.cache/scriptorium/debian/<package>`` and returns its HTML folder. ``SiteServer`` serves a
folder with ``http.server`` the way a static host does, plus ETags (``If-None-Match`` answers
304), and can be told to refuse some paths (403), to never answer others (a timeout for the
client), or to hold others until the test releases them; it records every request with the
status it got.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "scriptorium/debian"


def debian_html(package: str) -> Path:
    """``/usr/share/doc/<package>/html`` of a Debian package, fetched and unpacked once."""
    target = CACHE / package
    html = target / "usr/share/doc" / package / "html"
    if (target / ".complete").exists():
        return html
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        pytest.fail(f"{package} is fetched with apt-get and dpkg-deb, which this machine lacks")
    with tempfile.TemporaryDirectory() as scratch:
        fetched = _apt_download(package, scratch)
        if fetched.returncode != 0:  # a fresh machine has no package lists yet
            sudo = [] if os.geteuid() == 0 else ["sudo"]
            subprocess.run([*sudo, "apt-get", "update", "-qq"], capture_output=True)
            fetched = _apt_download(package, scratch)
        debs = list(Path(scratch).glob("*.deb"))
        if fetched.returncode != 0 or not debs:
            pytest.fail(f"apt-get download {package} failed: {fetched.stderr.strip()[-300:]}")
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(target)], check=True)
    (target / ".complete").write_text(debs[0].name, "utf-8")
    return html


def _apt_download(package: str, folder: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["apt-get", "download", package], cwd=folder, capture_output=True, text=True
    )


class _Handler(SimpleHTTPRequestHandler):
    site: SiteServer

    def log_message(self, *args) -> None:
        pass

    def send_response(self, code: int, message: str | None = None) -> None:
        self.site.requests.append((self.path, code))
        super().send_response(code, message)

    def end_headers(self) -> None:
        tag = getattr(self, "_etag", "")
        if tag:
            self.send_header("ETag", tag)
        super().end_headers()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in self.site.forbidden:
            self.send_error(403)
            return
        if path in self.site.hanging or path in self.site.holding:
            self.site.held.set()
            self.site.release.wait(120)  # bounded only so a broken test cannot hang the run
            if path in self.site.hanging:
                return  # never answered: the client timed out long ago
        file = Path(self.translate_path(path))
        if file.is_file():
            stat = file.stat()
            self._etag = (
                '"' + hashlib.sha1(f"{stat.st_mtime_ns}-{stat.st_size}".encode()).hexdigest() + '"'
            )
            if self.headers.get("If-None-Match") == self._etag:
                self.send_response(304)
                self.end_headers()
                return
        super().do_GET()


class SiteServer:
    def __init__(self, root: Path, forbidden=(), hanging=(), holding=()) -> None:
        self.root = root
        self.forbidden = set(forbidden)
        self.hanging = set(hanging)  # never answered
        self.holding = set(holding)  # answered once the test sets ``release``
        self.requests: list[tuple[str, int]] = []
        self.held = threading.Event()
        self.release = threading.Event()
        handler = type("Handler", (_Handler,), {"site": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def statuses(self, path: str) -> list[int]:
        return [code for requested, code in self.requests if requested.split("?")[0] == path]


@contextmanager
def serving(root: Path, forbidden=(), hanging=(), holding=()) -> Iterator[SiteServer]:
    site = SiteServer(root, forbidden, hanging, holding)
    thread = threading.Thread(target=site.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.release.set()
        site.server.shutdown()
        site.server.server_close()


PAGE = (
    "<html><head><title>{title}</title></head><body>"
    "<nav><a href='/index.html'>Home</a>{links}</nav>"
    "<main><h1 id='{id}'>{title}</h1><p>{text}</p></main></body></html>"
)


def page(title: str, text: str, links: tuple[str, ...] = ()) -> str:
    """A small page: navigation with ``links``, then its main content under an ``<h1 id>``."""
    anchors = "".join(f"<a href='{link}'>{link}</a>" for link in links)
    slug = title.lower().replace(" ", "-")
    return PAGE.format(title=title, text=text, links=anchors, id=slug)
