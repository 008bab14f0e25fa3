"""Damage found while serving is contained and repaired from the roots, without a loop.

A flipped bit in a blob bundle's table (every blob of the bundle lost at once) or in its data
(one text undecodable): the call that finds it is UNAVAILABLE, ListSources and
``scriptorium health`` say so while the repair is held at its pause point, the texts are read
again from the root once (older generations name the same blobs, so falling back to them
alone would find the damage again), and a restart serves. Damage that keeps coming back is
repaired a bounded number of times; a damaged index file an older generation links is not
served again through it. Every wait is on an event: a file, a log line, a state the daemon
reports.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.index.generation import GenerationStore
from scriptorium.index.repair import MAX_REPAIRS
from scriptorium.index.store import BlobStore
from scriptorium.index.verify import EAGER_VERIFY_BYTES
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.blobs import flip_blob_bit, flip_table_bit
from tests.support.daemon import Daemon, running
from tests.support.trees import markdown_config, write
from tests.support.waiting import wait_for

PAGES = 30  # more than a bundle's threshold (BUNDLE_FROM): a build bundles their blobs
REFUSING = "refusing index generation"


def build(config: Path, state: Path) -> None:
    command = [sys.executable, "-m", "scriptorium", "index", "build", "--config", str(config)]
    subprocess.run([*command, "--state-dir", str(state)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def two_generations(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Generations 1 and 2 of a tree of PAGES pages, whose blobs both name (generation 2 only
    added a page, removed from disk again): the state the probe of issue #40 damaged."""
    root = tmp_path_factory.mktemp("damage")
    docs = root / "docs"
    for i in range(PAGES):
        write(docs / f"p{i}.md", f"# Page {i}\n\nThe okapi{i} page.\n")
    config = markdown_config(root / "scriptorium.toml", {"docs": docs})
    template = root / "template"
    build(config, template)
    write(docs / "extra.md", "# Extra\n\nThe extra page.\n")
    build(config, template)
    (docs / "extra.md").unlink()
    return docs, config, template


def content(stub, page: int) -> str:
    request = pb.GetContentRequest(location=f"p{page}")
    return stub.GetContent(request, timeout=15).content


def readable(stub, page: int) -> bool:
    try:
        return f"okapi{page} page" in content(stub, page)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.UNAVAILABLE, err
        return False


def docs_source(stub) -> pb.SourceStatus:
    reply = stub.ListSources(pb.ListSourcesRequest(), timeout=15)
    return next(s for s in reply.sources if s.name == "docs")


def health_text(daemon: Daemon) -> str:
    command = [sys.executable, "-m", "scriptorium", "health", "--target", daemon.address]
    return subprocess.run(command, capture_output=True, text=True, timeout=60).stdout


def blob_of(state: Path, path: str) -> str:
    manifest = GenerationStore(state).load_manifest(2, verify=False)
    return manifest.sources["docs"].files[path].blob


def _flip_table(state: Path) -> None:
    flip_table_bit(state / "blobs" / "bundles")


def _flip_first_page(state: Path) -> None:
    flip_blob_bit(BlobStore(state / "blobs"), blob_of(state, "p0.md"))


@pytest.mark.parametrize("damage", [_flip_table, _flip_first_page], ids=["table", "data"])
def test_a_damaged_bundle_is_reported_repaired_once_and_a_restart_serves(
    tmp_path, two_generations, damage
):
    _docs, config, template = two_generations
    state = tmp_path / "state"
    shutil.copytree(template, state)
    damage(state)
    release = tmp_path / "repair"
    daemon = Daemon(["--config", str(config)], state, env={FAULT_PAUSE: f"repair.start={release}"})
    with daemon:
        daemon.wait_caught_up()
        with pytest.raises(grpc.RpcError) as failed:
            content(daemon.stub, 0)
        assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "damaged" in failed.value.details()
        # Held before the repair: the damage is reported, not hidden behind SERVING alone.
        assert wait_for(reached_marker(release).exists), daemon.log()
        status = docs_source(daemon.stub)
        assert status.state == pb.SOURCE_STATE_STALE
        assert "damaged" in status.last_error and "repairing" in status.last_error
        assert "damaged" in health_text(daemon)
        release.touch()
        ready = pb.SOURCE_STATE_READY
        assert wait_for(lambda: docs_source(daemon.stub).state == ready), daemon.log()
        assert docs_source(daemon.stub).last_error == ""
        for _ in range(2):  # twice: nothing is refused any more
            assert all(f"okapi{i} page" in content(daemon.stub, i) for i in range(PAGES))
        log = daemon.full_log()
    assert log.count(REFUSING) == 1, log
    refused = [p for p in (state / "generations").iterdir() if "refused" in p.name]
    assert len(refused) == 1
    with running(["--config", str(config)], state) as again:
        again.wait_caught_up()
        assert all(f"okapi{i} page" in content(again.stub, i) for i in range(PAGES))
        assert REFUSING not in again.full_log()
        assert docs_source(again.stub).state == pb.SOURCE_STATE_READY


def test_damage_that_keeps_coming_back_is_repaired_a_bounded_number_of_times(
    tmp_path, two_generations
):
    """The blob each repair writes is damaged in turn: the repairs stop after MAX_REPAIRS,
    the source says why, the other pages still read, and a restart repairs again."""
    docs, _config, template = two_generations
    # No text cache to speak of: a read of another page pushes p0's text out of memory.
    config = markdown_config(
        tmp_path / "scriptorium.toml", {"docs": docs}, "watch = false\ntext_cache_bytes = 0"
    )
    state = tmp_path / "state"
    shutil.copytree(template, state)
    flip_blob_bit(BlobStore(state / "blobs"), blob_of(state, "p0.md"))
    with running(["--config", str(config)], state) as daemon:
        daemon.wait_caught_up()
        for repaired in range(1, MAX_REPAIRS + 1):
            # Each read of p0 finds the damage until its repair has landed.
            assert wait_for(lambda n=repaired: _repaired(daemon, n)), daemon.log()
            flip_blob_bit(BlobStore(state / "blobs"), _served_blob(daemon, state))
            assert readable(daemon.stub, 1)  # p0's text leaves the cache
        assert wait_for(
            lambda: not readable(daemon.stub, 0) and "not repairing it again" in daemon.full_log()
        ), daemon.log()
        assert not readable(daemon.stub, 0)
        assert readable(daemon.stub, 1)
        status = docs_source(daemon.stub)
        assert status.state == pb.SOURCE_STATE_STALE
        assert "restart" in status.last_error
        assert daemon.full_log().count(REFUSING) == MAX_REPAIRS
    with running(["--config", str(config)], state) as again:
        assert wait_for(lambda: readable(again.stub, 0)), again.log()


def _repaired(daemon: Daemon, times: int) -> bool:
    """Whether p0 reads, after ``times`` refusals, with the repair over (the source ready)."""
    return (
        readable(daemon.stub, 0)
        and daemon.full_log().count(REFUSING) == times
        and docs_source(daemon.stub).state == pb.SOURCE_STATE_READY
    )


def _served_blob(daemon: Daemon, state: Path) -> str:
    """The blob of p0.md in the generation ``daemon`` serves."""
    generation = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=15).generation
    manifest = GenerationStore(state).load_manifest(generation, verify=False)
    return manifest.sources["docs"].files["p0.md"].blob


def test_a_damaged_index_file_an_older_generation_links_is_rebuilt_from_the_roots_once(
    tmp_path,
):
    """A large segment file is hashed once its generation serves; generation 2 links it
    from generation 1, so serving generation 1 instead would serve the same damage (and an
    update from it would link it again): the index is built again from the roots, once."""
    import random

    docs = tmp_path / "docs"
    write(docs / "a.md", "# Alpha\n\nThe aardvark page.\n")
    rng = random.Random(7)  # words that compress badly: index files past the eager check
    for i in range(2):
        lines = (" ".join(f"w{rng.getrandbits(48):x}" for _ in range(12)) for _ in range(5_000))
        write(docs / f"bulk{i}.md", f"# Bulk {i}\n\n" + "\n\n".join(lines) + "\n")
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    state = tmp_path / "state"
    build(config, state)
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")
    build(config, state)
    first, second = (state / "generations" / g / "index" for g in ("gen-000001", "gen-000002"))
    shared = [
        p
        for p in second.iterdir()
        if (first / p.name).exists() and (first / p.name).stat().st_ino == p.stat().st_ino
    ]
    victim = max(shared, key=lambda p: p.stat().st_size)
    assert victim.stat().st_size > EAGER_VERIFY_BYTES
    with open(victim, "r+b") as handle:  # in place: both generations' link sees it
        handle.seek(victim.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with running(["--config", str(config)], state) as daemon:
        ready = pb.SOURCE_STATE_READY
        assert wait_for(lambda: "holds the damaged" in daemon.full_log()), daemon.log()
        assert wait_for(
            lambda: _generation(daemon) == 3 and docs_source(daemon.stub).state == ready
        ), daemon.log()
        reply = daemon.stub.Search(pb.SearchRequest(query="bandicoot"), timeout=30)
        assert [r.location for r in reply.results] == ["b#beta"]
        assert daemon.full_log().count(REFUSING) == 1
    assert not (state / "generations" / "gen-000002").exists()


def _generation(daemon: Daemon) -> int:
    return daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=15).generation
