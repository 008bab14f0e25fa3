"""The command says what happened, in the form its reader needs: a failed call under
``--format json`` is a JSON object on stdout with the non-zero exit; ``index build`` prints its
sources as a table and does not claim to serve; a port in use is one sentence (no gRPC C-core
trace before it); ``health`` during a first build says how far the build has read.

Every process is real: a daemon on loopback, the CLI as a subprocess; the first build is held
at the ``build.write`` pause point (scriptorium/faults.py) while ``health`` asks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriptorium.faults import reached_marker
from tests.support.daemon import Daemon, free_port, running
from tests.support.trees import markdown_config, write_tree
from tests.support.waiting import wait_for

TREE = {
    "pkg/__init__.py": 'from ._client import Client\n\n__all__ = ["Client"]\n',
    "pkg/_client.py": "class Client:\n    pass\n",
    "guide.md": "# Guide\n\n## Setup\n\nFeed the capybara twice a day.\n",
}


def scriptorium(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("saying") / "repo", TREE)


@pytest.fixture(scope="module")
def daemon(tree: Path) -> Iterator[Daemon]:
    with running([str(tree), "--no-watch"], tree.parent / "state") as served:
        yield served


def test_a_failed_call_in_json_is_an_object_on_stdout(daemon):
    done = scriptorium("get", "pkg.Clinet", "--format", "json", "--target", daemon.address)
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"status", "code", "message", "resolution"}
    assert answer["status"] == "error" and answer["code"] == "NOT_FOUND"
    assert "pkg/__init__.py" in answer["message"]
    assert answer["resolution"]["reason"] == "not_found"
    assert answer["resolution"]["candidates"] == ["pkg.Client"]
    # A call that reached nothing is an object too, with no resolution, and exit 2.
    port = free_port()
    done = scriptorium("search", "x", "--format", "json", "--target", f"127.0.0.1:{port}")
    assert done.returncode == 2
    answer = json.loads(done.stdout)
    assert answer["code"] == "UNAVAILABLE" and answer["resolution"] is None
    # A mistake in the input is an object too (exit 2), before any daemon is asked.
    done = scriptorium("index", "build", "--config", "/nonexistent/x.toml", "--format", "json")
    assert done.returncode == 2
    answer = json.loads(done.stdout)
    assert answer["code"] == "INVALID_ARGUMENT" and "/nonexistent/x.toml" in answer["message"]
    # Text stays as it was: nothing on stdout, the sentence on stderr.
    done = scriptorium("get", "pkg.Clinet", "--target", daemon.address)
    assert done.returncode == 1 and done.stdout == ""
    assert "NOT_FOUND" in done.stderr


def test_a_top_k_above_the_cap_is_said(daemon):
    done = scriptorium("search", "capybara", "--top-k", "50", "--target", daemon.address)
    assert done.returncode == 0, done.stderr
    assert "note: --top-k 50 is above the cap of 25: at most 25" in done.stderr
    quiet = scriptorium("search", "capybara", "--top-k", "5", "--target", daemon.address)
    assert "cap" not in quiet.stderr


def test_index_build_prints_its_sources_as_a_table(tree, tmp_path):
    state = tmp_path / "state"
    first = scriptorium("index", "build", str(tree), "--state-dir", str(state))
    assert first.returncode == 0, first.stderr
    head, header, *rows = first.stdout.splitlines()
    assert head.startswith("generation 1 in ") and "3 documents" in head, first.stdout
    assert header.split() == ["NAME", "STATE", "DOCS"]
    assert [r.split() for r in rows] == [["docs", "ready", "1"], ["code", "ready", "2"]]
    assert "{" not in first.stdout
    # A second build finds the first; it serves nothing, so it does not say it does.
    again = scriptorium("index", "build", str(tree), "--state-dir", str(state))
    assert again.returncode == 0, again.stderr
    assert "serving index generation" not in again.stderr, again.stderr
    assert "found index generation 1" in again.stderr, again.stderr
    as_json = scriptorium("index", "build", str(tree), "--state-dir", str(state), "--format=json")
    assert json.loads(as_json.stdout)["sources"]["code"]["documents"] == 2


def test_a_port_in_use_is_one_sentence(daemon, tree, tmp_path):
    done = scriptorium(
        "serve", str(tree), "--no-watch", "--listen", daemon.address, "--state-dir",
        str(tmp_path / "state"),
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"scriptorium: error: cannot listen on {daemon.address}: the address is already in use "
        "(another daemon? stop it, or pick another address with --listen)"
    ], done.stderr


def test_health_during_a_first_build_says_how_far_it_has_read(tmp_path):
    docs = write_tree(tmp_path / "docs", {"a.md": "# A\n\nOne.\n", "b.md": "# B\n\nTwo.\n"})
    config = markdown_config(tmp_path / "docs.toml", {"docs": docs})
    release, port = tmp_path / "release", free_port()
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", "scriptorium", "serve", "--config", str(config)]
    command += ["--listen", f"127.0.0.1:{port}", "--state-dir", str(tmp_path / "state")]
    env = {**os.environ, "SCRIPTORIUM_FAULT_PAUSE": f"build.write={release}"}
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        assert wait_for(lambda: reached_marker(release).exists() or proc.poll() is not None, 120)
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()
        probe = scriptorium("health", "--target", f"127.0.0.1:{port}")
        assert probe.returncode == 1
        assert probe.stdout.splitlines() == [
            "NOT_SERVING",
            "  docs: loading: building: 2 of 2 files read (100%)",
        ], probe.stdout
    finally:
        release.touch()
        proc.kill()
        proc.wait()
        log.close()
