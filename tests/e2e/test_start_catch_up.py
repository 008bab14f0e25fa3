"""Start-up serves the newest generation first and catches up with disk after.

A file edited while the daemon was down is not searchable the moment health turns SERVING:
the daemon serves the generation it has, says its sources are catching up with disk, and
lands the edit when the start-up reconcile does. The ``start.catch_up`` pause holds that
reconcile, so the test sees the in-between state however fast the machine is.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
from grpc_health.v1 import health_pb2

from scriptorium.client import CURRENT_HEALTH
from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import cli, free_port, running
from tests.support.trees import markdown_config, write
from tests.support.waiting import wait_for

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


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


def test_a_client_waiting_for_current_answers_gets_the_new_trees(tmp_path: Path) -> None:
    """Health SERVING comes at once on the old generation; the ``scriptorium.v1.current``
    entry (and ``--wait-current``) only once the catch-up has landed, so a client that waits
    on it never scores the old tree."""
    docs, config, state, _ = _built_once(tmp_path)
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")  # while the daemon is down
    release = tmp_path / "release-catch-up"
    env = {FAULT_PAUSE: f"start.catch_up={release}"}
    current = health_pb2.HealthCheckRequest(service=CURRENT_HEALTH)
    with running(["--config", str(config)], state, env=env) as daemon:
        assert wait_for(reached_marker(release).exists), daemon.log()
        assert daemon.health.Check(health_pb2.HealthCheckRequest(), timeout=5).status == SERVING
        assert daemon.health.Check(current, timeout=5).status == NOT_SERVING
        waiter = subprocess.Popen(
            [
                *(sys.executable, "-m", "scriptorium", "search", "bandicoot"),
                *("--wait-current", "--timeout", "120", "--target", daemon.address),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # The catch-up is held, so the waiter cannot have its answer yet.
            assert daemon.health.Check(current, timeout=5).status == NOT_SERVING
            release.touch()
            out, err = waiter.communicate(timeout=180)
        finally:
            if waiter.poll() is None:
                waiter.kill()
                waiter.wait(30)
        assert waiter.returncode == 0, err
        assert "b#beta" in out, out
        assert daemon.health.Check(current, timeout=5).status == SERVING
        assert "caught up with disk" in daemon.full_log()


def test_the_current_readiness_over_http_and_the_health_command(tmp_path: Path) -> None:
    docs, config, state, _ = _built_once(tmp_path)
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")
    release = tmp_path / "release-catch-up"
    env = {FAULT_PAUSE: f"start.catch_up={release}"}
    http = free_port()
    args = ["--config", str(config), "--http", f"127.0.0.1:{http}"]
    with running(args, state, env=env) as daemon:
        assert wait_for(reached_marker(release).exists), daemon.log()
        base = f"http://127.0.0.1:{http}"
        assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
        assert httpx.get(f"{base}/readyz?current", timeout=10).status_code == 503
        probe = cli(daemon, "health", "--service", CURRENT_HEALTH)
        assert (probe.returncode, probe.stdout.strip()) == (1, "NOT_SERVING")
        release.touch()
        waited = cli(daemon, "health", "--wait-current", "--timeout", "120")
        assert (waited.returncode, waited.stdout.strip()) == (0, "SERVING"), waited.stderr
        assert httpx.get(f"{base}/readyz?current", timeout=10).status_code == 200
