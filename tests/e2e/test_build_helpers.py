"""Build helpers through a real daemon: the same index as a one-process build, and no fallback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from scriptorium import faults
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, running, write_fastapi_config
from tests.support.trees import markdown_config, write_tree
from tests.support.waiting import wait_for

QUERIES = ["declare path parameters with types", "OAuth2PasswordBearer", "パスパラメータ"]


def answers(daemon) -> dict[str, list[tuple[str, float, str]]]:
    out = {}
    for query in QUERIES:
        response = daemon.stub.Search(pb.SearchRequest(query=query, top_k=10), timeout=30)
        out[query] = [(r.ref_id, round(r.score, 6), r.preview) for r in response.results]
    return out


def test_a_daemon_building_with_helpers_serves_what_a_one_process_build_serves(
    fastapi_corpus, tmp_path
):
    config = write_fastapi_config(tmp_path / "c.toml", CORPUS)  # 912 files: helpers start
    with running(["--config", str(config), "--build-workers", "2"], tmp_path / "two") as spread:
        with_helpers = answers(spread)
        log = spread.log()
    assert "index generation 1: 912 documents" in log
    assert "without helper processes" not in log, log
    with running(["--config", str(config), "--build-workers", "1"], tmp_path / "one") as serial:
        assert answers(serial) == with_helpers
    assert all(with_helpers.values())


def _processes() -> dict[int, tuple[int, str, str]]:
    """Every process now: pid -> (parent pid, state, start time), from /proc."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(entry.name)] = (int(fields[1]), fields[0], fields[19])
    return out


def _descendants(root: int) -> dict[int, str]:
    """The live processes below ``root``: pid -> start time (a pid reused later is another)."""
    table = _processes()
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _state, started) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = started
                frontier.append(pid)
    return found


def _alive(pid: int, started: str) -> bool:
    now = _processes().get(pid)
    return now is not None and now[1] != "Z" and now[2] == started


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_a_build_killed_outright_leaves_no_helper_or_resource_tracker(tmp_path):
    """kill -9 of ``index build`` while its helpers hold chunks: every process it started
    (the helpers, the multiprocessing resource tracker) ends with it."""
    # Chunks are at least 128 KB: 240 pages of 8 KB make a chunk for each helper and more.
    body = "Words about the topic, and then some more words about it.\n" * 140
    pages = {f"p{i:03d}.md": f"# Page {i}\n\n{body}" for i in range(240)}
    docs = write_tree(tmp_path / "docs", pages)
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    release = tmp_path / "release-helpers"
    env = {**os.environ, faults.ENV: f"build.helper={release}"}
    build = subprocess.Popen(
        [
            *(sys.executable, "-m", "scriptorium", "index", "build"),
            *("--config", str(config), "--state-dir", str(tmp_path / "state")),
            *("--build-workers", "3"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started: dict[int, str] = {}
    try:
        # Both helpers hold a chunk: they, and the resource tracker, are running.
        assert wait_for(lambda: faults.times_reached(release) >= 2 or build.poll() is not None)
        assert build.poll() is None, "the build ended before its helpers held their chunks"
        started = _descendants(build.pid)
        commands = [_cmdline(pid) for pid in started]
        assert sum("multiprocessing" in c and "resource_tracker" not in c for c in commands) >= 2
        assert any("resource_tracker" in c for c in commands), commands

        build.kill()
        assert build.wait(60) == -signal.SIGKILL
        assert wait_for(lambda: not any(_alive(p, s) for p, s in started.items())), [
            _cmdline(p) for p, s in started.items() if _alive(p, s)
        ]
    finally:
        release.touch()
        if build.poll() is None:
            build.kill()
            build.wait(60)
        for pid, when in started.items():  # what this test started, should it have leaked
            if _alive(pid, when):
                os.kill(pid, signal.SIGKILL)
