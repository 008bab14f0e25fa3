"""A panic in the served search index ends the call with an error status, never a hang.

tantivy reports a damaged segment by panicking, which reaches Python as pyo3's
``PanicException``, a ``BaseException``. ``SCRIPTORIUM_FAULT_PANIC`` (``faults.py``) makes the
served searcher raise one while a file exists: gRPC and HTTP callers get UNAVAILABLE (JSON on
HTTP), ListSources says the index is damaged, the index is built again from the roots, a
bounded number of times, and a restart serves.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import PANIC_ENV, reached_marker
from scriptorium.index.repair import MAX_REPAIRS
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.http import HttpDaemon, post
from tests.support.trees import markdown_config, write
from tests.support.waiting import wait_for

REFUSING = "refusing index generation"
# A generous deadline: the call must end with the index's error long before it.
DEADLINE = 60


def small_tree(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Alpha\n\nThe aardvark page.\n")
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")
    return markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})


def found(stub, query: str) -> list[str]:
    reply = stub.Search(pb.SearchRequest(query=query), timeout=DEADLINE)
    return [r.location for r in reply.results]


def search_failure(stub) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as failed:
        stub.Search(pb.SearchRequest(query="aardvark"), timeout=DEADLINE)
    return failed.value


def docs_source(stub) -> pb.SourceStatus:
    reply = stub.ListSources(pb.ListSourcesRequest(), timeout=15)
    return next(s for s in reply.sources if s.name == "docs")


def test_a_searcher_panic_is_an_error_status_reported_and_rebuilt(tmp_path):
    config = small_tree(tmp_path)
    panic, release = tmp_path / "panic", tmp_path / "repair"
    env = {PANIC_ENV: f"index.search={panic}", FAULT_PAUSE: f"repair.start={release}"}
    daemon = HttpDaemon(["--config", str(config)], tmp_path / "state", env=env)
    with daemon:
        assert found(daemon.stub, "aardvark") == ["a#alpha"]
        damaged_generation = daemon.stub.ListSources(pb.ListSourcesRequest()).generation
        panic.touch()
        failure = search_failure(daemon.stub)
        assert failure.code() == grpc.StatusCode.UNAVAILABLE, failure
        assert "search index" in failure.details() and "damaged" in failure.details()
        with daemon.client() as http:
            answer = post(http, "Search", {"query": "aardvark"})
        assert answer.status_code == 503
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["status"] == "UNAVAILABLE"
        assert wait_for(reached_marker(release).exists), daemon.log()
        status = docs_source(daemon.stub)
        assert status.state == pb.SOURCE_STATE_STALE
        assert "damaged" in status.last_error
        # GetContent reads no search index: it keeps answering meanwhile.
        content = daemon.stub.GetContent(pb.GetContentRequest(location="b"), timeout=DEADLINE)
        assert "bandicoot" in content.content
        panic.unlink()
        release.touch()
        ready = pb.SOURCE_STATE_READY
        assert wait_for(lambda: docs_source(daemon.stub).state == ready), daemon.log()
        assert docs_source(daemon.stub).generation > damaged_generation
        assert found(daemon.stub, "aardvark") == ["a#alpha"]
        assert daemon.full_log().count(REFUSING) == 1


def test_a_panic_that_keeps_coming_back_is_rebuilt_a_bounded_number_of_times(tmp_path):
    config = small_tree(tmp_path)
    state = tmp_path / "state"
    panic = tmp_path / "panic"
    with running(
        ["--config", str(config)], state, env={PANIC_ENV: f"index.search={panic}"}
    ) as daemon:
        panic.touch()

        def given_up() -> bool:
            failure = search_failure(daemon.stub)
            assert failure.code() == grpc.StatusCode.UNAVAILABLE, failure
            return "not repairing it again" in daemon.full_log()

        assert wait_for(given_up), daemon.log()
        assert daemon.full_log().count(REFUSING) == MAX_REPAIRS
        builds = daemon.full_log().count("documents, ")
        for _ in range(5):  # past the bound: errors, and no more builds
            assert search_failure(daemon.stub).code() == grpc.StatusCode.UNAVAILABLE
        assert daemon.full_log().count("documents, ") == builds
        status = docs_source(daemon.stub)
        assert status.state == pb.SOURCE_STATE_STALE
        assert "restart" in status.last_error
    panic.unlink()
    with running(["--config", str(config)], state) as again:
        assert found(again.stub, "aardvark") == ["a#alpha"]
