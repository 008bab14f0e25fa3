"""Daemon lifecycle on small real trees: live edits, resolution, drain, corruption."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon, running
from tests.support.trees import write
from tests.support.waiting import wait_for

# The daemon says at debug level when its file-system watch is in place.
DEBUG = ["--log-level", "debug"]


def locations(stub, query: str) -> list[str]:
    return [r.location for r in stub.Search(pb.SearchRequest(query=query), timeout=30).results]


def test_edits_are_searchable_without_restart(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "guide.md", "# Guide\n\nInstall the widget.\n")
    write(docs / "old.md", "# Old\n\nThe zanzibar procedure.\n")
    with running([str(docs), "--watch-interval", "0.2"], tmp_path / "state") as daemon:
        stub = daemon.stub
        assert "old" in [loc.split("#")[0] for loc in locations(stub, "zanzibar")]
        write(docs / "new.md", "# New page\n\n## Quokka setup\n\nConfigure the quokka.\n")
        assert wait_for(lambda: any(loc.startswith("new") for loc in locations(stub, "quokka")))
        write(docs / "guide.md", "# Guide\n\nInstall the platypus.\n")
        assert wait_for(lambda: any(loc.startswith("guide") for loc in locations(stub, "platypus")))
        (docs / "old.md").unlink()
        assert wait_for(lambda: not locations(stub, "zanzibar"))
        sources = stub.ListSources(pb.ListSourcesRequest()).sources
        docs_source = next(s for s in sources if s.name == "docs")
        assert docs_source.document_count == 2


def watch_in_place(daemon: Daemon, directories: int | None = None) -> None:
    """Wait until the daemon says its file-system watch is in place (over ``directories``)."""
    line = "watch in place: " + ("" if directories is None else f"{directories} directories")
    assert wait_for(lambda: line in daemon.full_log()), daemon.log()


def events_only_config(tmp_path: Path, docs: Path) -> Path:
    """One Markdown source whose changes only events can bring in: the fallback would list
    once an hour, and nothing lists just because time has passed."""
    return write(
        tmp_path / "scriptorium.toml",
        "[server]\nwatch_interval = 3600\nrescan_interval = 0\n\n"
        f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{docs}"\ndefault = true\n',
    )


def test_file_system_events_bring_edits_in_without_waiting_for_a_listing(tmp_path):
    """With an hourly listing interval and no periodic rescans, only events bring edits in."""
    docs = tmp_path / "docs"
    write(docs / "guide.md", "# Guide\n\nInstall the widget.\n")
    write(docs / "old/page.md", "# Old page\n\nThe zanzibar procedure.\n")
    config = events_only_config(tmp_path, docs)
    with running(["--config", str(config), *DEBUG], tmp_path / "state") as daemon:
        stub = daemon.stub

        def pages(query: str) -> list[str]:
            return [loc.split("#")[0] for loc in locations(stub, query)]

        assert pages("zanzibar") == ["old/page"]
        watch_in_place(daemon)
        write(docs / "guide.md", "# Guide\n\nInstall the platypus.\n")
        assert wait_for(lambda: pages("platypus") == ["guide"])
        # A directory moved in raises one event for the directory: it is listed.
        staged = write(tmp_path / "staging/new/intro.md", "# Intro\n\nThe quokka intro.\n")
        staged.parent.rename(docs / "new")
        assert wait_for(lambda: pages("quokka") == ["new/intro"])
        # A new directory is watched too: a file written into it later still raises an event.
        (docs / "later").mkdir()
        # Listed, and the watch set up again over it: docs, old, new and later.
        watch_in_place(daemon, 4)
        write(docs / "later/notes.md", "# Notes\n\nThe pademelon notes.\n")
        assert wait_for(lambda: pages("pademelon") == ["later/notes"])
        # A directory removed takes its files with it.
        (docs / "old/page.md").rename(tmp_path / "page.md")
        (docs / "old").rmdir()
        assert wait_for(lambda: not pages("zanzibar"))
        # An ignore file changes what is indexed anywhere below it: it is listed.
        write(docs / "new/draft.md", "# Draft\n\nThe wombat draft.\n")
        assert wait_for(lambda: pages("wombat") == ["new/draft"])
        write(docs / ".gitignore", "draft.md\n")
        assert wait_for(lambda: not pages("wombat"))
        (docs / ".gitignore").unlink()
        assert wait_for(lambda: pages("wombat") == ["new/draft"])
        (docs / "new/draft.md").unlink()
        assert wait_for(lambda: not pages("wombat"))
        status = stub.ListSources(pb.ListSourcesRequest(), timeout=30).sources[0]
        assert status.document_count == 3
        # Nothing changes from here on, and no listing runs; the live watch still vouches for
        # the tree, so the source is reported current as of a moment after this one.
        quiet_since = time.time()

        def confirmed_after_quiet() -> bool:
            asked = time.time()
            status = stub.ListSources(pb.ListSourcesRequest(), timeout=30).sources[0]
            return asked - status.staleness_seconds > quiet_since

        assert wait_for(confirmed_after_quiet)
    assert "file-system events unavailable" not in daemon.log()


def test_a_root_replaced_by_another_directory_is_watched_again(tmp_path):
    """A checkout or a ``mv`` swaps the root's directory: its old watch sees nothing more."""
    docs = tmp_path / "docs"
    write(docs / "guide.md", "# Guide\n\nThe wallaby guide.\n")
    config = events_only_config(tmp_path, docs)
    with running(["--config", str(config), *DEBUG], tmp_path / "state") as daemon:
        stub = daemon.stub
        watch_in_place(daemon)
        replacement = write(tmp_path / "next/guide.md", "# Guide\n\nThe numbat guide.\n").parent
        docs.rename(tmp_path / "previous")
        replacement.rename(docs)
        assert wait_for(lambda: bool(locations(stub, "numbat")))
        assert not locations(stub, "wallaby")
        write(docs / "more.md", "# More\n\nThe bilby page.\n")
        assert wait_for(lambda: bool(locations(stub, "bilby")))


def test_ambiguity_across_sources_and_variants(tmp_path):
    write(tmp_path / "main/index.md", "# Home\n\nWelcome.\n")
    write(tmp_path / "beta/guide/setup.md", "# Setup (beta)\n\nBeta setup.\n")
    write(tmp_path / "gamma/guide/setup.md", "# Setup (gamma)\n\nGamma setup.\n")
    write(tmp_path / "gamma/topic.md", "# Topic file\n")
    write(tmp_path / "gamma/topic/index.md", "# Topic index\n")
    config = write(
        tmp_path / "scriptorium.toml",
        "\n".join(
            f'[[sources]]\nname = "{name}"\nkind = "markdown"\nroot = "{name}"\n'
            + ("default = true\n" if name == "main" else "")
            for name in ("main", "beta", "gamma")
        ),
    )
    with running(["--config", str(config)], tmp_path / "state") as daemon:
        stub = daemon.stub
        with pytest.raises(grpc.RpcError) as err:
            stub.GetContent(pb.GetContentRequest(location="guide/setup"))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        resolution = resolution_from_error(err.value)
        assert resolution.reason == "ambiguous"
        assert sorted(resolution.candidates) == ["beta/guide/setup", "gamma/guide/setup"]
        # A qualified location picks the source.
        reply = stub.GetContent(pb.GetContentRequest(location="gamma/guide/setup"))
        assert "Gamma setup" in reply.content
        assert reply.location == "gamma/guide/setup"
        # Two files with one canonical page inside a source are ambiguous, not guessed.
        with pytest.raises(grpc.RpcError) as err:
            stub.GetContent(pb.GetContentRequest(location="gamma/topic"))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_symlink_out_of_the_root_is_never_served(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "page.md", "# Page\n\nsafe text\n")
    secret = write(tmp_path / "outside" / "secret.md", "# Secret\n\nhunter2 credentials\n")
    (docs / "leak.md").symlink_to(secret)
    with running([str(docs)], tmp_path / "state") as daemon:
        assert not locations(daemon.stub, "hunter2 credentials")
        with pytest.raises(grpc.RpcError) as err:
            daemon.stub.GetContent(pb.GetContentRequest(location="leak"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_sigterm_drains_in_flight_calls_and_exits_cleanly(tmp_path):
    docs = tmp_path / "docs"
    for i in range(40):
        write(docs / f"page{i}.md", f"# Page {i}\n\n" + "lorem ipsum dolor " * 200 + "\n")
    daemon = Daemon([str(docs)], tmp_path / "state").start()
    errors: list[BaseException] = []
    done = []

    def hammer():
        stub = daemon.stub
        for _ in range(200):
            try:
                stub.Search(pb.SearchRequest(query="lorem ipsum"), timeout=30)
                done.append(1)
            except grpc.RpcError as exc:
                # After shutdown starts, new calls may be refused; accepted ones must complete.
                if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                    errors.append(exc)
                return

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    assert wait_for(lambda: len(done) >= 4), "the calls never got going"
    daemon.proc.send_signal(signal.SIGTERM)
    for thread in threads:
        thread.join(30)
    assert daemon.proc.wait(30) == 0
    daemon.terminate()
    assert not errors
    assert done
    assert "shutting down" in daemon.log().lower()


def test_corrupt_generation_is_refused_and_previous_one_serves(tmp_path):
    docs = tmp_path / "docs"
    state = tmp_path / "state"
    write(docs / "a.md", "# Alpha\n\nThe aardvark page.\n")
    with running([str(docs)], state):
        pass
    write(docs / "b.md", "# Beta\n\nThe bandicoot page.\n")
    with running([str(docs)], state) as daemon:
        daemon.wait_caught_up()  # the edit lands after start-up, as generation 2
    generations = sorted((state / "generations").iterdir())
    assert len(generations) >= 2
    newest = generations[-1]
    victim = max(
        (p for p in (newest / "index").iterdir() if p.is_file()), key=lambda p: p.stat().st_size
    )
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    with running([str(docs)], state) as daemon:
        assert "refusing index generation" in daemon.log()
        assert any(loc.startswith("a") for loc in locations(daemon.stub, "aardvark"))
        daemon.wait_caught_up()  # generation 1 serves first; b.md comes with the catch-up
        assert any(loc.startswith("b") for loc in locations(daemon.stub, "bandicoot"))
        reply = daemon.health.Check(
            health_pb2.HealthCheckRequest(service="scriptorium.v1.RetrievalService")
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_search_into_a_closed_pipe_exits_quietly(tmp_path):
    """``scriptorium search … | head -1``: the reader goes away; no traceback, status 141."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    write(docs / "guide.md", "# Guide\n\nInstall the widget.\n")
    with running([str(docs)], tmp_path / "state") as daemon:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scriptorium", "search", "widget", "--target", daemon.address],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        proc.stdout.close()  # the reader is gone before anything is printed
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 141
        assert b"Traceback" not in err and b"BrokenPipe" not in err
        # With a reader, the same command prints its results and exits 0.
        done = subprocess.run(
            [sys.executable, "-m", "scriptorium", "search", "widget", "--target", daemon.address],
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0 and b"guide" in done.stdout
