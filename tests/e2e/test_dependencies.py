"""The ``dependencies`` source kind through a real daemon: what a project's manifests and lock
files name, read from where it is really installed (a virtualenv from PyPI, a ``node_modules``
from npm, a Go module cache from the module proxy; ``tests/support/installs.py`` makes them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.e2e.test_mcp import McpSession, text_json
from tests.support import installs
from tests.support.daemon import Daemon, cli, running
from tests.support.waiting import wait_for

PYPROJECT = """\
[project]
name = "weather"
version = "0.1.0"
dependencies = ["httpx>=0.27", "pydantic>=2", "no-such-dist>=1"]
"""
UV_LOCK = f"""\
version = 1
requires-python = ">=3.11"

[[package]]
name = "httpx"
version = "{installs.HTTPX}"
source = {{ registry = "https://pypi.org/simple" }}

[[package]]
name = "no-such-dist"
version = "1.0.0"
source = {{ registry = "https://pypi.org/simple" }}

[[package]]
name = "pydantic"
version = "{installs.PYDANTIC}"
source = {{ registry = "https://pypi.org/simple" }}

[[package]]
name = "weather"
version = "0.1.0"
source = {{ editable = "." }}
"""
APP = '''\
"""The weather service's forecast fetcher."""

import httpx


def fetch_forecast(city: str) -> dict:
    """Fetch the forecast for a city from the weather station, giving up after ten seconds."""
    with httpx.Client(timeout=10.0) as client:
        return client.get(f"https://station.example/{city}").json()
'''
GENERATION = re.compile(
    r"index generation (\d+): \d+ documents, \d+ blocks \((\d+) changed, (\d+) removed\)"
)


def search(stub, query: str, **fields) -> list[pb.SearchResult]:
    reply = stub.Search(pb.SearchRequest(query=query, top_k=10, **fields), timeout=60)
    return list(reply.results)


def source_named(stub, name: str) -> pb.SourceStatus:
    reply = stub.ListSources(pb.ListSourcesRequest(), timeout=30)
    return next(s for s in reply.sources if s.name == name)


@pytest.fixture(scope="module")
def python_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path]]:
    venv = installs.python_env()
    project = tmp_path_factory.mktemp("python-deps") / "weather"
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "uv.lock").write_text(UV_LOCK)
    (project / "weather.py").write_text(APP)
    env = {"VIRTUAL_ENV": str(venv)}
    with running([str(project), "--no-watch"], project.parent / "state", env=env) as daemon:
        yield daemon, venv


def test_serve_offers_the_installed_dependencies_and_says_so(python_project) -> None:
    daemon, venv = python_project
    log = daemon.full_log()
    assert "deps: 2 libraries indexed of 3 declared" in log
    assert "not installed (nothing is downloaded): no-such-dist@1.0.0" in log
    assert "[dependencies] enabled = false" in log and "--no-dependencies" in log
    status = source_named(daemon.stub, "deps")
    assert status.kind == "dependencies" and status.source_class == "reference"
    # A dependency declared but not installed is said, never an error.
    assert status.state == pb.SOURCE_STATE_READY and not status.last_error
    assert "no-such-dist@1.0.0" in status.detail
    libraries = {lib.name: lib for lib in status.libraries}
    httpx = libraries["httpx"]
    assert (httpx.version, httpx.installed_version, httpx.installed) == (
        installs.HTTPX,
        installs.HTTPX,
        True,
    )
    assert httpx.location.startswith(str(venv))
    assert "https://www.python-httpx.org" in httpx.documentation_urls
    assert not libraries["no-such-dist"].installed
    assert libraries["pydantic"].files > 50
    # `scriptorium sources` says it under the table.
    shown = cli(daemon, "sources")
    assert shown.returncode == 0, shown.stderr
    assert "deps: 2 libraries indexed of 3 declared; not installed" in shown.stdout


def test_an_httpx_question_is_answered_from_the_pinned_installed_code(python_project) -> None:
    daemon, venv = python_project
    hits = search(daemon.stub, "set a timeout on an httpx client")
    code = [h for h in hits if h.location.startswith(f"httpx@{installs.HTTPX}:httpx/_client.py#")]
    assert code, [h.location for h in hits]
    assert (code[0].library, code[0].library_version) == ("httpx", installs.HTTPX)
    assert code[0].source == "deps"
    assert code[0].url.startswith((venv / "lib").as_uri())
    # The location reads back exactly the installed file's lines.
    got = daemon.stub.GetContent(
        pb.GetContentRequest(location=code[0].location, mode=pb.CONTENT_MODE_FULL), timeout=30
    )
    site = next((venv / "lib").glob("python*/site-packages"))
    lines = (site / "httpx/_client.py").read_text().splitlines()
    assert got.content.splitlines() == lines[got.start_line - 1 : got.end_line]
    # The wheel's README (its long description) is a page of the library's docs.
    docs = search(daemon.stub, "httpx features HTTP/2 support", kinds=[pb.CORPUS_DOCS])
    assert any(h.location.startswith(f"httpx@{installs.HTTPX}:README.md") for h in docs)


def test_a_public_name_of_a_library_resolves_to_its_installed_definition(python_project) -> None:
    daemon, _ = python_project
    got = daemon.stub.GetContent(
        pb.GetContentRequest(location="pydantic.BaseModel.model_dump"), timeout=30
    )
    assert got.location == f"pydantic@{installs.PYDANTIC}:pydantic/main.py#BaseModel.model_dump"
    assert "def model_dump(" in got.content


def test_the_projects_own_code_is_not_crowded_out(python_project) -> None:
    daemon, _ = python_project
    hits = search(daemon.stub, "fetch the forecast for a city with a client timeout")
    assert hits[0].location.startswith("weather.py"), [h.location for h in hits]
    assert not hits[0].library


def test_search_limited_to_one_library(python_project) -> None:
    daemon, _ = python_project
    hits = search(daemon.stub, "timeout", library="pydantic")
    assert hits and {(h.library, h.library_version) for h in hits} == {
        ("pydantic", installs.PYDANTIC)
    }
    # Names compare as distributions do: case and -_. runs alike.
    assert search(daemon.stub, "timeout", library="HTTPX")[0].library == "httpx"
    with pytest.raises(grpc.RpcError) as caught:
        search(daemon.stub, "timeout", library="htpx")
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "unknown library 'htpx'; known libraries: 'httpx', 'pydantic'" in caught.value.details()
    # The CLI's --library.
    done = cli(daemon, "search", "model_dump", "--library", "pydantic", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert f'"library_version": "{installs.PYDANTIC}"' in done.stdout or (
        f'"libraryVersion": "{installs.PYDANTIC}"' in done.stdout
    )


def test_an_agent_asks_through_mcp(python_project) -> None:
    daemon, _ = python_project
    with McpSession(["--target", daemon.address]) as session:
        ask = {"query": "set a timeout on an httpx client", "library": "httpx", "maxResults": 3}
        hits = text_json(session.call("search_code", ask))
        assert hits and {h["Library"] for h in hits} == {f"httpx@{installs.HTTPX}"}
        assert hits[0]["Path"].startswith(f"httpx@{installs.HTTPX}:httpx/")
        own = text_json(session.call("search_code", {"query": "fetch_forecast", "maxResults": 3}))
        assert own[0]["Path"].startswith("weather.py") and "Library" not in own[0]
        sources = text_json(session.call("list_sources", {}))["sources"]
        assert "no-such-dist@1.0.0" in next(s for s in sources if s["name"] == "deps")["detail"]


@pytest.fixture(scope="module")
def node_and_go(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, Path]]:
    cache = installs.go_module_cache()
    project = tmp_path_factory.mktemp("node-go-deps") / "service"
    installs.node_project(project)
    (project / "go.mod").write_text(go_mod(installs.UUID_OLD))
    config = project.parent / "scriptorium.toml"
    config.write_text(
        f"""
[[sources]]
name = "libs"
kind = "dependencies"
root = "{project}"
gomodcache = "{cache}"
"""
    )
    args = ["--config", str(config), "--watch-interval", "0.2", "--build-workers", "1"]
    with running(args, project.parent / "state") as daemon:
        yield daemon, project


def go_mod(uuid: str) -> str:
    return (
        "module example.com/service\n\ngo 1.21\n\nrequire (\n"
        f"\tgithub.com/google/uuid {uuid}\n\tgithub.com/pkg/errors {installs.ERRORS}\n)\n"
    )


def test_node_modules_and_the_go_module_cache(node_and_go) -> None:
    daemon, _ = node_and_go
    hits = search(daemon.stub, "parse a duration string into milliseconds", library="ms")
    assert hits[0].location.startswith(f"libs/ms@{installs.MS}:"), [h.location for h in hits]
    assert hits[0].library_version == installs.MS
    uuid = search(daemon.stub, "NewRandom random UUID", library="github.com/google/uuid")
    prefix = f"libs/github.com/google/uuid@{installs.UUID_OLD}:"
    assert uuid and all(h.location.startswith(prefix) for h in uuid)
    got = daemon.stub.GetContent(pb.GetContentRequest(location=uuid[0].location), timeout=30)
    assert got.resolution.reason == "resolved" and got.content


def test_a_version_bump_reindexes_only_that_dependency(node_and_go) -> None:
    daemon, project = node_and_go
    before = {lib.name: lib for lib in source_named(daemon.stub, "libs").libraries}
    old_files = before["github.com/google/uuid"].files
    assert old_files > 0 and before["github.com/pkg/errors"].files > 0 and before["ms"].files > 0
    generations_before = GENERATION.findall(daemon.full_log())
    # An editor's save: the new go.mod replaces the old one whole.
    staged = project / ".go.mod.new"
    staged.write_text(go_mod(installs.UUID_NEW))
    os.replace(staged, project / "go.mod")
    new_prefix = f"libs/github.com/google/uuid@{installs.UUID_NEW}:"
    assert wait_for(
        lambda: any(
            h.location.startswith(new_prefix)
            for h in search(daemon.stub, "NewRandom", library="github.com/google/uuid")
        )
    ), daemon.log()
    after = {lib.name: lib for lib in source_named(daemon.stub, "libs").libraries}
    assert after["github.com/google/uuid"].installed_version == installs.UUID_NEW
    landed = GENERATION.findall(daemon.full_log())[len(generations_before) :]
    assert landed, daemon.log()
    # The edit lands in one generation; one written again from the roots may follow it (its
    # blocks deleted from the index, index/rewriting.py), at a moment of its own, and is not
    # the edit's.
    _, changed_text, removed_text = landed[0]
    changed, removed = int(changed_text), int(removed_text)
    # Exactly the new version's files were read and the old version's dropped: pkg/errors and
    # ms kept their blocks as they were.
    assert (changed, removed) == (after["github.com/google/uuid"].files, old_files)
    assert after["github.com/pkg/errors"].files == before["github.com/pkg/errors"].files
    assert not [
        h
        for h in search(daemon.stub, "NewRandom", library="github.com/google/uuid")
        if installs.UUID_OLD in h.location
    ]
