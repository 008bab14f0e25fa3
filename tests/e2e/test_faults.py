"""Faults a real daemon must survive: crashes mid-build, corrupt generations, vanished roots,
half-written files and SIGTERM under load.

Every daemon and build is a real subprocess on loopback; every wait is bounded.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.index.generation import GenerationStore
from scriptorium.index.store import BlobStore
from scriptorium.index.verify import EAGER_VERIFY_BYTES
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.blobs import damage_blob
from tests.support.daemon import Daemon, running
from tests.support.trees import docs_and_code_config, markdown_config, write
from tests.support.waiting import wait_for

SERVICE = "scriptorium.v1.RetrievalService"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def build_command(config: Path, state: Path) -> list[str]:
    command = [sys.executable, "-m", "scriptorium", "index", "build"]
    return [*command, "--config", str(config), "--state-dir", str(state)]


def index_build(config: Path, state: Path, timeout: float = 120.0) -> None:
    subprocess.run(
        build_command(config, state),
        check=True,
        capture_output=True,
        timeout=timeout,
    )


def locations(stub, query: str, **kw) -> list[str]:
    reply = stub.Search(pb.SearchRequest(query=query, **kw), timeout=15)
    return [r.location for r in reply.results]


def generation_of(stub) -> int:
    return stub.ListSources(pb.ListSourcesRequest(), timeout=15).generation


def partials(state: Path) -> list[str]:
    generations = state / "generations"
    if not generations.is_dir():
        return []
    return sorted(p.name for p in generations.iterdir() if p.name.startswith(".tmp-"))


# -- kill -9 during a build ------------------------------------------------------------------------


def test_kill_9_mid_build_leaves_the_last_complete_generation(tmp_path, corpus_copy):
    docs = tmp_path / "docs"
    write(docs / "index.md", "# Home\n\nThe capybara handbook.\n")
    write(docs / "guide.md", "# Guide\n\n## Setup\n\nFeed the capybara.\n")
    state = tmp_path / "state"
    small = markdown_config(tmp_path / "small.toml", {"docs": docs})
    index_build(small, state)
    assert sorted(p.name for p in (state / "generations").iterdir()) == ["gen-000001"]

    big = write(
        tmp_path / "big.toml",
        small.read_text("utf-8")
        + f"""
[[sources]]
name = "en"
kind = "markdown"
root = "{corpus_copy / "docs/en/docs"}"

[[sources]]
name = "ja"
kind = "markdown"
root = "{corpus_copy / "docs/ja/docs"}"

[[sources]]
name = "code"
kind = "code"
root = "{corpus_copy}"
include = ["fastapi/**/*.py", "docs_src/**/*.py"]
""",
    )
    # The build waits inside the write of the new generation (pause point ``build.write``)
    # until a release file that is never created: it is killed there, whatever the speed.
    release = tmp_path / "release"
    build = subprocess.Popen(
        build_command(big, state),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, FAULT_PAUSE: f"build.write={release}"},
    )
    try:
        assert wait_for(lambda: reached_marker(release).exists() or build.poll() is not None, 120)
        assert build.poll() is None, "the build ended before it reached the write"
        build.send_signal(signal.SIGKILL)
        assert build.wait(30) == -signal.SIGKILL
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
    assert partials(state), "the interrupted build left no partial generation to clean up"
    assert not (state / "generations" / "gen-000002").exists()

    with running(["--config", str(small)], state) as daemon:
        assert partials(state) == []
        assert "partial index generation" in daemon.log()
        assert generation_of(daemon.stub) == 1
        assert any(loc.startswith("guide") for loc in locations(daemon.stub, "capybara"))
        reply = daemon.stub.GetContent(pb.GetContentRequest(location="guide#setup"), timeout=15)
        assert "Feed the capybara" in reply.content


# -- corrupt generations ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_generations(tmp_path_factory) -> tuple[Path, Path, Path]:
    """gen 1 holds a.md; gen 2 adds b.md, which is then removed from disk again.

    Served from these roots, generation 1 matches the tree exactly, so a daemon that refuses
    generation 2 serves generation 1 unchanged (no rebuild hides what was loaded).
    """
    root = tmp_path_factory.mktemp("corrupt")
    docs = root / "docs"
    write(docs / "a.md", "# Alpha\n\nThe aardvark page.\n")
    config = markdown_config(root / "scriptorium.toml", {"docs": docs})
    template = root / "template"
    index_build(config, template)
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")
    index_build(config, template)
    (docs / "b.md").unlink()
    names = sorted(p.name for p in (template / "generations").iterdir())
    assert names == ["gen-000001", "gen-000002"]
    return docs, config, template


def _flip_largest_index_file(gen: Path) -> None:
    victim = max(
        (p for p in (gen / "index").iterdir() if p.is_file()), key=lambda p: p.stat().st_size
    )
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))


def _tamper_manifest(gen: Path) -> None:
    """Change one source's block count and leave the recorded checksum as it was."""
    import json

    manifest = gen / "MANIFEST.json"
    data = json.loads(manifest.read_text("utf-8"))
    next(iter(data["sources"].values()))["blocks"] += 6
    manifest.write_text(json.dumps(data), "utf-8")


def _truncate_manifest(gen: Path) -> None:
    manifest = gen / "MANIFEST.json"
    manifest.write_bytes(manifest.read_bytes()[:40])


def _remove_an_index_file(gen: Path) -> None:
    victim = next(p for p in sorted((gen / "index").iterdir()) if p.suffix == ".idx")
    victim.unlink()


def _corrupt_new_blob(state: Path) -> None:
    """Damage the blob only generation 2 references (the one holding b.md)."""

    def blobs(generation: int) -> set[str]:
        manifest = GenerationStore(state).load_manifest(generation, verify=False)
        return {f.blob for s in manifest.sources.values() for f in s.files.values()}

    (only_new,) = blobs(2) - blobs(1)
    damage_blob(BlobStore(state / "blobs"), only_new)


def _flip_document_pack(gen: Path) -> None:
    pack = gen / "index" / "documents.pack"
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pack.write_bytes(bytes(data))


CORRUPTIONS = {
    "index-file-bit-flip": lambda state: _flip_largest_index_file(state / "generations/gen-000002"),
    "manifest-edited": lambda state: _tamper_manifest(state / "generations/gen-000002"),
    "manifest-truncated": lambda state: _truncate_manifest(state / "generations/gen-000002"),
    "index-file-missing": lambda state: _remove_an_index_file(state / "generations/gen-000002"),
    "document-pack-bit-flip": lambda state: _flip_document_pack(state / "generations/gen-000002"),
}


@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_corrupt_generation_is_refused_and_the_previous_one_serves(tmp_path, two_generations, how):
    _docs, config, template = two_generations
    state = tmp_path / "state"
    shutil.copytree(template, state)
    CORRUPTIONS[how](state)
    with running(["--config", str(config)], state) as daemon:
        assert "refusing index generation 2" in daemon.log()
        assert generation_of(daemon.stub) == 1
        assert any(loc.startswith("a") for loc in locations(daemon.stub, "aardvark"))
        assert locations(daemon.stub, "bandicoot") == []
        reply = daemon.health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
        assert reply.status == SERVING


def test_a_damaged_blob_is_refused_when_read_and_its_file_indexed_again(tmp_path):
    """Texts are read on demand, so a damaged blob is found when a call first reads it: that
    call gets UNAVAILABLE, the generation is refused, the previous one serves and the roots
    are reconciled, which writes the damaged file's blob again."""
    docs = tmp_path / "docs"
    write(docs / "a.md", "# Alpha\n\nThe aardvark page.\n")
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    state = tmp_path / "state"
    index_build(config, state)
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")
    index_build(config, state)
    _corrupt_new_blob(state)
    with running(["--config", str(config)], state) as daemon:
        # Start-up decodes no document: the damage is not seen yet.
        assert generation_of(daemon.stub) == 2
        with pytest.raises(grpc.RpcError) as failed:
            daemon.stub.Search(pb.SearchRequest(query="bandicoot"), timeout=15)
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "damaged" in failed.value.details()
        assert wait_for(lambda: generation_of(daemon.stub) == 3)
        assert "refusing index generation 2" in daemon.log()
        assert locations(daemon.stub, "bandicoot") == ["b#beta"]
        reply = daemon.stub.GetContent(pb.GetContentRequest(location="b#beta"), timeout=15)
        assert "bandicoot page" in reply.content
        health = daemon.health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
        assert health.status == SERVING
    assert not (state / "generations" / "gen-000002").exists()


def test_a_damaged_large_index_file_is_found_after_serving_and_the_previous_one_serves(
    tmp_path,
):
    """Large index files are hashed once the generation serves, not before: a damaged one
    refuses the generation then, and the previous valid one serves (here the catch-up after
    it writes the damaged generation's file again, as generation 3)."""
    import random

    docs = tmp_path / "docs"
    write(docs / "a.md", "# Alpha\n\nThe aardvark page.\n")
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    state = tmp_path / "state"
    index_build(config, state)
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")
    rng = random.Random(5)  # words that compress badly: a generation with large index files
    for i in range(2):
        lines = (" ".join(f"w{rng.getrandbits(48):x}" for _ in range(12)) for _ in range(5_000))
        write(docs / f"bulk{i}.md", f"# Bulk {i}\n\n" + "\n\n".join(lines) + "\n")
    index_build(config, state, timeout=300)
    first, second = (state / "generations" / g / "index" for g in ("gen-000001", "gen-000002"))
    linked = {p.name for p in first.iterdir()}
    victim = max(
        (p for p in second.iterdir() if p.is_file() and p.name not in linked),
        key=lambda p: p.stat().st_size,
    )
    assert victim.stat().st_size > EAGER_VERIFY_BYTES
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    release = tmp_path / "verify"
    daemon = Daemon(
        ["--config", str(config)], state, env={FAULT_PAUSE: f"start.verify={release}"}
    ).start()
    try:
        assert wait_for(reached_marker(release).exists, 120), "verification never began"
        assert generation_of(daemon.stub) == 2  # served before its large files were read
        health = daemon.health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
        assert health.status == SERVING
        release.touch()
        assert wait_for(lambda: "refusing index generation 2" in daemon.log(), 120)
        assert f"index file {victim.name} fails its checksum" in daemon.log()
        assert wait_for(lambda: generation_of(daemon.stub) == 3, 300)
        assert locations(daemon.stub, "bandicoot") == ["b#beta"]
        assert any(loc.startswith("a") for loc in locations(daemon.stub, "aardvark"))
    finally:
        daemon.terminate()
    assert not (state / "generations" / "gen-000002").exists()


def test_every_generation_corrupt_rebuilds_from_the_roots(tmp_path, two_generations):
    _docs, config, template = two_generations
    state = tmp_path / "state"
    shutil.copytree(template, state)
    for gen in ("gen-000001", "gen-000002"):
        _truncate_manifest(state / "generations" / gen)
    with running(["--config", str(config)], state) as daemon:
        log = daemon.log()
        assert "refusing index generation 1" in log and "refusing index generation 2" in log
        assert generation_of(daemon.stub) == 3
        assert any(loc.startswith("a") for loc in locations(daemon.stub, "aardvark"))


# -- a source root that disappears -----------------------------------------------------------------


def _source(stub, name: str) -> pb.SourceStatus:
    reply = stub.ListSources(pb.ListSourcesRequest(), timeout=15)
    return next(s for s in reply.sources if s.name == name)


def test_vanished_root_goes_stale_and_keeps_serving_its_indexed_content(tmp_path):
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    write(alpha / "one.md", "# One\n\n## Walrus\n\nThe walrus rests.\n")
    write(beta / "two.md", "# Two\n\n## Pangolin\n\nThe pangolin curls.\n")
    config = markdown_config(
        tmp_path / "scriptorium.toml",
        {"alpha": alpha, "beta": beta},
        server="watch = true\nwatch_interval = 0.2",
    )
    with running(["--config", str(config)], tmp_path / "state") as daemon:
        stub = daemon.stub
        assert _source(stub, "beta").state == pb.SOURCE_STATE_READY
        moved = beta.rename(tmp_path / "beta-moved")
        assert wait_for(lambda: _source(stub, "beta").state == pb.SOURCE_STATE_STALE)
        status = _source(stub, "beta")
        assert status.last_error
        assert status.document_count == 1
        assert _source(stub, "alpha").state == pb.SOURCE_STATE_READY
        # The other source still searches and still picks up edits.
        assert locations(stub, "walrus", sources=["alpha"]) == ["one#walrus"]
        write(alpha / "three.md", "# Three\n\nThe wombat digs.\n")
        assert wait_for(lambda: bool(locations(stub, "wombat")))
        # The vanished source's indexed content keeps serving.
        assert locations(stub, "pangolin") == ["beta/two#pangolin"]
        reply = stub.GetContent(pb.GetContentRequest(location="beta/two#pangolin"), timeout=15)
        assert "pangolin curls" in reply.content
        health = daemon.health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
        assert health.status == SERVING
        # When the root comes back, the source is ready again.
        moved.rename(beta)
        assert wait_for(lambda: _source(stub, "beta").state == pb.SOURCE_STATE_READY)
        assert _source(stub, "beta").last_error == ""


# -- a file read while half written ----------------------------------------------------------------


def test_half_written_file_is_eventually_indexed_complete(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "index.md", "# Home\n\nWelcome.\n")
    config = markdown_config(
        tmp_path / "scriptorium.toml", {"docs": docs}, server="watch = true\nwatch_interval = 0.1"
    )
    first = "# Half\n\n## Part one\n\nThe first part mentions the aardwolf.\n"
    second = "\n## Part two\n\nThe second part mentions the axolotl.\n"
    with running(["--config", str(config)], tmp_path / "state") as daemon:
        stub = daemon.stub
        with (docs / "half.md").open("w", encoding="utf-8") as handle:
            handle.write(first)
            handle.flush()
            os.fsync(handle.fileno())
            # The watcher reads the file while it is only half written.
            assert wait_for(lambda: bool(locations(stub, "aardwolf")))
            assert locations(stub, "axolotl") == []
            handle.write(second)
        assert wait_for(lambda: "half#part-two" in locations(stub, "axolotl"))
        reply = stub.GetContent(
            pb.GetContentRequest(location="half", mode=pb.CONTENT_MODE_FULL), timeout=15
        )
        assert reply.content.strip() == (first + second).strip()
        # A same-length rewrite in place is noticed too.
        with (docs / "half.md").open("r+", encoding="utf-8") as handle:
            handle.write(first.replace("aardwolf", "bushbaby"))
        assert wait_for(lambda: bool(locations(stub, "bushbaby")))
        assert locations(stub, "aardwolf") == []


# -- SIGTERM under load ----------------------------------------------------------------------------

# Far longer than any bounded wait below: a daemon that exits while a test waits for it did not
# sit out its grace period, whatever the speed of the machine.
GRACE_SECONDS = 3600
EXIT_WAIT = 120


class Outcomes:
    """Every call's status, recorded from many threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.codes: list[grpc.StatusCode] = []

    def add(self, code: grpc.StatusCode) -> None:
        with self.lock:
            self.codes.append(code)


def _caller(address: str, outcomes: Outcomes, stop: threading.Event) -> None:
    with grpc.insecure_channel(address) as channel:
        stub = pb_stub(channel)
        for n in range(400):
            if stop.is_set():
                return
            try:
                stub.Search(pb.SearchRequest(query=f"dependencies yield {n % 7}"), timeout=30)
                outcomes.add(grpc.StatusCode.OK)
            except grpc.RpcError as err:
                outcomes.add(err.code())
                if err.code() == grpc.StatusCode.UNAVAILABLE:
                    return


def pb_stub(channel: grpc.Channel):
    from scriptorium.v1 import retrieval_pb2_grpc

    return retrieval_pb2_grpc.RetrievalServiceStub(channel)


def _health_watch(address: str, seen: list, done: threading.Event) -> None:
    """Follow the service's health until NOT_SERVING, then hang up (a watch holds the drain)."""
    with grpc.insecure_channel(address) as channel:
        stream = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service=SERVICE), timeout=300
        )
        try:
            for reply in stream:
                seen.append(reply.status)
                if reply.status == NOT_SERVING:
                    stream.cancel()
                    break
        except grpc.RpcError as err:
            seen.append(err.code())
        finally:
            done.set()


@pytest.fixture(scope="module")
def load_tree(tmp_path_factory, corpus_copy) -> Path:
    root = tmp_path_factory.mktemp("sigterm")
    shutil.copytree(corpus_copy / "docs/en/docs/tutorial", root / "docs" / "tutorial")
    shutil.copytree(corpus_copy / "fastapi", root / "code" / "fastapi")
    docs_and_code_config(
        root / "scriptorium.toml",
        root / "docs",
        root / "code",
        f"watch = false\ngrace_seconds = {GRACE_SECONDS}",
    )
    index_build(root / "scriptorium.toml", root / "template")
    return root


def test_sigterm_under_load_drains_and_exits_zero(tmp_path, load_tree):
    state = tmp_path / "state"
    shutil.copytree(load_tree / "template", state)
    # One GuideImplementation is held at its pause point across the signal: a call certain to
    # be in flight when shutdown begins. Searches from six clients keep the daemon busy.
    release = tmp_path / "release"
    daemon = Daemon(
        ["--config", str(load_tree / "scriptorium.toml")],
        state,
        env={FAULT_PAUSE: f"rpc.guide={release}"},
    ).start()
    try:
        outcomes, stop = Outcomes(), threading.Event()
        seen: list = []
        watching = threading.Event()
        watcher = threading.Thread(target=_health_watch, args=(daemon.address, seen, watching))
        watcher.start()
        callers = [
            threading.Thread(target=_caller, args=(daemon.address, outcomes, stop))
            for _ in range(6)
        ]
        for thread in callers:
            thread.start()
        assert wait_for(lambda: len(outcomes.codes) >= 20, 120, 0.02), "the load never got going"
        held = daemon.stub.GuideImplementation.future(
            pb.GuideImplementationRequest(topic="background tasks email"), timeout=300
        )
        assert wait_for(reached_marker(release).exists, 120), "the held call never arrived"
        daemon.proc.send_signal(signal.SIGTERM)
        assert wait_for(lambda: "shutting down" in daemon.full_log(), 120)
        # Health turns NOT_SERVING while the held call keeps the drain open.
        assert watching.wait(120), seen
        assert daemon.proc.poll() is None, "the daemon exited with a call in flight"
        release.touch()
        # The call accepted before the signal completes normally ...
        assert held.result(timeout=120).docs
        # ... and the daemon exits as soon as the drain is done, not after its grace period.
        assert daemon.proc.wait(EXIT_WAIT) == 0
        stop.set()
        for thread in callers:
            thread.join(120)
            assert not thread.is_alive(), "a call never completed"
        watcher.join(120)
    finally:
        release.touch()
        daemon.terminate()
    codes = Counter(outcomes.codes)
    # Calls racing the shutdown are refused; gRPC may report the refusal as CANCELLED when the
    # call reaches the server as it stops.
    refused = {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}
    assert set(codes) <= refused, codes
    assert seen[:1] == [SERVING] and NOT_SERVING in seen, seen
    log = daemon.log()
    assert "NOT_SERVING" in log
    assert log.index("NOT_SERVING") < log.index("stopped")
    assert "second signal" not in log


def test_open_health_watch_does_not_hold_the_drain(tmp_path, load_tree):
    state = tmp_path / "state"
    shutil.copytree(load_tree / "template", state)
    daemon = Daemon(["--config", str(load_tree / "scriptorium.toml")], state).start()
    channel = grpc.insecure_channel(daemon.address)
    try:
        stream = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service=SERVICE), timeout=300
        )
        assert next(stream).status == SERVING
        daemon.proc.send_signal(signal.SIGTERM)
        # With the watch still open, the daemon exits well inside its grace period (an hour).
        assert daemon.proc.wait(EXIT_WAIT) == 0
    finally:
        channel.close()
        daemon.terminate()
    assert "second signal" not in daemon.log()
