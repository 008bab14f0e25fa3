"""Loading one site's search index: lazily, once at a time, from disk or the network.

Each site has its own load gate (an asyncio lock), so concurrent callers share one load and
sites load independently. A disk cache younger than ``cache_hours`` is used on first load; an
index older than that is refreshed on next use. When the network fails, a stale disk cache (or
the index already in memory) keeps serving and the site reports itself stale; a site with
nothing to serve is failed until the cool-down passes, then retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from scriptorium_plugins.mkdocs.resolution import SitePages
from scriptorium_plugins.mkdocs.siteindex import (
    IndexFormatError,
    SiteIndex,
    index_revision,
    load_index_json,
)

LOADING, READY, STALE, FAILED = "loading", "ready", "stale", "failed"


class LoadError(RuntimeError):
    """A site index could not be loaded; the message is safe to report."""


@dataclass(slots=True)
class SiteState:
    name: str
    base_url: str
    cache_path: Path
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    index: SiteIndex | None = None
    pages: SitePages | None = None
    status: str = LOADING
    last_error: str = ""
    retry_at: float = 0.0  # monotonic; when a failed or stale site may try the network again
    loaded_at: float = 0.0  # monotonic time the served data corresponds to
    loaded_wall: float = 0.0  # wall-clock time of the same moment, for reports
    index_bytes: int = 0
    attempted: bool = False

    @property
    def usable(self) -> bool:
        return self.index is not None


async def http_get(client: httpx.AsyncClient, url: str, *, follow: bool = True) -> httpx.Response:
    """GET with network failures turned into ``LoadError`` (timeouts named as such)."""
    try:
        return await client.get(url, follow_redirects=follow)
    except httpx.TimeoutException:
        raise LoadError(f"timed out fetching {url}") from None
    except httpx.HTTPError as exc:
        raise LoadError(f"unreachable: {type(exc).__name__} for {url}") from None


class SiteLoader:
    """Owns the load state of every site of one source."""

    def __init__(
        self,
        *,
        index_url: Callable[[str], str],
        build: Callable[[str, list[object], str], SiteIndex],
        pages_for: Callable[[str, SiteIndex], SitePages],
        client: Callable[[], httpx.AsyncClient],
        cache_seconds: float,
        cooldown_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._index_url = index_url
        self._build = build
        self._pages_for = pages_for
        self._client = client
        self.cache_seconds = cache_seconds
        self.cooldown_seconds = cooldown_seconds
        self._clock = clock

    def _due(self, state: SiteState, now: float) -> bool:
        """Whether a site should (re)try the network now."""
        if state.index is None:
            return not state.attempted or now >= state.retry_at
        if state.status == STALE:
            return now >= state.retry_at
        return now - state.loaded_at >= self.cache_seconds

    async def ensure(self, state: SiteState) -> SiteIndex | None:
        """The site's index, loading or refreshing it first when due; None when unavailable."""
        now = self._clock()
        if not self._due(state, now):
            return state.index
        if state.index is not None and state.lock.locked():
            return state.index  # someone is refreshing it; serve what is there meanwhile
        async with state.lock:
            if self._due(state, self._clock()):
                await self._load(state)
        return state.index

    async def _load(self, state: SiteState) -> None:
        first = not state.attempted
        state.attempted = True
        if first and await self._from_disk(state, fresh_only=True):
            return
        try:
            raw = await self._fetch(state)
            entries = load_index_json(raw)
            index = await asyncio.to_thread(self._build, state.name, entries, index_revision(raw))
        except (LoadError, IndexFormatError) as exc:
            await self._failed(state, str(exc))
            return
        self._install(state, index, len(raw), self._clock(), time.time())
        state.status, state.last_error = READY, ""
        self._write_cache(state, raw)

    async def _fetch(self, state: SiteState) -> bytes:
        url = self._index_url(state.name)
        response = await http_get(self._client(), url)
        if response.status_code != 200:
            raise LoadError(f"HTTP {response.status_code} for {url}")
        return response.content

    async def _failed(self, state: SiteState, error: str) -> None:
        """Keep serving whatever is older than wanted (memory, else any disk cache), or fail."""
        state.retry_at = self._clock() + self.cooldown_seconds
        if state.index is None and not await self._from_disk(state, fresh_only=False):
            state.status, state.last_error = FAILED, error
            return
        when = datetime.fromtimestamp(state.loaded_wall, UTC).isoformat(timespec="seconds")
        state.status = STALE
        state.last_error = f"{error}; served from stale cache ({when})"

    async def _from_disk(self, state: SiteState, *, fresh_only: bool) -> bool:
        try:
            stat = state.cache_path.stat()
        except OSError:
            return False
        age = time.time() - stat.st_mtime
        if fresh_only and age >= self.cache_seconds:
            return False
        try:
            raw = state.cache_path.read_bytes()
            entries = load_index_json(raw)
            index = await asyncio.to_thread(self._build, state.name, entries, index_revision(raw))
        except (OSError, IndexFormatError):
            return False
        self._install(state, index, len(raw), self._clock() - max(0.0, age), stat.st_mtime)
        state.status, state.last_error = READY, ""
        return True

    def _install(
        self, state: SiteState, index: SiteIndex, size: int, loaded_at: float, wall: float
    ) -> None:
        state.index = index
        state.pages = self._pages_for(state.name, index)
        state.index_bytes = size
        state.loaded_at = loaded_at
        state.loaded_wall = wall

    @staticmethod
    def _write_cache(state: SiteState, raw: bytes) -> None:
        """Atomically replace the cache file; a cache that cannot be written is not an error."""
        path = state.cache_path
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(raw)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
