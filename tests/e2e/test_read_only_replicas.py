"""Readers of a state directory: a read-only mount of a prebuilt one serves, and a reader
beside a writer keeps answering while the writer prunes.

A read-only replica is a real read-only bind mount (as root, a ``chmod`` stops nothing), so
the kernel itself refuses every write the daemon might try.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon
from tests.support.trees import markdown_config, write_tree

PAGES = {
    "guide/install.md": "# Install\n\nRun the quokka installer with the marsupial flag.\n",
    "guide/usage.md": "# Usage\n\nCall the wombat endpoint to list burrows.\n",
}


def build(config: Path, state: Path) -> None:
    """``scriptorium index build``: a writer of its own, one process per generation."""
    subprocess.run(
        [
            *(sys.executable, "-m", "scriptorium", "index", "build"),
            *("--config", str(config), "--state-dir", str(state)),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


def bind_read_only(source: Path, target: Path) -> None:
    """Mount ``source`` read-only at ``target``, or skip the test saying why it cannot."""
    target.mkdir()
    tries = [
        [["mount", "--bind", "-o", "ro", str(source), str(target)]],
        [
            ["mount", "--bind", str(source), str(target)],
            ["mount", "-o", "remount,ro,bind", str(target)],
        ],
    ]
    errors = []
    for commands in tries:
        done = [subprocess.run(c, capture_output=True, text=True) for c in commands]
        if all(r.returncode == 0 for r in done) and not _writable(target):
            return
        errors += [r.stderr.strip() for r in done if r.returncode]
        subprocess.run(["umount", str(target)], capture_output=True)
    pytest.skip(f"cannot make a read-only bind mount here: {'; '.join(errors) or 'writable'}")


def _writable(path: Path) -> bool:
    probe = path / ".probe"
    try:
        probe.write_text("x")
    except OSError:
        return False
    probe.unlink()
    return True


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    """Read-only mounts made by the test, unmounted after it."""
    made: list[Path] = []
    yield made
    for target in reversed(made):
        subprocess.run(["umount", str(target)], capture_output=True)


def tree_listing(root: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(root).as_posix(): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def test_a_read_only_mount_of_a_prebuilt_state_directory_serves(tmp_path, mounts):
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    state = tmp_path / "state"
    build(config, state)
    as_built = tree_listing(state)
    mounted = tmp_path / "ro"
    bind_read_only(state, mounted)
    mounts.append(mounted)

    daemon = Daemon(["--config", str(config)], mounted, log_path=tmp_path / "ro.log")
    try:
        daemon.start()
        daemon.wait_caught_up()
        found = daemon.stub.Search(pb.SearchRequest(query="quokka installer"), timeout=30)
        assert found.results and found.results[0].location.startswith("guide/install")
        content = daemon.stub.GetContent(
            pb.GetContentRequest(ref_id=found.results[0].ref_id, mode=pb.CONTENT_MODE_FULL),
            timeout=30,
        )
        assert "marsupial flag" in content.content
        sources = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=30)
        assert sources.generation == 1
        assert [s.state for s in sources.sources] == [pb.SOURCE_STATE_READY]
        log = daemon.full_log()
    finally:
        daemon.terminate()
    assert "refusing index generation" not in log, log
    assert "read-only state directory" in log
    assert tree_listing(state) == as_built


def test_a_read_only_mount_without_a_generation_says_so_and_exits_1(tmp_path, mounts):
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    empty = tmp_path / "empty"
    empty.mkdir()
    mounted = tmp_path / "ro"
    bind_read_only(empty, mounted)
    mounts.append(mounted)

    daemon = Daemon(["--config", str(config)], mounted, log_path=tmp_path / "ro.log")
    daemon.start_process()
    assert daemon.proc.wait(120) == 1
    assert "is read only and holds no usable index generation" in daemon.full_log()
    assert not any(empty.iterdir())


def test_a_reader_keeps_answering_while_a_writer_prunes_and_writes_nothing(tmp_path):
    """The writer (one ``index build`` per edit) drops generations past the newest three and
    the blobs only they named; the reader's generation, older than those, is kept because the
    reader holds a lease on it, so its texts still read back and it never rebuilds."""
    docs = write_tree(tmp_path / "docs", PAGES)
    config = markdown_config(tmp_path / "scriptorium.toml", {"docs": docs})
    state = tmp_path / "state"
    build(config, state)

    reader = Daemon(["--config", str(config)], state, log_path=tmp_path / "reader.log")
    try:
        reader.start()
        reader.wait_caught_up()
        # Generations 2..9: each build lands the edit, then writes the index again from the
        # roots (the edit deleted blocks: index/compaction.py); generation 1 is long past the
        # newest three.
        for n in range(1, 5):
            (docs / "guide/install.md").write_text(f"# Install\n\nRevision {n} of the page.\n")
            build(config, state)
        assert not (state / "generations/gen-000002").exists(), "the writer pruned"

        found = reader.stub.Search(pb.SearchRequest(query="quokka installer"), timeout=30)
        assert found.results and found.results[0].location.startswith("guide/install")
        content = reader.stub.GetContent(
            pb.GetContentRequest(location="guide/install", mode=pb.CONTENT_MODE_FULL),
            timeout=30,
        )
        assert "marsupial flag" in content.content
        sources = reader.stub.ListSources(pb.ListSourcesRequest(), timeout=30)
        assert sources.generation == 1
        assert [s.state for s in sources.sources] == [pb.SOURCE_STATE_READY]
        log = reader.full_log()
    finally:
        reader.terminate()
    assert "refusing index generation" not in log, log
    assert "index generation 10" not in log and "indexing:" not in log, log
    assert sorted(p.name for p in (state / "generations").iterdir())[-1] == "gen-000009"
    # Once the reader is gone, its lease holds nothing: the next write drops generation 1.
    (docs / "guide/usage.md").write_text("# Usage\n\nThe endpoint moved.\n")
    build(config, state)
    assert not (state / "generations/gen-000001").exists()
