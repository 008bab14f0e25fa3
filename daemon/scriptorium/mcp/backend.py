"""The daemon the MCP tools talk to: a named one, or an embedded one started for the bridge."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scriptorium.client import AsyncClient
from scriptorium.mcp.embedded import EmbeddedDaemon


class Backend:
    """Hands out one ``AsyncClient``, created on first use inside the running event loop.

    With an embedded daemon the first call waits until it is SERVING, so the MCP handshake is
    answered at once even when a large tree is still being indexed.
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        embedded: EmbeddedDaemon | None = None,
        token: str | None = None,
        tls_ca: Path | None = None,
        timeout: float = 30.0,
        startup_timeout: float = 600.0,
    ) -> None:
        if (target is None) == (embedded is None):
            raise ValueError("give exactly one of target or embedded")
        self.target = target
        self.embedded = embedded
        self.token = token
        self.tls_ca = tls_ca
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self._client: AsyncClient | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def description(self) -> str:
        """Where calls go, for error messages."""
        if self.target is not None:
            return f"the Scriptorium daemon at {self.target}"
        address = self.embedded.address if self.embedded else None
        return f"the embedded Scriptorium daemon{f' at {address}' if address else ''}"

    async def client(self) -> AsyncClient:
        if self._client is not None:
            return self._client
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is None:
                target = self.target
                if target is None:
                    assert self.embedded is not None
                    target = await self.embedded.wait_ready(self.startup_timeout)
                self._client = AsyncClient(
                    target, token=self.token, root_certificates=self.tls_ca, timeout=self.timeout
                )
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
