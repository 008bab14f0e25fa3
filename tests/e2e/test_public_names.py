"""Names people know, through a real daemon: a package's public name (``httpx.Client``,
``pydantic.BaseModel``) resolves to where it is defined by following the package's re-exports
(Python imports, ``__all__`` and lazy import tables; TypeScript ``export ... from``; Rust
``pub use``), with the rule ``re-export``; a miss names the file looked in and its closest
public names. And a location exactly as Search returned it resolves as ``exact``.

The tree is written here: small packages shaped like httpx (private modules under a facade),
pydantic (``from .main import *`` under TYPE_CHECKING and a lazy import table), a TypeScript
barrel file and a Rust crate root, and a ``docs/`` folder under a bare served root.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import grpc
import pytest

from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon, running
from tests.support.trees import write_tree

TREE = {
    "webby/__init__.py": (
        '"""A facade: the public names live in private modules."""\n'
        "from ._client import AsyncClient, Client\n"
        "from ._models import Request as Request\n"
        "from .errors import *\n\n"
        '__all__ = ["AsyncClient", "Client", "Request", "HTTPError", "codes"]\n'
    ),
    "webby/_client.py": (
        "class Client:\n"
        '    """A client."""\n\n'
        "    def get(self, url: str) -> str:\n"
        "        return url\n\n\n"
        "class AsyncClient:\n"
        "    async def get(self, url: str) -> str:\n"
        "        return url\n"
    ),
    "webby/_models.py": 'class Request:\n    method: str = "GET"\n',
    "webby/errors.py": "class HTTPError(Exception):\n    pass\n",
    "models/__init__.py": (
        "import typing\n\n"
        "if typing.TYPE_CHECKING:\n"
        "    from .main import *\n\n"
        '__all__ = ("BaseModel", "EmailStr")\n\n'
        "_dynamic_imports = {\n"
        '    "BaseModel": (__spec__.parent, ".main"),\n'
        '    "EmailStr": (__spec__.parent, ".networks"),\n'
        "}\n\n\n"
        "def __getattr__(name):\n"
        "    return _dynamic_imports[name]\n"
    ),
    "models/main.py": "class BaseModel:\n    def model_dump(self) -> dict:\n        return {}\n",
    "models/networks.py": "class EmailStr(str):\n    pass\n",
    "web/src/index.ts": (
        'export { Widget, WidgetProps as Props } from "./widgets/widget";\n'
        'export * from "./theme";\n'
    ),
    "web/src/widgets/widget.ts": (
        "export interface WidgetProps {\n  name: string;\n}\n\n"
        'export class Widget {\n  render(): string {\n    return "widget";\n  }\n}\n'
    ),
    "web/src/theme.ts": 'export function darkTheme(): string {\n  return "dark";\n}\n',
    "crate/src/lib.rs": "mod net;\npub use crate::net::{Connection, pool::Pool as ConnPool};\n",
    "crate/src/net/mod.rs": "pub mod pool;\npub struct Connection {\n    pub host: String,\n}\n",
    "crate/src/net/pool.rs": "pub struct Pool {\n    pub size: usize,\n}\n",
    "docs/ranking.md": "# Ranking\n\nIntro.\n\n## Abstention\n\nWhen search abstains.\n",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = write_tree(tmp_path_factory.mktemp("public-names") / "repo", TREE)
    with running([str(root), "--no-watch"], root.parent / "state") as served:
        yield served


def fetch(daemon: Daemon, location: str) -> pb.GetContentResponse:
    request = pb.GetContentRequest(location=location, mode=pb.CONTENT_MODE_SNIPPET)
    return daemon.stub.GetContent(request, timeout=30)


def failure(daemon: Daemon, location: str) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        fetch(daemon, location)
    return err.value


@pytest.mark.parametrize(
    ("location", "defined_at", "first_line"),
    [
        ("webby.Client", "webby/_client.py#Client", "class Client:"),
        ("webby.Client.get", "webby/_client.py#Client.get", "    def get(self, url: str) -> str:"),
        ("webby.Request", "webby/_models.py#Request", "class Request:"),
        ("webby.HTTPError", "webby/errors.py#HTTPError", "class HTTPError(Exception):"),
        ("webby/__init__.py#AsyncClient", "webby/_client.py#AsyncClient", "class AsyncClient:"),
        ("models.BaseModel", "models/main.py#BaseModel", "class BaseModel:"),
        ("models.EmailStr", "models/networks.py#EmailStr", "class EmailStr(str):"),
        ("web/src/index.ts#Widget", "web/src/widgets/widget.ts#Widget", "export class Widget {"),
        ("web/src/index.ts#Props", "web/src/widgets/widget.ts#WidgetProps", "export interface"),
        ("web/src/index.ts#darkTheme", "web/src/theme.ts#darkTheme", "export function darkTheme"),
        ("crate/src/lib.rs#Connection", "crate/src/net/mod.rs#Connection", "pub struct Connection"),
        ("crate/src/lib.rs#ConnPool", "crate/src/net/pool.rs#Pool", "pub struct Pool {"),
    ],
)
def test_a_public_name_resolves_to_its_definition_by_re_export(
    daemon, location, defined_at, first_line
):
    reply = fetch(daemon, location)
    assert reply.resolution.reason == "resolved"
    assert reply.resolution.rule == "re-export"
    assert reply.location == defined_at
    assert reply.resolution.resolved_location == defined_at
    assert reply.content.splitlines()[0].startswith(first_line)
    assert reply.scope == "definition"
    # The location it hands back names the definition itself: exact, no re-export.
    assert fetch(daemon, reply.location).resolution.rule == "exact"


def test_a_missing_public_name_names_the_file_and_the_closest_public_names(daemon):
    err = failure(daemon, "webby.Clinet")
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert "webby/__init__.py" in err.details()
    resolution = resolution_from_error(err)
    assert resolution.reason == "not_found"
    assert "webby/__init__.py" in resolution.detail
    assert "webby.Client" in resolution.candidates
    # Each candidate is a location to pass back, and it resolves.
    for candidate in resolution.candidates:
        assert fetch(daemon, candidate).resolution.reason == "resolved"
    err = failure(daemon, "models.BaseModle")
    assert "models.BaseModel" in resolution_from_error(err).candidates
    err = failure(daemon, "web/src/index.ts#Widgit")
    assert "web/src/index.ts#Widget" in resolution_from_error(err).candidates


def test_the_cli_prints_the_re_export_and_the_file_a_miss_looked_in(daemon):
    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "scriptorium", *args, "--target", daemon.address]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    found = run("get", "webby.Client")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("class Client:")
    assert "webby/_client.py#Client" in found.stderr and "by re-export" in found.stderr
    missed = run("get", "webby.Clinet")
    assert missed.returncode == 1
    assert "webby/__init__.py" in missed.stderr
    assert "candidate: webby.Client" in missed.stderr


def test_a_location_as_search_returned_it_resolves_as_exact(daemon):
    search = daemon.stub.Search(pb.SearchRequest(query="when does search abstain"), timeout=30)
    location = next(r.location for r in search.results if "ranking" in r.location)
    assert location == "docs/ranking#abstention"
    reply = fetch(daemon, location)
    assert reply.resolution.rule == "exact"
    assert reply.location == location
    assert reply.content.startswith("## Abstention")
