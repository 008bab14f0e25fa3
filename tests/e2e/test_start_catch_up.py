"""Start-up serves the newest generation first and catches up with disk after.

A file edited while the daemon was down is not searchable the moment health turns SERVING:
the daemon serves the generation it has, says its sources are catching up with disk, and
lands the edit when the start-up reconcile does. The ``start.catch_up`` pause holds that
reconcile, so the test sees the in-between state however fast the machine is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from grpc_health.v1 import health_pb2

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import markdown_config, write
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e
SERVING = health_pb2.HealthCheckResponse.SERVING


def _locations(stub, query: str) -> list[str]:
    return [r.location for r in stub.Search(pb.SearchRequest(query=query), timeout=30).results]


def _status(stub) -> pb.ListSourcesResponse:
    return stub.ListSources(pb.ListSourcesRequest(), timeout=15)


def _built_once(tmp_path: Path) -> tuple[Path, Path, Path, pb.ListSourcesResponse]:
    """A one-page docs tree, its config, and a state directory holding the generation a
    daemon built from it (with that daemon's ListSources), the daemon stopped."""
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Alpha\n\nThe aardvark page.\n")
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    state = tmp_path / "state"
    with running(["--config", str(config)], state) as first:
        return docs, config, state, _status(first.stub)


def test_a_restart_serves_the_old_generation_until_the_edit_made_while_down_lands(
    tmp_path: Path,
) -> None:
    docs, config, state, built = _built_once(tmp_path)
    assert built.generation == 1
    assert built.sources[0].state == pb.SOURCE_STATE_READY
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")  # while the daemon is down
    release = tmp_path / "release-catch-up"
    env = {FAULT_PAUSE: f"start.catch_up={release}"}
    with running(["--config", str(config)], state, env=env) as daemon:
        stub = daemon.stub
        assert wait_for(reached_marker(release).exists), daemon.log()
        # Serving generation 1 as it was, and saying the source is catching up.
        assert daemon.health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == SERVING
        assert _locations(stub, "aardvark") == ["a#alpha"]
        assert _locations(stub, "bandicoot") == []
        held = _status(stub)
        assert held.generation == 1
        (source,) = held.sources
        assert source.state == pb.SOURCE_STATE_STALE
        assert source.last_error.startswith("catching up with disk"), source.last_error
        assert source.document_count == 1
        assert "caught up with disk" not in daemon.full_log()

        release.touch()
        daemon.wait_caught_up()
        assert _locations(stub, "bandicoot") == ["b#beta"]
        landed = _status(stub)
        assert landed.generation == 2
        (source,) = landed.sources
        assert source.state == pb.SOURCE_STATE_READY
        assert source.last_error == ""
        assert source.document_count == 2
        assert source.indexed_at.ToDatetime() > held.sources[0].indexed_at.ToDatetime()


def test_a_restart_with_nothing_changed_catches_up_without_a_new_generation(
    tmp_path: Path,
) -> None:
    _, config, state, _ = _built_once(tmp_path)
    with running(["--config", str(config)], state) as daemon:
        daemon.wait_caught_up()
        assert "generation 1 matches the roots" in daemon.full_log()
        status = _status(daemon.stub)
        assert status.generation == 1
        assert status.sources[0].state == pb.SOURCE_STATE_READY
    assert sorted(p.name for p in (state / "generations").iterdir()) == ["gen-000001"]
