"""A shutdown during the start-up catch-up keeps its progress; the restart does only the rest.

The catch-up is held after its 12th document (the ``build.files.12`` pause), the daemon is
stopped, and the restarted daemon says how much it found done and reads only the other files.
What it then serves (searches with scores, ListSources) is compared with a daemon that caught
up with the same tree without being interrupted. A kill -9 keeps nothing new and loses nothing
kept; a kept partial that was damaged, or continues another generation, is discarded.
"""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon, running
from tests.support.trees import markdown_config, write
from tests.support.waiting import wait_for

ANIMALS = ["aardvark", "badger", "caracal", "dingo", "ermine", "ferret", "gecko", "heron"]
QUERIES = ["aardvark", "badger tide", "caracal revised", "gecko notes", "ocelot", "heron 7"]
# Files the catch-up has to read: 30 edited pages and 6 new ones (2 more were deleted).
TO_READ = 36


def _page(i: int, revised: bool) -> str:
    animal = ANIMALS[i % len(ANIMALS)]
    words = "revised tide notes" if revised else "first draft"
    extra = f"\n\n## More on {animal}\n\nThe {animal} {i} and the ocelot.\n" if revised else ""
    return f"# Page {i} {animal}\n\nThe {animal} page {i}, {words}.\n{extra}"


def _stopped_daemon_behind_its_tree(tmp_path: Path) -> tuple[Path, Path]:
    """A config and a state directory whose generation 1 is older than the tree: 30 pages
    edited, 6 added and 2 deleted while no daemon ran."""
    docs = tmp_path / "docs"
    for i in range(32):
        write(docs / f"p{i:02d}.md", _page(i, revised=False))
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    state = tmp_path / "state"
    with running(["--config", str(config)], state):
        pass
    for i in range(30):
        write(docs / f"p{i:02d}.md", _page(i, revised=True))
    for i in range(32, 38):
        write(docs / f"p{i:02d}.md", _page(i, revised=True))
    (docs / "p30.md").unlink()
    (docs / "p31.md").unlink()
    return config, state


def _served(daemon: Daemon) -> tuple[list, list]:
    """What a daemon serves: each query's results (ref, location, score) and its sources."""
    stub = daemon.stub
    results = []
    for query in QUERIES:
        reply = stub.Search(pb.SearchRequest(query=query, top_k=25), timeout=30)
        results.append([(r.ref_id, r.location, round(r.score, 6)) for r in reply.results])
    listed = stub.ListSources(pb.ListSourcesRequest(), timeout=15)
    sources = [
        (s.name, s.state, s.last_error, s.document_count, s.block_count) for s in listed.sources
    ]
    return results, sources


def _uninterrupted(tmp_path: Path, config: Path, state: Path) -> tuple[list, list]:
    """What a daemon serves once it caught up from a copy of ``state`` without a stop."""
    copy = tmp_path / "state-uninterrupted"
    shutil.copytree(state, copy)
    with running(["--config", str(config)], copy) as daemon:
        daemon.wait_caught_up()
        served = _served(daemon)
    assert all(served[0]), served  # every query finds something to compare
    return served


def _held(config: Path, state: Path, release: Path, after: int) -> Daemon:
    """A daemon whose catch-up is held once its write has indexed ``after`` documents."""
    env = {FAULT_PAUSE: f"build.files.{after}={release}"}
    daemon = Daemon(["--config", str(config)], state, env=env).start()
    assert wait_for(reached_marker(release).exists), daemon.log()
    return daemon


def _kept(state: Path) -> list[str]:
    return sorted(p.name for p in (state / "generations").iterdir() if p.name.startswith("."))


def test_a_restart_continues_the_catch_up_a_shutdown_stopped(tmp_path: Path) -> None:
    config, state = _stopped_daemon_behind_its_tree(tmp_path)
    expected = _uninterrupted(tmp_path, config, state)

    daemon = _held(config, state, tmp_path / "release", after=12)
    try:
        # Held mid-way: generation 1 serves as it was; nothing of the partial is served.
        stub = daemon.stub
        assert stub.ListSources(pb.ListSourcesRequest(), timeout=15).generation == 1
        assert stub.Search(pb.SearchRequest(query="ocelot"), timeout=15).results == []
    finally:
        assert daemon.terminate() == 0
    log = daemon.full_log()
    assert f"progress was kept as partial generation 2 (12 of {TO_READ} files read)" in log, log
    assert _kept(state) == [".resume-000002"]

    with running(["--config", str(config)], state) as again:
        again.wait_caught_up()
        log = again.full_log()
        assert f"resumed: 12 of {TO_READ} files already done; reading the other 24" in log, log
        # Only the rest was read and written (generation 3, on top of the kept partial).
        assert "caught up with disk: generation 3 (24 changed" in log, log
        assert _served(again) == expected
    assert _kept(state) == []


def test_a_file_edited_again_after_the_stop_is_read_again(tmp_path: Path) -> None:
    config, state = _stopped_daemon_behind_its_tree(tmp_path)
    held = _held(config, state, tmp_path / "release", after=12)
    assert held.terminate() == 0
    docs = tmp_path / "docs"
    write(docs / "p00.md", "# Page 0 zebra\n\nThe zebra page, edited once more.\n")
    (docs / "p01.md").unlink()  # and one the partial holds at its new version is deleted

    with running(["--config", str(config)], state) as again:
        again.wait_caught_up()
        log = again.full_log()
        assert "resumed: 12 of 37 files already done; reading the other 25" in log, log
        stub = again.stub
        found = stub.Search(pb.SearchRequest(query="zebra"), timeout=30).results
        assert [r.location for r in found] == ["p00#page-0-zebra"]
        assert stub.Search(pb.SearchRequest(query="aardvark revised"), timeout=30).results
        locations = {
            r.location
            for query in ("aardvark", "badger", "page")
            for r in stub.Search(pb.SearchRequest(query=query, top_k=25), timeout=30).results
        }
        assert not any(loc.startswith(("p00#page-0-aardvark", "p01#")) for loc in locations)
        (source,) = stub.ListSources(pb.ListSourcesRequest(), timeout=15).sources
        assert source.document_count == 35


def test_a_kill_mid_catch_up_loses_nothing_kept_and_keeps_nothing_half_written(
    tmp_path: Path,
) -> None:
    config, state = _stopped_daemon_behind_its_tree(tmp_path)
    expected = _uninterrupted(tmp_path, config, state)

    first = _held(config, state, tmp_path / "release-1", after=12)
    assert first.terminate() == 0
    assert _kept(state) == [".resume-000002"]
    # The restart resumes, and is killed mid-way: its own partial write is half done.
    second = _held(config, state, tmp_path / "release-2", after=5)
    assert "resumed: 12 of 36 files already done" in second.full_log()
    second.proc.send_signal(signal.SIGKILL)
    assert second.proc.wait(30) == -signal.SIGKILL
    second.terminate()
    kept = _kept(state)
    assert ".resume-000002" in kept and any(name.startswith(".tmp-") for name in kept), kept

    with running(["--config", str(config)], state) as third:
        third.wait_caught_up()
        log = third.full_log()
        assert "removed a partial index generation left by an interrupted build" in log, log
        assert "resumed: 12 of 36 files already done; reading the other 24" in log, log
        assert _served(third) == expected
    assert _kept(state) == []


def test_a_damaged_kept_partial_is_discarded_and_the_catch_up_starts_over(
    tmp_path: Path,
) -> None:
    config, state = _stopped_daemon_behind_its_tree(tmp_path)
    expected = _uninterrupted(tmp_path, config, state)
    held = _held(config, state, tmp_path / "release", after=12)
    assert held.terminate() == 0
    pack = state / "generations" / ".resume-000002" / "index" / "documents.pack"
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0x40
    pack.write_bytes(bytes(data))

    with running(["--config", str(config)], state) as again:
        again.wait_caught_up()
        log = again.full_log()
        discarded = "discarding the progress an interrupted build kept (.resume-000002): "
        assert discarded + "generation 2: index file documents.pack fails its checksum" in log
        assert "resumed:" not in log
        # Everything read again; the discarded partial's number is free again.
        assert "caught up with disk: generation 2 (36 changed" in log, log
        assert _served(again) == expected
    assert _kept(state) == []


def test_a_first_build_stopped_mid_way_is_continued_by_the_next_start(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for i in range(30):
        write(docs / f"p{i:02d}.md", _page(i, revised=True))
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    expected_state = tmp_path / "state-expected"
    with running(["--config", str(config)], expected_state) as plain:
        expected = _served(plain)
    state = tmp_path / "state"
    release = tmp_path / "release"
    env = {FAULT_PAUSE: f"build.files.10={release}"}
    first = Daemon(["--config", str(config)], state, env=env).start_process()
    assert wait_for(reached_marker(release).exists), first.log()
    first.terminate()
    assert "progress was kept as partial generation 1 (10 of 30 files read)" in first.full_log()
    assert not (state / "generations" / "gen-000001").exists()  # nothing served from it

    with running(["--config", str(config)], state) as again:
        log = again.full_log()
        assert "resumed: 10 of 30 files already done; reading the other 20" in log, log
        assert "index generation 2: 30 documents" in log, log
        assert _served(again) == expected
    assert _kept(state) == []


def test_a_kept_partial_of_another_generation_is_discarded(tmp_path: Path) -> None:
    """A partial continues the generation served when it was kept: once another generation
    serves (here: a copy of the state directory that caught up meanwhile), it is dropped."""
    config, state = _stopped_daemon_behind_its_tree(tmp_path)
    held = _held(config, state, tmp_path / "release", after=12)
    assert held.terminate() == 0
    other = tmp_path / "state-other"
    shutil.copytree(state, other, ignore=shutil.ignore_patterns(".resume-*"))
    with running(["--config", str(config)], other) as daemon:
        daemon.wait_caught_up()
    shutil.copytree(
        state / "generations" / ".resume-000002", other / "generations" / ".resume-000003"
    )

    with running(["--config", str(config)], other) as again:
        again.wait_caught_up()
        log = again.full_log()
        assert "it continues generation 1, and generation 2 serves" in log, log
        assert "resumed:" not in log
    assert _kept(other) == []
