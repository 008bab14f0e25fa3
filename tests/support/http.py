"""A daemon that also serves HTTP (``serve --http``), and JSON calls to it with httpx."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.support.daemon import Daemon, free_port

CALL_TIMEOUT = 30.0


class HttpDaemon(Daemon):
    """A ``scriptorium serve --http 127.0.0.1:<free port>`` subprocess."""

    scheme = "http"

    def __init__(self, args: list[str], state_dir: Path, **kw: Any) -> None:
        self.http_port = free_port()
        super().__init__([*args, "--http", f"127.0.0.1:{self.http_port}"], state_dir, **kw)

    @property
    def base(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.http_port}"

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=CALL_TIMEOUT, **kw)


JSON_TYPE = {"content-type": "application/json"}


def post(client: httpx.Client, rpc: str, body: Any = None, **kw: Any) -> httpx.Response:
    """``POST /v1/<rpc>`` with ``body`` as JSON (a dict), or raw bytes/str as given, declared
    ``application/json`` either way (the door takes no other type)."""
    if body is None or isinstance(body, dict | list):
        return client.post(f"/v1/{rpc}", json=body if body is not None else {}, **kw)
    headers = {**JSON_TYPE, **kw.pop("headers", {})}
    return client.post(f"/v1/{rpc}", content=body, headers=headers, **kw)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def config_text(tree: Path, server: str = "watch = false") -> str:
    """``tree``'s docs and code as two default sources, under ``[server]`` lines ``server``."""
    return f"""
[server]
{server}

[[sources]]
name = "docs"
kind = "markdown"
root = "{tree / "docs"}"
default = true

[[sources]]
name = "code"
kind = "code"
root = "{tree / "code"}"
default = true
"""
