"""Remote MkDocs sites end to end: real ``mkdocs build`` output served over HTTP, a real daemon.

Four sites are built from FastAPI documentation pages (``tests/fixtures/mkdocs``): ``guide`` (the
default, with nested ``index.md`` pages and a moved page), ``deploy-notes`` (``search.boost``
pages, HTML-only pages, a directory named like the site), ``ref-notes`` (shares a page name
with deploy-notes) and ``unpublished`` (listed, but only published mid-run). A local Markdown
source with two pages sits before the sites in the provider chain.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc
import pytest
import yaml

from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.grpc.status import resolution_from_error
from scriptorium.plugins import load_registry
from scriptorium.settings.config import Settings
from scriptorium.sources.base import SourceConfig
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.calls import search
from tests.support.daemon import CORPUS, Daemon, free_port, running

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mkdocs"
SITES = ["guide", "deploy-notes", "ref-notes", "unpublished"]
# A failed or stale site tries the network again on its next use. How long a cool-down holds
# is the loader's business, tested on an injected clock (tests/unit/test_mkdocs_loader.py).
COOLDOWN = 0
LEAF = "path-params-numeric-validations"


# -- building and serving the sites ------------------------------------------------------------


def build_sites(work: Path) -> Path:
    """Assemble every fixture site from corpus pages, ``mkdocs build`` it; the output root."""
    fixtures = work / "fixtures"
    shutil.copytree(FIXTURES, fixtures)
    output = work / "built"
    for site_dir in sorted((fixtures / "sites").iterdir()):
        manifest = tomllib.loads((site_dir / "pages.toml").read_text("utf-8"))
        for page in manifest["page"]:
            text = (CORPUS / page["from"]).read_text("utf-8")
            if page.get("front_matter"):
                text = f"---\n{yaml.safe_dump(page['front_matter'])}---\n{text}"
            dest = site_dir / "docs" / page["dest"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, "utf-8")
        config, target = site_dir / "mkdocs.yml", output / site_dir.name
        subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(config), "-d", str(target)],
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
            check=True,
            capture_output=True,
        )
    return output


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        return None


class SiteServer:
    """``http.server`` on loopback in a thread, stoppable and restartable on the same port."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = free_port()
        self._server: ThreadingHTTPServer | None = None

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> SiteServer:
        handler = functools.partial(Quiet, directory=str(self.root))
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def served_copy(built: Path, target: Path, sites: list[str]) -> Path:
    target.mkdir(parents=True)
    for site in sites:
        shutil.copytree(built / site, target / site)
    return target


def mkdocs_table(origin: str, cache_dir: Path, **extra) -> str:
    options = {
        "origin": origin,
        "default_site": "guide",
        "sites": SITES,
        "cache_dir": str(cache_dir),
        "retry_cooldown_seconds": COOLDOWN,
        "page_cache_seconds": 0,
        "timeout_seconds": 3,
        **extra,
    }
    lines = ["[[sources]]", 'name = "docs"', 'kind = "mkdocs"']
    # JSON strings, numbers and lists of strings are valid TOML values.
    lines += [f"{key} = {json.dumps(value)}" for key, value in options.items()]
    return "\n".join(lines) + "\n"


def write_config(path: Path, body: str) -> Path:
    path.write_text("[server]\nwatch = false\n\n" + body, "utf-8")
    return path


@pytest.fixture(scope="module")
def built(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sites(tmp_path_factory.mktemp("mkdocs-build"))


@pytest.fixture(scope="module")
def site_server(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteServer]:
    root = served_copy(built, tmp_path_factory.mktemp("served") / "www", SITES[:3])
    server = SiteServer(root).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def notes(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("notes")
    for page in ("tutorial/cors.md", "tutorial/first-steps.md"):
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS / "docs/en/docs" / page, root / page)
    return root


@pytest.fixture(scope="module")
def daemon(site_server: SiteServer, notes: Path, tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("mkdocs-daemon")
    body = (
        f'[[sources]]\nname = "notes"\nkind = "markdown"\nroot = "{notes}"\ndefault = true\n\n'
        + mkdocs_table(site_server.origin, work / "cache")
    )
    config = write_config(work / "scriptorium.toml", body)
    daemon = Daemon(["--config", str(config)], work / "state").start()
    daemon.initial_sources = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=10)
    yield daemon
    daemon.terminate()


@pytest.fixture(scope="module")
def stub(daemon: Daemon):
    return daemon.stub


def fetch(stub, location: str = "", **kw) -> pb.GetContentResponse:
    return stub.GetContent(pb.GetContentRequest(location=location, **kw), timeout=30)


def fetch_error(stub, location: str) -> tuple[grpc.StatusCode, pb.Resolution]:
    with pytest.raises(grpc.RpcError) as err:
        fetch(stub, location)
    return err.value.code(), resolution_from_error(err.value)


def header(content: str) -> dict:
    assert content.startswith("---\n"), content[:80]
    return yaml.safe_load(content.split("---\n", 2)[1])


def docs_status(stub) -> pb.SourceStatus:
    reply = stub.ListSources(pb.ListSourcesRequest(), timeout=10)
    return next(s for s in reply.sources if s.name == "docs")


# -- search -------------------------------------------------------------------------------------


def test_remote_sites_load_lazily(daemon: Daemon) -> None:
    initial = {s.name: s for s in daemon.initial_sources.sources}
    assert initial["docs"].state == pb.SOURCE_STATE_LOADING
    assert initial["docs"].document_count == 0
    assert initial["docs"].kind == "mkdocs"
    assert initial["notes"].state == pb.SOURCE_STATE_READY


def test_search_across_sites_returns_qualified_locations_and_published_urls(
    stub, site_server: SiteServer
) -> None:
    # The local provider comes first; it has nothing confident to say about this.
    response = search(stub, "HTTPS certificate TLS termination", top_k=10)
    assert response.provider == "docs"
    locations = [r.location for r in response.results]
    assert any(loc.startswith("deploy-notes/https") for loc in locations), locations
    assert any(loc.startswith("ref-notes/") for loc in locations), locations
    for result in response.results:
        assert result.source == "docs"
        site, _, rest = result.location.partition("/")
        if site in ("deploy-notes", "ref-notes"):
            page, _, anchor = rest.partition("#")
            expected = f"{site_server.origin}/{site}/{page}/" if page else ""
            assert result.url.startswith(expected or f"{site_server.origin}/{site}/")
            assert "#" not in result.url or result.url.endswith(f"#{anchor}")
        assert result.doc_version and result.source_revision and result.preview
    failures = {f.source: f.detail for f in response.failed_sources}
    assert "unpublished" in failures["docs"] and "404" in failures["docs"]


def test_every_returned_location_fetches(stub) -> None:
    for query in ("HTTPS certificate TLS termination proxy", "background tasks send email"):
        for result in search(stub, query, sources=["docs"]).results:
            reply = fetch(stub, result.location, mode=pb.CONTENT_MODE_FULL)
            assert reply.resolution.reason == "resolved", result.location
            assert reply.content.strip()
            assert reply.location.split("#")[0] == result.location.split("#")[0]


def test_loaded_sites_are_reported_ready_with_counts(stub) -> None:
    search(stub, "path parameters")
    status = docs_status(stub)
    assert status.state == pb.SOURCE_STATE_READY
    assert status.document_count == 12 + 7 + 3
    assert status.block_count > status.document_count
    assert "unpublished" in status.last_error
    assert status.root.startswith("http://127.0.0.1:")


def test_search_boost_front_matter_multiplies_the_score(stub) -> None:
    response = search(stub, "docker containers replication", top_k=25, explain=True)
    boosts = {}
    for result in response.results:
        page = result.location.split("#")[0]
        for reason in result.reasons:
            if reason.name == "page-boost":
                boosts[page] = reason.weight
    assert boosts.get("deploy-notes/concepts") == 3.0
    assert boosts.get("deploy-notes/docker") == 0.5


def test_provider_attribution_search_and_fetch_can_differ(stub) -> None:
    local = search(stub, "CORS allow origins middleware")
    assert local.provider == "local"
    assert local.results[0].location.startswith("tutorial/cors")
    remote = search(stub, "first steps OpenAPI schema", sources=["docs"])
    assert remote.provider == "docs"
    location = next(r.location for r in remote.results if r.location.startswith("tutorial/first"))
    # The same bare location exists locally, and the local provider comes first for fetches.
    reply = fetch(stub, location)
    assert (reply.provider, reply.source) == ("local", "notes")
    reply = fetch(stub, "tutorial/path-params")
    assert (reply.provider, reply.source) == ("docs", "docs")


def test_wildcard_lists_pages_round_robin_across_sites(stub) -> None:
    response = search(stub, "*", top_k=25)
    locations = [r.location for r in response.results]
    assert response.provider == "docs"
    assert locations[:3] == ["index", "deploy-notes", "ref-notes"]
    assert len(locations) == 22 and len(set(locations)) == 22
    assert not any("#" in loc for loc in locations)
    scored = search(stub, "* docker", top_k=10)
    assert any("#" in r.location for r in scored.results)
    assert len({r.score for r in scored.results}) > 1


# -- resolution -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("location", "rule", "resolved"),
    [
        ("tutorial/path-params", "exact", "tutorial/path-params"),
        ("Tutorial/Path-Params/", "exact", "tutorial/path-params"),
        ("tutorial/path-params.md", "variant", "tutorial/path-params"),
        ("tutorial/path-params.html", "variant", "tutorial/path-params"),
        ("tutorial/dependencies/index.md", "variant", "tutorial/dependencies"),
        ("index", "variant", "index"),
        ("guide", "exact", "index"),
        ("path-params-numeric-validations", "canonical-leaf", f"tutorial/{LEAF}"),
        ("guides/configuration/environment", "moved", "advanced/settings"),
        ("deploy-notes", "exact", "deploy-notes"),
        ("deploy-notes/https.md", "variant", "deploy-notes/https"),
        ("deploy-notes/cloud", "exact", "deploy-notes/deploy-notes/cloud"),
        ("versions", "exact", "ref-notes/versions"),
    ],
)
def test_resolution_rules(stub, location: str, rule: str, resolved: str) -> None:
    reply = fetch(stub, location)
    assert reply.provider == "docs"
    assert (reply.resolution.reason, reply.resolution.rule) == ("resolved", rule)
    assert reply.location == resolved
    assert reply.resolution.resolved_location == resolved
    assert reply.requested_location == location
    assert reply.resolution.site == (resolved.split("/")[0] if "notes" in resolved else "guide")


def test_ambiguous_across_sites_lists_site_qualified_candidates(stub) -> None:
    code, resolution = fetch_error(stub, "https")
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert resolution.reason == "ambiguous"
    assert list(resolution.candidates) == ["deploy-notes/https", "ref-notes/https"]
    for candidate in resolution.candidates:
        assert fetch(stub, candidate).resolution.reason == "resolved"


@pytest.mark.parametrize("location", ["old/cloud", "deploy-notes/old/cloud.html"])
def test_a_shared_leaf_is_not_found_with_the_pages_that_share_it(stub, location: str) -> None:
    code, resolution = fetch_error(stub, location)
    assert (code, resolution.reason) == (grpc.StatusCode.NOT_FOUND, "not_found")
    # The local provider misses without candidates; the chain reports the site's richer miss.
    assert list(resolution.candidates) == [
        "deploy-notes/deploy-notes/cloud",
        "deploy-notes/providers/cloud",
    ]
    assert "the leaf 'cloud' names 2 pages" in resolution.detail
    for candidate in resolution.candidates:
        assert fetch(stub, candidate).location == candidate


@pytest.mark.parametrize(
    ("location", "code", "reason"),
    [
        ("other-site/guide/setup", grpc.StatusCode.NOT_FOUND, "unknown_site"),
        ("tutorial/no-such-page", grpc.StatusCode.NOT_FOUND, "not_found"),
        ("deploy-notes/no-such-page", grpc.StatusCode.NOT_FOUND, "not_found"),
        ("unpublished/upgrades/pinning", grpc.StatusCode.UNAVAILABLE, "site_unavailable"),
    ],
)
def test_reason_codes(stub, location: str, code, reason: str) -> None:
    got, resolution = fetch_error(stub, location)
    assert (got, resolution.reason) == (code, reason)
    assert resolution.requested_location == location
    assert "docs:" in resolution.detail  # every provider's verdict is listed


# -- content --------------------------------------------------------------------------------


def test_raw_markdown_is_served_with_a_header(stub, site_server: SiteServer) -> None:
    reply = fetch(stub, "tutorial/path-params", mode=pb.CONTENT_MODE_FULL)
    meta = header(reply.content)
    assert meta["source"] == f"{site_server.origin}/guide/tutorial/path-params.md"
    assert meta["site"] == "guide" and meta["retrieved"]
    assert "converted_from" not in meta
    assert "# Path Parameters" in reply.content
    assert reply.resolution.detail == "served raw Markdown"
    assert reply.url == f"{site_server.origin}/guide/tutorial/path-params/"


def test_a_directory_page_is_served_from_its_own_index_md(stub, site_server) -> None:
    reply = fetch(stub, "tutorial/dependencies/", mode=pb.CONTENT_MODE_FULL)
    assert header(reply.content)["source"].endswith("/guide/tutorial/dependencies/index.md")


def test_pages_without_raw_markdown_are_converted_from_html(stub, site_server) -> None:
    reply = fetch(stub, "deploy-notes/docker", mode=pb.CONTENT_MODE_FULL)
    meta = header(reply.content)
    assert meta["converted_from"] == "html" and meta["parse_confidence"] < 1
    assert meta["source"] == f"{site_server.origin}/deploy-notes/docker/"
    assert "## Build a Docker Image for FastAPI" in reply.content
    assert "{ #build-a-docker-image-for-fastapi }" in reply.content
    assert "converted from HTML" in reply.resolution.detail
    assert "md-header" not in reply.content and "Skip to content" not in reply.content


def test_a_section_of_a_page_can_be_fetched(stub) -> None:
    reply = fetch(stub, "deploy-notes/https#certificate-renewal", mode=pb.CONTENT_MODE_FULL)
    assert reply.location == "deploy-notes/https#certificate-renewal"
    assert reply.content.splitlines()[0].startswith("### Certificate Renewal")
    assert reply.url.endswith("/deploy-notes/https/#certificate-renewal")
    assert reply.scope == "section" and re.fullmatch(r"[0-9a-f]{32}", reply.trace_id)


def test_doc_version_and_revision_skew(stub) -> None:
    hit = next(
        r
        for r in search(stub, "TLS termination proxy", sources=["docs"]).results
        if r.location.startswith("deploy")
    )
    first = fetch(stub, hit.location, seen_doc_version=hit.doc_version)
    assert first.doc_version and not first.revision_skew
    again = fetch(stub, hit.location, seen_doc_version=first.doc_version)
    assert again.doc_version == first.doc_version and not again.revision_skew
    assert fetch(stub, hit.location, seen_doc_version="0123456789abcdef").revision_skew
    by_ref = stub.GetContent(pb.GetContentRequest(ref_id=hit.ref_id), timeout=30)
    assert by_ref.provider == "docs" and not by_ref.revision_skew
    assert by_ref.location.split("#")[0] == hit.location.split("#")[0]
    traces = {reply.trace_id for reply in (first, again, by_ref)}
    assert len(traces) == 3 and all(re.fullmatch(r"[0-9a-f]{32}", t) for t in traces)


def test_a_page_removed_after_indexing_fails_to_fetch(stub, site_server: SiteServer) -> None:
    site = site_server.root / "guide" / "tutorial"
    shutil.rmtree(site / "query-params")
    (site / "query-params.md").unlink()
    code, resolution = fetch_error(stub, "tutorial/query-params")
    assert code == grpc.StatusCode.UNAVAILABLE
    assert (resolution.reason, resolution.rule) == ("fetch_failed", "exact")
    assert resolution.site == "guide"


def test_an_unpublished_site_is_retried_after_the_cool_down(stub, built, site_server) -> None:
    search(stub, "*")
    assert "unpublished" in docs_status(stub).last_error
    shutil.copytree(built / "unpublished", site_server.root / "unpublished")
    response = search(stub, "*", top_k=25)
    assert "unpublished" in [r.location for r in response.results][:4]
    assert not response.failed_sources
    status = docs_status(stub)
    assert status.state == pb.SOURCE_STATE_READY and not status.last_error
    assert fetch(stub, "unpublished/upgrades/pinning").resolution.reason == "resolved"


# -- outages: in-memory, stale and fresh disk caches ------------------------------------------


@pytest.fixture()
def outage(built: Path, tmp_path: Path) -> Iterator[tuple[SiteServer, Path]]:
    server = SiteServer(served_copy(built, tmp_path / "www", ["guide", "deploy-notes"])).start()
    try:
        yield server, tmp_path
    finally:
        server.stop()


def daemon_over(work: Path, server: SiteServer, cache: Path, **options):
    """A context manager running a daemon whose only source is the sites behind ``server``."""
    work.mkdir(parents=True, exist_ok=True)
    config = write_config(work / "scriptorium.toml", mkdocs_table(server.origin, cache, **options))
    return running(["--config", str(config)], work / "state")


def test_a_site_going_down_serves_the_loaded_index_then_recovers(outage) -> None:
    server, work = outage
    cache = work / "cache"
    query = "HTTPS certificate TLS termination proxy"
    # The loaded index is older than this at any later use (about 4 microseconds), so every
    # use after the first tries to refresh it.
    with daemon_over(work / "a", server, cache, cache_hours=1e-9) as d:
        assert search(d.stub, query).results
        assert docs_status(d.stub).state == pb.SOURCE_STATE_READY
        server.stop()
        code, resolution = fetch_error(d.stub, "deploy-notes/https")
        assert (code, resolution.reason) == (grpc.StatusCode.UNAVAILABLE, "fetch_failed")
        response = search(d.stub, query)
        assert response.results
        details = " ".join(f.detail for f in response.failed_sources)
        assert "served from stale cache" in details
        status = docs_status(d.stub)
        assert status.state == pb.SOURCE_STATE_STALE and "stale cache" in status.last_error
        server.start()
        response = search(d.stub, query)
        assert not any("stale" in f.detail for f in response.failed_sources)
        assert docs_status(d.stub).state == pb.SOURCE_STATE_READY
        assert fetch(d.stub, "deploy-notes/https").resolution.reason == "resolved"
    server.stop()
    # A new daemon finds a fresh disk cache and needs no network at all.
    with daemon_over(work / "b", server, cache, cache_hours=1) as d:
        response = search(d.stub, query)
        assert response.results and response.provider == "docs"
        assert docs_status(d.stub).state == pb.SOURCE_STATE_READY
    # With the cache older than cache_hours (its file two hours old) and the network down, the
    # stale cache serves.
    for path in cache.rglob("*"):
        if path.is_file():
            two_hours_ago = time.time() - 2 * 3600
            os.utime(path, (two_hours_ago, two_hours_ago))
    with daemon_over(work / "c", server, cache, cache_hours=1) as d:
        response = search(d.stub, query)
        assert response.results
        assert any("served from stale cache" in f.detail for f in response.failed_sources)
        assert docs_status(d.stub).state == pb.SOURCE_STATE_STALE


# -- the fuse chain (in process: the setting belongs to [server]) -------------------------------


def test_fuse_mode_ranks_local_and_remote_candidates_together(site_server, notes, tmp_path):
    settings = Settings(
        sources=[
            SourceConfig(name="notes", kind="markdown", root=notes, default=True),
            SourceConfig(
                name="docs",
                kind="mkdocs",
                options={
                    "origin": site_server.origin,
                    "default_site": "guide",
                    "sites": SITES[:3],
                    "cache_dir": str(tmp_path / "cache"),
                },
            ),
        ],
        state_dir=tmp_path / "state",
        watch=False,
    )
    settings.provider_chain = "fuse"

    async def scenario():
        engine = LocalEngine(settings, load_registry())
        await engine.start()
        try:
            return await engine.search(SearchParams(query="first steps path parameters", top_k=10))
        finally:
            await engine.chain.aclose()
            await engine.stop()

    outcome = asyncio.run(scenario())
    assert outcome.provider == "local+docs"
    assert {h.source for h in outcome.hits} == {"notes", "docs"}
    assert outcome.hits[0].score == pytest.approx(max(h.score for h in outcome.hits))
