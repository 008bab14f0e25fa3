"""Any documentation site: the ``site`` and ``llms_txt`` kinds, crawled from real HTTP servers
on loopback by a real daemon, and what the crawl did as ListSources reports it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import cli, running
from tests.support.docsite import debian_html, page, serving
from tests.support.waiting import wait_for

REQUESTS_DOCS = "python-requests-doc"  # Requests' published HTML documentation, from Debian


@pytest.fixture(scope="session")
def requests_html() -> Path:
    return debian_html(REQUESTS_DOCS)


def write_config(path: Path, *sources: str) -> Path:
    path.write_text("\n".join(sources), encoding="utf-8")
    return path


def site_source(name: str, start: str, cache: Path, **extra: object) -> str:
    lines = [
        "[[sources]]",
        f'name = "{name}"',
        'kind = "site"',
        f'start_urls = ["{start}"]',
        f'cache_dir = "{cache}"',
        "requests_per_second = 200",
    ]
    lines += [f"{key} = {_toml(value)}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def search(stub, query: str) -> list[pb.SearchResult]:
    reply = stub.Search(pb.SearchRequest(query=query, kinds=[pb.CORPUS_DOCS]), timeout=30)
    return list(reply.results)


def content(stub, location: str) -> pb.GetContentResponse:
    request = pb.GetContentRequest(location=location, mode=pb.CONTENT_MODE_FULL)
    return stub.GetContent(request, timeout=30)


def status(stub, name: str) -> pb.SourceStatus:
    reply = stub.ListSources(pb.ListSourcesRequest(), timeout=30)
    return next(s for s in reply.sources if s.name == name)


def skipped(source: pb.SourceStatus) -> dict[str, int]:
    return {s.reason: s.pages for s in source.crawl.skipped}


def test_a_real_documentation_site_is_crawled_to_its_content(
    tmp_path: Path, requests_html: Path
) -> None:
    site = tmp_path / "site"
    shutil.copytree(requests_html, site, symlinks=True)
    excluded = ["/_modules/*", "/genindex.html", "/search.html", "/py-modindex.html"]
    with serving(site) as server:
        toml = write_config(
            tmp_path / "s.toml",
            site_source(
                "requests", f"{server.url}/index.html", tmp_path / "cache", exclude=excluded
            ),
        )
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            stub = daemon.stub
            # A real section, found by its text, addressed by the page's own heading id.
            hits = search(stub, "passing parameters in URLs query string params")
            top = next(h for h in hits if h.location.startswith("requests/user/quickstart#"))
            assert top.location == "requests/user/quickstart#passing-parameters-in-urls"
            assert top.url == f"{server.url}/user/quickstart.html#passing-parameters-in-urls"
            section = content(stub, top.location)
            assert section.resolution.reason == "resolved"
            assert "params=payload" in section.content
            # Code blocks keep the language the page's classes name (highlight-bash).
            socks = content(stub, "requests/user/advanced#socks")
            assert socks.resolution.reason == "resolved"
            assert "```bash" in socks.content
            # Navigation, sidebars and footers are not content.
            page = content(stub, "requests/index").content
            assert "Requests: HTTP for Humans" in page
            assert "Useful Links" not in page and "Quick search" not in page
            assert search(stub, "MMXVIX") == []  # the footer
            source = status(stub, "requests")
            crawl = source.crawl
            pages = {p for p in site.rglob("*.html") if "_modules" not in p.parts} - {
                site / n for n in ("genindex.html", "search.html", "py-modindex.html")
            }
            assert crawl.state == "complete", crawl.detail
            assert crawl.pages_fetched == len(pages) and crawl.pages_failed == 0
            assert skipped(source)["excluded"] >= 1 and skipped(source)["out of scope"] >= 1
            assert source.document_count == len(pages)
            assert not source.last_error
            # One line per fetched page would fill the log of a big crawl: httpx's request
            # lines are kept for DEBUG.
            assert "HTTP Request:" not in daemon.full_log()
            table = cli(daemon, "sources")
            assert "complete:" in table.stdout and f"{len(pages)} pages fetched" in table.stdout
    # The server saw no request for an excluded page.
    assert not [p for p, _code in server.requests if p.startswith("/_modules/")]


LLMS_TXT = """\
# Lantern

> Lantern is a small task queue for Python services.

Lantern's docs, as Markdown, for tools.

## Docs

- [Quickstart](/docs/quickstart.md): install Lantern and run a first worker
- [Configuration](/docs/configuration.md): every setting of the worker

## Optional

- [Blog](https://blog.lantern.invalid/posts.md): release notes
"""

QUICKSTART = """\
# Quickstart

Install with `pip install lantern`.

## Run a worker

```python
from lantern import Worker

Worker(queue="emails").run()
```
"""

CONFIGURATION = """\
# Configuration

## Visibility timeout

`visibility_timeout` is how many seconds a claimed task stays hidden from other workers
before it is handed out again. The default is 30.
"""

LLMS_FULL = f"""\
{QUICKSTART}
{CONFIGURATION}
# Deployment

## Graceful shutdown

On SIGTERM a worker stops claiming tasks and finishes the ones it holds.
"""


def test_llms_txt_and_llms_full_sites(tmp_path: Path) -> None:
    root = tmp_path / "www"
    (root / "docs").mkdir(parents=True)
    (root / "llms.txt").write_text(LLMS_TXT, "utf-8")
    (root / "llms-full.txt").write_text(LLMS_FULL, "utf-8")
    (root / "docs/quickstart.md").write_text(QUICKSTART, "utf-8")
    (root / "docs/configuration.md").write_text(CONFIGURATION, "utf-8")
    with serving(root) as server:
        llms = (
            f'[[sources]]\nname = "lantern"\nkind = "llms_txt"\nurl = "{server.url}"\n'
            f'cache_dir = "{tmp_path / "c1"}"\nrequests_per_second = 200\n'
        )
        full = (
            f'[[sources]]\nname = "full"\nkind = "llms_txt"\nurl = "{server.url}"\n'
            f'full = true\ncache_dir = "{tmp_path / "c2"}"\nrequests_per_second = 200\n'
        )
        toml = write_config(tmp_path / "l.toml", llms, full)
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            stub = daemon.stub
            reply = stub.Search(
                pb.SearchRequest(query="visibility timeout claimed task", sources=["lantern"]),
                timeout=30,
            )
            top = reply.results[0]
            assert top.location == "lantern/docs/configuration#visibility-timeout"
            assert top.url == f"{server.url}/docs/configuration.md#visibility-timeout"
            code = content(stub, "lantern/docs/quickstart#run-a-worker")
            assert "```python" in code.content and 'Worker(queue="emails")' in code.content
            lantern = status(stub, "lantern")
            assert lantern.crawl.state == "complete", lantern.crawl.detail
            assert lantern.crawl.pages_fetched == 3  # llms.txt and the two pages it links
            assert skipped(lantern) == {"out of scope": 1}  # the other origin's blog
            # llms-full.txt, cut into its pages by their headings.
            reply = stub.Search(
                pb.SearchRequest(query="SIGTERM graceful shutdown", sources=["full"]), timeout=30
            )
            assert reply.results[0].location == "full/deployment#graceful-shutdown"
            assert status(stub, "full").document_count == 3
    assert server.statuses("/llms.txt") == [200] and server.statuses("/llms-full.txt") == [200]


def test_a_site_that_refuses_and_stalls_is_partial(tmp_path: Path) -> None:
    root = tmp_path / "www"
    root.mkdir()
    links = ("/open.html", "/members.html", "/slow.html", "/missing.html")
    (root / "index.html").write_text(page("Home", "Welcome to the harbour guide.", links))
    (root / "open.html").write_text(page("Tides", "High tide reaches the quay at noon."))
    (root / "members.html").write_text(page("Members", "Private berth list."))
    (root / "slow.html").write_text(page("Slow", "A page that never finishes."))
    with serving(root, forbidden={"/members.html"}, hanging={"/slow.html"}) as server:
        toml = write_config(
            tmp_path / "p.toml",
            site_source("harbour", f"{server.url}/", tmp_path / "cache", timeout_seconds=1),
        )
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            stub = daemon.stub
            source = status(stub, "harbour")
            crawl = source.crawl
            assert crawl.state == "partial"
            assert (crawl.pages_fetched, crawl.pages_failed) == (2, 3)
            failures = {f.url.rsplit("/", 1)[1]: (f.http_status, f.error) for f in crawl.failures}
            assert failures == {
                "members.html": (403, "HTTP 403"),
                "slow.html": (0, "timed out"),
                "missing.html": (404, "HTTP 404"),
            }
            assert crawl.detail.startswith("partial: 2 pages fetched, 3 failed")
            assert "partial" in source.last_error  # never passes as a complete site
            hits = search(stub, "high tide quay noon")
            assert hits and hits[0].location == "harbour/open#tides"
            assert search(stub, "private berth list") == []
            table = cli(daemon, "sources").stdout
            assert "members.html" in table and "403" in table
        assert server.held.is_set()


def test_robots_and_revalidation(tmp_path: Path) -> None:
    root = tmp_path / "www"
    (root / "private").mkdir(parents=True)
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    links = ("/guide.html", "/private/keys.html")
    (root / "index.html").write_text(page("Home", "The lighthouse manual.", links))
    (root / "guide.html").write_text(page("Lamp care", "Trim the wick every evening."))
    (root / "private/keys.html").write_text(page("Keys", "The spare key is under the mat."))
    with serving(root) as server:
        cache = tmp_path / "cache"
        first = site_source("lighthouse", f"{server.url}/", cache)
        toml = write_config(tmp_path / "r.toml", first)
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            assert search(daemon.stub, "trim the wick")[0].location == "lighthouse/guide#lamp-care"
            assert search(daemon.stub, "spare key under the mat") == []
            source = status(daemon.stub, "lighthouse")
            assert source.crawl.state == "complete"
            assert skipped(source) == {"robots": 1}
            generation = source.generation
        assert not [p for p, _code in server.requests if p.startswith("/private/")]
        assert server.statuses("/guide.html") == [200]
        # A refresh (the crawl is due at once) asks with the kept validators: every page
        # answers 304 and nothing is downloaded or re-indexed.
        again = write_config(tmp_path / "r2.toml", first + "refresh_hours = 0\n")
        with running(["--config", str(again)], tmp_path / "state") as daemon:
            # The refresh runs beside the serving daemon.
            assert wait_for(lambda: status(daemon.stub, "lighthouse").crawl.state == "complete")
            source = status(daemon.stub, "lighthouse")
            assert (source.crawl.pages_fetched, source.crawl.pages_unchanged) == (0, 2)
            assert source.generation == generation
            assert search(daemon.stub, "trim the wick")[0].location == "lighthouse/guide#lamp-care"
        assert server.statuses("/guide.html") == [200, 304]
        assert server.statuses("/") == [200, 304]


def test_a_bound_that_cuts_the_crawl_short_is_partial(tmp_path: Path) -> None:
    root = tmp_path / "www"
    root.mkdir()
    links = ("/one.html", "/two.html")
    (root / "index.html").write_text(page("Home", "The ferry timetable.", links))
    (root / "one.html").write_text(page("Morning", "The first ferry leaves at six."))
    (root / "two.html").write_text(page("Evening", "Night crossings are cancelled in fog."))
    with serving(root) as server:
        toml = write_config(
            tmp_path / "b.toml",
            site_source("ferry", f"{server.url}/", tmp_path / "cache", max_pages=2),
        )
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            source = status(daemon.stub, "ferry")
            assert source.crawl.state == "partial"
            assert source.crawl.pages_fetched == 2 and source.crawl.pages_failed == 0
            assert skipped(source) == {"over the bound": 1}
            assert source.crawl.detail == ("partial: 2 pages fetched, 1 skipped (1 over the bound)")
            assert source.document_count == 2
        assert server.statuses("/two.html") == []  # never asked for
        # A setting that shapes the crawl changed: the crawl is due although it is young.
        toml = write_config(
            tmp_path / "b2.toml",
            site_source("ferry", f"{server.url}/", tmp_path / "cache", max_pages=3),
        )
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            assert wait_for(lambda: status(daemon.stub, "ferry").crawl.state == "complete")
            source = status(daemon.stub, "ferry")
            assert (source.crawl.pages_fetched, source.crawl.pages_unchanged) == (1, 2)
            # The start serves the last generation, then catches up with the new page.
            assert wait_for(lambda: status(daemon.stub, "ferry").document_count == 3)
            assert search(daemon.stub, "night crossings cancelled fog")[0].location == (
                "ferry/two#evening"
            )


def test_pages_only_the_sitemap_names_are_crawled(tmp_path: Path) -> None:
    root = tmp_path / "www"
    (root / "maps").mkdir(parents=True)
    (root / "index.html").write_text(page("Home", "The canal handbook."))
    (root / "locks.html").write_text(page("Locks", "Close the lower gate before filling."))
    with serving(root) as server:
        (root / "robots.txt").write_text(f"User-agent: *\nSitemap: {server.url}/maps/pages.xml\n")
        (root / "maps/pages.xml").write_text(
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{server.url}/locks.html</loc></url></urlset>"
        )
        toml = write_config(
            tmp_path / "m.toml", site_source("canal", f"{server.url}/", tmp_path / "cache")
        )
        with running(["--config", str(toml)], tmp_path / "state") as daemon:
            hits = search(daemon.stub, "close the lower gate")
            assert hits and hits[0].location == "canal/locks#locks"
            assert status(daemon.stub, "canal").crawl.pages_fetched == 2
    assert server.statuses("/maps/pages.xml") == [200]


def test_an_unreachable_site_is_failed_and_the_daemon_serves(tmp_path: Path) -> None:
    with serving(tmp_path) as server:
        gone = server.url  # the port is closed once the server stops
    toml = write_config(tmp_path / "u.toml", site_source("gone", f"{gone}/", tmp_path / "cache"))
    with running(["--config", str(toml)], tmp_path / "state") as daemon:
        source = status(daemon.stub, "gone")
        assert source.crawl.state == "failed"
        assert source.crawl.failures[0].error == "unreachable: ConnectError"
        assert source.last_error.startswith("failed: 0 pages fetched, 1 failed")
        assert search(daemon.stub, "anything at all") == []


def test_a_refresh_runs_while_the_last_copy_serves(tmp_path: Path) -> None:
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text(page("Home", "The lighthouse manual.", ("/guide.html",)))
    (root / "guide.html").write_text(page("Lamp care", "Trim the wick every evening."))
    with serving(root, holding={"/guide.html"}) as server:
        server.release.set()  # the first crawl is not held
        first = site_source("lighthouse", f"{server.url}/", tmp_path / "cache")
        with running(["--config", str(write_config(tmp_path / "1.toml", first))], tmp_path / "s"):
            pass
        (root / "guide.html").write_text(page("Lamp care", "Polish the lens every morning."))
        server.release.clear()
        server.held.clear()
        again = write_config(tmp_path / "2.toml", first + "refresh_hours = 0\n")
        with running(["--config", str(again)], tmp_path / "s") as daemon:
            # Serving while the refresh waits on the changed page: the last copy answers.
            assert wait_for(server.held.is_set)
            crawling = status(daemon.stub, "lighthouse")
            assert crawling.crawl.state == "crawling"
            assert crawling.crawl.detail == "crawling: 0 pages fetched, 1 unchanged (304)"
            assert not crawling.crawl.HasField("finished_at")
            assert not crawling.last_error
            assert search(daemon.stub, "trim the wick")[0].location == "lighthouse/guide#lamp-care"
            server.release.set()
            assert wait_for(lambda: status(daemon.stub, "lighthouse").crawl.state == "complete")
            # The watch re-indexes the rewritten page.
            assert wait_for(lambda: bool(search(daemon.stub, "polish the lens morning")))
            assert search(daemon.stub, "polish the lens morning")[0].location == (
                "lighthouse/guide#lamp-care"
            )
            assert search(daemon.stub, "trim the wick") == []
