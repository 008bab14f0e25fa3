"""Site index loading: lazy, shared, cached on disk, stale on failure, retried after a cool-down.

Unit tests stay off the network, so the HTTP side is httpx's in-process ``MockTransport``
serving a real index document; the end-to-end tests run the same paths against a real
``mkdocs build`` served over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import httpx
import pytest

from scriptorium_plugins.mkdocs.loader import FAILED, LOADING, READY, STALE, SiteLoader, SiteState
from scriptorium_plugins.mkdocs.resolution import SitePages
from scriptorium_plugins.mkdocs.siteindex import SiteIndex, parse_pages
from tests.support.daemon import CORPUS

INDEX = json.dumps(
    {
        "config": {},
        "docs": [
            {"location": "", "title": "FastAPI", "text": "<p>fast</p>"},
            {
                "location": "tutorial/cors/",
                "title": "CORS",
                "text": (CORPUS / "docs/en/docs/tutorial/cors.md").read_text("utf-8")[:2000],
            },
        ],
    }
).encode()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Server:
    """What the transport answers, switchable mid-test."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests = 0

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.mode == "down":
            raise httpx.ConnectError("connection refused", request=request)
        if self.mode == "404":
            return httpx.Response(404, text="not found")
        if self.mode == "garbage":
            return httpx.Response(200, text="<html>oops</html>")
        return httpx.Response(200, content=INDEX)


def build(site: str, entries: list, revision: str) -> SiteIndex:
    return SiteIndex(
        source="docs",
        site=site,
        base_url=f"http://h/{site}",
        pages=parse_pages(entries),
        revision=revision,
        qualify=lambda s, p: p or "index",
    )


def make(tmp_path: Path, server: Server, clock: Clock, *, hours: float = 1.0):
    client = httpx.AsyncClient(transport=httpx.MockTransport(server.handle))
    loader = SiteLoader(
        index_url=lambda site: f"http://h/{site}/search/search_index.json",
        build=build,
        pages_for=lambda site, index: SitePages(index.pages),
        client=lambda: client,
        cache_seconds=hours * 3600,
        cooldown_seconds=30,
        clock=clock,
    )
    state = SiteState("guide", "http://h/guide", tmp_path / "cache" / "guide-search-index.json")
    return loader, state


def test_nothing_loads_until_first_use_then_the_index_is_cached(
    fastapi_corpus, tmp_path: Path
) -> None:
    server, clock = Server(), Clock()
    loader, state = make(tmp_path, server, clock)
    assert (state.status, server.requests) == (LOADING, 0)
    index = asyncio.run(loader.ensure(state))
    assert index is not None and index.page_count == 2
    assert state.status == READY and state.pages.has("tutorial/cors")
    assert state.cache_path.read_bytes() == INDEX
    asyncio.run(loader.ensure(state))
    assert server.requests == 1


def test_concurrent_callers_share_one_load(fastapi_corpus, tmp_path: Path) -> None:
    server, clock = Server(), Clock()
    loader, state = make(tmp_path, server, clock)

    async def many():
        return await asyncio.gather(*(loader.ensure(state) for _ in range(8)))

    results = asyncio.run(many())
    assert server.requests == 1
    assert all(r is results[0] for r in results)


def test_a_fresh_disk_cache_is_used_on_first_load(fastapi_corpus, tmp_path: Path) -> None:
    server, clock = Server(), Clock()
    loader, state = make(tmp_path, server, clock)
    state.cache_path.parent.mkdir(parents=True)
    state.cache_path.write_bytes(INDEX)
    server.mode = "down"
    assert asyncio.run(loader.ensure(state)) is not None
    assert (state.status, server.requests) == (READY, 0)


def test_a_stale_disk_cache_serves_when_the_network_fails(fastapi_corpus, tmp_path: Path) -> None:
    server, clock = Server(), Clock()
    loader, state = make(tmp_path, server, clock)
    state.cache_path.parent.mkdir(parents=True)
    state.cache_path.write_bytes(INDEX)
    old = time.time() - 3 * 3600
    os.utime(state.cache_path, (old, old))
    server.mode = "down"
    assert asyncio.run(loader.ensure(state)) is not None
    assert state.status == STALE
    assert "ConnectError" in state.last_error and "served from stale cache" in state.last_error
    # After the cool-down the network is tried again and the site becomes ready.
    server.mode = "ok"
    asyncio.run(loader.ensure(state))
    assert state.status == STALE and server.requests == 1
    clock.now += 31
    asyncio.run(loader.ensure(state))
    assert (state.status, state.last_error, server.requests) == (READY, "", 2)


@pytest.mark.parametrize(
    ("mode", "error"), [("404", "HTTP 404"), ("down", "unreachable"), ("garbage", "malformed")]
)
def test_a_site_with_nothing_to_serve_fails_and_is_retried_later(
    fastapi_corpus, tmp_path: Path, mode: str, error: str
) -> None:
    server, clock = Server(), Clock()
    loader, state = make(tmp_path, server, clock)
    server.mode = mode
    assert asyncio.run(loader.ensure(state)) is None
    assert state.status == FAILED and error in state.last_error
    asyncio.run(loader.ensure(state))
    assert server.requests == 1  # within the cool-down: no new round trip
    server.mode = "ok"
    clock.now += 31
    assert asyncio.run(loader.ensure(state)) is not None
    assert state.status == READY and server.requests == 2


def test_an_index_older_than_cache_hours_is_refreshed_and_kept_when_that_fails(
    fastapi_corpus,
    tmp_path: Path,
) -> None:
    server, clock = Server(), Clock()
    loader, state = make(tmp_path, server, clock, hours=0.01)
    first = asyncio.run(loader.ensure(state))
    clock.now += 37
    second = asyncio.run(loader.ensure(state))
    assert server.requests == 2 and second is not first and state.status == READY
    clock.now += 37
    server.mode = "down"
    third = asyncio.run(loader.ensure(state))
    assert third is second
    assert state.status == STALE and "served from stale cache" in state.last_error
