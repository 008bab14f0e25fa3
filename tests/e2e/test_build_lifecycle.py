"""Builds that can be stopped, failed writes said in one sentence, health that tells the truth.

Every daemon and build is a real subprocess. Interrupts are sent while the build is held at
the ``build.write`` pause point (see scriptorium/faults.py), which it leaves only when it is
cancelled: a build that ignores the interrupt never exits, so the bounded wait fails. A full
disk is a real small tmpfs under the state directory (skipped where it cannot be mounted).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from scriptorium.faults import reached_marker
from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc
from tests.support.daemon import CORPUS, free_port
from tests.support.trees import markdown_config as config
from tests.support.trees import write
from tests.support.waiting import wait_for

EXIT_INTERRUPTED = 130  # what the CLI exits with for Ctrl-C (128 + SIGINT)
WAIT_S = 120.0


def docs_tree(root: Path) -> Path:
    write(root / "index.md", "# Home\n\nThe capybara handbook.\n")
    write(root / "guide.md", "# Guide\n\n## Setup\n\nFeed the capybara twice a day.\n")
    return root


def generations(state: Path) -> list[str]:
    """Every entry under generations/, partial ones (``.tmp-*``) included."""
    folder = state / "generations"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def partials(state: Path) -> list[str]:
    return [name for name in generations(state) if name.startswith(".tmp-")]


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "scriptorium", *args]


def start(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )


@contextlib.contextmanager
def reaped(proc: subprocess.Popen, release: Path | None = None) -> Iterator[subprocess.Popen]:
    """Never leave the process behind: release its pause, then kill it if it still runs."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            if release is not None:
                release.touch()
            proc.kill()
            proc.wait()


def serve_command(cfg: Path, state: Path, port: int) -> list[str]:
    return command(
        "serve", "--config", str(cfg), "--listen", f"127.0.0.1:{port}", "--state-dir", str(state)
    )


def health_of(port: int) -> int | None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            stub = health_pb2_grpc.HealthStub(channel)
            return stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2).status
        except grpc.RpcError:
            return None


def health_probe(port: int) -> subprocess.CompletedProcess:
    """``scriptorium health``, the exec probe: the status, then any source that is not ready."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "scriptorium", "health", "--target", f"127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def list_sources(port: int) -> pb.ListSourcesResponse:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        return stub.ListSources(pb.ListSourcesRequest(), timeout=15)


def search(port: int, query: str) -> list[str]:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        reply = stub.Search(pb.SearchRequest(query=query), timeout=15)
        return [r.location for r in reply.results]


def held_at_write(proc: subprocess.Popen, release: Path, log: Path) -> None:
    reached = reached_marker(release)
    assert wait_for(lambda: reached.exists() or proc.poll() is not None), log.read_text()
    assert proc.poll() is None, f"exited before its build was written:\n{log.read_text()}"


def assert_cancelled_cleanly(proc: subprocess.Popen, state: Path, log: Path) -> None:
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the process did not exit after SIGINT:\n{log.read_text()[-4000:]}")
    output = log.read_text("utf-8", "replace")
    assert code == EXIT_INTERRUPTED, output
    # Nothing half written and nothing served: what the build had indexed is at most kept
    # as a partial a restart continues from (``index/resume.py``), and says so.
    left = generations(state)
    assert all(name.startswith(".resume-") for name in left), left
    assert "Traceback" not in output, output
    assert "index build cancelled" in output, output
    if left:
        assert "its progress was kept as partial generation" in output, output


# -- 1. an interrupt cancels the build in progress ---------------------------------------------


def test_sigint_during_the_first_build_of_serve_cancels_it(tmp_path: Path) -> None:
    cfg = config(tmp_path / "docs.toml", {"docs": docs_tree(tmp_path / "docs")})
    state, release, log = tmp_path / "state", tmp_path / "release", tmp_path / "serve.log"
    proc = start(
        serve_command(cfg, state, free_port()),
        log,
        {"SCRIPTORIUM_FAULT_PAUSE": f"build.write={release}"},
    )
    with reaped(proc, release):
        held_at_write(proc, release, log)
        assert partials(state), "the held build has no partial generation to discard"
        proc.send_signal(signal.SIGINT)
        assert_cancelled_cleanly(proc, state, log)
    assert not release.exists(), "the build was released, not cancelled"


def test_sigint_during_index_build_cancels_it(tmp_path: Path) -> None:
    cfg = config(tmp_path / "docs.toml", {"docs": docs_tree(tmp_path / "docs")})
    state, release, log = tmp_path / "state", tmp_path / "release", tmp_path / "build.log"
    proc = start(
        command("index", "build", "--config", str(cfg), "--state-dir", str(state)),
        log,
        {"SCRIPTORIUM_FAULT_PAUSE": f"build.write={release}"},
    )
    with reaped(proc, release):
        held_at_write(proc, release, log)
        proc.send_signal(signal.SIGINT)
        assert_cancelled_cleanly(proc, state, log)


# -- 2. a full disk, said in one sentence --------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs: too small for the index of the FastAPI docs (see ``big_docs``)."""
    mount = shutil.which("mount")
    if mount is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    point = tmp_path / f"small-{uuid.uuid4().hex[:6]}"
    point.mkdir()
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(point)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False, capture_output=True)


def big_docs(root: Path) -> Path:
    """The English, Japanese and Chinese FastAPI docs: 4 MB of text, some 5 MB indexed."""
    shutil.copytree(CORPUS / "docs", root, dirs_exist_ok=True)
    return root


def test_index_build_on_a_full_disk_says_so_in_one_sentence(
    fastapi_corpus, tmp_path: Path, small_disk: Path
) -> None:
    docs = big_docs(tmp_path / "docs")
    cfg = config(tmp_path / "docs.toml", {"en": docs})
    state = small_disk / "state"
    done = subprocess.run(
        command("index", "build", "--config", str(cfg), "--state-dir", str(state)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output, output
    errors = [line for line in done.stderr.splitlines() if line.startswith("scriptorium: error:")]
    assert len(errors) == 1, output
    sentence = errors[0]
    assert "source 'en'" in sentence and str(state / "generations") in sentence, sentence
    assert "no space left on device" in sentence and "MB free" in sentence, sentence
    assert generations(state) == [], "the failed build left a generation behind"


def test_a_full_disk_while_serving_keeps_the_previous_generation(
    fastapi_corpus, tmp_path: Path, small_disk: Path
) -> None:
    docs = docs_tree(tmp_path / "docs")
    cfg = config(
        tmp_path / "docs.toml", {"docs": docs}, server="watch = true\nwatch_interval = 0.3"
    )
    state, port, log = small_disk / "state", free_port(), tmp_path / "serve.log"
    proc = start(serve_command(cfg, state, port), log)
    with reaped(proc):
        assert wait_for(lambda: health_of(port) == health_pb2.HealthCheckResponse.SERVING), (
            log.read_text()
        )
        before = list_sources(port)
        assert before.generation >= 1
        assert search(port, "capybara")

        # The update no longer fits; moved in whole, so no smaller update lands first.
        big_docs(tmp_path / "staging").rename(docs / "big")

        def update_failed() -> bool:
            return bool(list_sources(port).sources[0].last_error)

        assert wait_for(update_failed), log.read_text()
        after = list_sources(port)
        status = after.sources[0]
        assert status.state == pb.SOURCE_STATE_STALE
        assert "source 'docs'" in status.last_error, status.last_error
        assert "no space left on device" in status.last_error, status.last_error
        assert str(state / "generations") in status.last_error, status.last_error
        assert after.generation == before.generation
        assert status.document_count == before.sources[0].document_count
        assert search(port, "capybara"), "the previous generation stopped serving"
        assert health_of(port) == health_pb2.HealthCheckResponse.SERVING
        probe = health_probe(port)
        assert probe.returncode == 0, probe.stderr
        status_line, detail = probe.stdout.splitlines()[:2]
        assert status_line == "SERVING"
        assert detail.startswith("  docs: stale: update not applied"), probe.stdout
        assert "no space left on device" in detail, probe.stdout
        assert partials(state) == []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    output = log.read_text("utf-8", "replace")
    assert "Traceback" not in output, output
    assert "index update failed, the previous generation keeps serving" in output, output


# -- 3. every source failed: health says so -----------------------------------------------------


def test_health_is_not_serving_while_every_source_failed(tmp_path: Path) -> None:
    missing = {"en": tmp_path / "gone/en", "code": tmp_path / "gone/code"}
    cfg = config(tmp_path / "missing.toml", missing, server="watch = true\nwatch_interval = 0.3")
    port, log, ready = free_port(), tmp_path / "serve.log", tmp_path / "ready"
    proc = start([*serve_command(cfg, tmp_path / "state", port), "--ready-file", str(ready)], log)
    with reaped(proc):
        assert wait_for(lambda: "no source can be served" in log.read_text()), log.read_text()
        assert health_of(port) == health_pb2.HealthCheckResponse.NOT_SERVING
        reply = list_sources(port)
        assert [s.state for s in reply.sources] == [pb.SOURCE_STATE_FAILED] * 2
        assert all("does not exist" in s.last_error for s in reply.sources), reply
        assert not ready.exists(), "the ready file says ready while nothing can be served"
        probe = health_probe(port)
        assert probe.returncode == 1 and probe.stdout.startswith("NOT_SERVING\n"), probe.stdout
        assert "  en: failed: source root does not exist" in probe.stdout, probe.stdout
        line = next(x for x in log.read_text().splitlines() if "no source can be served" in x)
        assert str(missing["en"]) in line and str(missing["code"]) in line, line

        docs_tree(missing["en"])  # a root appears: that source can be served
        assert wait_for(lambda: health_of(port) == health_pb2.HealthCheckResponse.SERVING), (
            log.read_text()
        )
        assert ready.exists()
        assert search(port, "capybara")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
