"""A published Sphinx site (a real build) served over HTTP on loopback, as a ``sphinx`` source."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.calls import content
from tests.support.daemon import running

BUILT = Path(__file__).resolve().parents[1] / "fixtures/sphinx_site/html"


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextmanager
def serving(root: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def config(path: Path, url: str, cache: Path, refresh_hours: float = 24.0) -> Path:
    path.write_text(
        f'[[sources]]\nname = "sphinx"\nkind = "sphinx"\nurl = "{url}"\n'
        f'cache_dir = "{cache}"\nrefresh_hours = {refresh_hours}\ndefault = true\n',
        encoding="utf-8",
    )
    return path


def search(stub, query: str) -> list[pb.SearchResult]:
    reply = stub.Search(pb.SearchRequest(query=query, kinds=[pb.CORPUS_DOCS]), timeout=30)
    return list(reply.results)


def test_a_published_sphinx_site_is_searched_and_read(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(BUILT, site)
    (site / "_sources/support.rst.txt").unlink()  # one page published without its source
    cache = tmp_path / "cache"
    with serving(site) as url:
        toml = config(tmp_path / "s.toml", url, cache)
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            stub = daemon.stub
            hits = search(stub, "sphinx-quickstart interactive questions")
            top = next(h for h in hits if h.location.startswith("usage/quickstart#"))
            assert top.url.startswith(f"{url}/usage/quickstart.html#")
            section = content(stub, "usage/quickstart#getting-started")
            assert section.resolution.reason == "resolved"
            assert section.content.splitlines()[:2] == ["=" * 15, "Getting started"]  # raw reST
            assert content(stub, "usage/quickstart.html").resolution.rule == "variant"
            # objects.inv: a documented object names the block that documents it.
            documented = content(stub, "usage/quickstart#enumerate")
            assert documented.resolution.reason == "resolved"
            assert "enumerate(sequence" in documented.content
            # A page without a published source is read from its HTML, keeping its ids.
            support = content(stub, "support#get-support")
            assert support.resolution.reason == "resolved"
            assert "<div" not in support.content and "Get support" in support.content

    # The site is gone: a restart serves the last mirror, and says nothing breaks.
    down = f"http://127.0.0.1:{free_port()}"
    toml = config(tmp_path / "down.toml", down, cache, refresh_hours=0)
    with running(["--config", str(toml)], tmp_path / "state-down") as daemon:
        assert content(daemon.stub, "usage/quickstart#getting-started").resolution.reason == (
            "resolved"
        )
    # No site and no mirror: the daemon still starts, with nothing from it.
    empty = config(tmp_path / "empty.toml", down, tmp_path / "nothing")
    with running(["--config", str(empty)], tmp_path / "state-empty") as daemon:
        assert search(daemon.stub, "sphinx-quickstart") == []


def test_a_refreshed_mirror_is_revalidated_not_downloaded(tmp_path: Path) -> None:
    """The second mirror of an unchanged site asks with the first one's validators: every file
    answers 304, no page is rewritten and the index does not change."""
    from tests.support.docsite import serving as serving_with_etags

    cache = tmp_path / "cache"
    with serving_with_etags(BUILT) as server:
        toml = config(tmp_path / "s.toml", server.url, cache, refresh_hours=0)
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            generation = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=30).generation
        first = len(server.requests)
        assert server.statuses("/searchindex.js") == [200]
        mirrored = {p: p.stat().st_mtime_ns for p in cache.rglob("*.rst")}
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            again = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=30).generation
            hits = search(daemon.stub, "sphinx-quickstart interactive questions")
            assert any(h.location.startswith("usage/quickstart#") for h in hits)
        second = server.requests[first:]
    assert server.statuses("/searchindex.js") == [200, 304]
    assert second and all(code == 304 for _path, code in second), second
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*.rst")} == mirrored
    assert again == generation
