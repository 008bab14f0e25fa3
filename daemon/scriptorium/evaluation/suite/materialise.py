"""Materialising a corpus: the files a set needs from a repository at a commit, cached on disk.

Files are read straight from the git dir (``ls-tree`` + ``cat-file --batch``), so no work tree
is needed. A tree is written once into a temporary folder and renamed into place, so an
interrupted run never leaves a half tree that a later run would trust. The daemon's state dir
sits beside the tree, so its index generations are reused by the next run on the same commit.
A blob the git dir lacks (a partial clone or snapshot leaves out its largest files) is skipped
and counted: the corpus is what the git dir holds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from scriptorium.evaluation.suite.repos import SuiteError, find_git_dir, has_commit

DEFAULT_CACHE = Path("~/.cache/scriptorium/suite")
COMPLETE_MARKER = "tree.complete"  # beside the tree, never inside it: it is not corpus
# Never materialised: links can point outside the tree, and submodules have no blob here.
_REGULAR_MODES = ("100644", "100755")


@dataclass(frozen=True, slots=True)
class Selection:
    """Which files of a tree a set needs: paths under ``prefixes`` ending in ``suffixes``."""

    name: str
    prefixes: tuple[str, ...] = ("",)
    suffixes: tuple[str, ...] = ()

    def wants(self, path: str) -> bool:
        in_prefix = any(path.startswith(p) for p in self.prefixes)
        return in_prefix and (not self.suffixes or path.lower().endswith(self.suffixes))


@dataclass(frozen=True, slots=True)
class Materialised:
    """A corpus on disk: the tree, the daemon's state dir for it, and how many files it has."""

    repo: str
    commit: str
    tree: Path
    state_dir: Path
    file_count: int


def corpus_dir(cache: Path, repo: str, commit: str, selection: Selection) -> Path:
    """``<cache>/<owner+name>/<commit>/<selection>``: one folder per corpus."""
    return cache.expanduser() / repo.replace("/", "+") / commit / selection.name


def list_blobs(git_dir: Path, commit: str, selection: Selection) -> list[tuple[str, str]]:
    """(sha, path) of every regular file at ``commit`` that ``selection`` wants."""
    done = subprocess.run(
        ["git", "-C", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", commit],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise SuiteError(f"git ls-tree {commit} failed in {git_dir}: {done.stderr.decode()[:300]}")
    blobs = []
    for entry in done.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if kind == "blob" and mode in _REGULAR_MODES and selection.wants(path):
            blobs.append((sha, path))
    return blobs


def read_blobs(git_dir: Path, shas: list[str]) -> Iterator[bytes | None]:
    """Contents of ``shas`` in order (None for a blob the git dir lacks), from one
    ``git cat-file --batch`` process.

    The requests are written from a thread so neither pipe can fill while the other waits.
    """
    proc = subprocess.Popen(
        ["git", "-C", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def feed() -> None:
        try:
            stdin.write(b"".join(sha.encode() + b"\n" for sha in shas))
        finally:
            stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        for _ in shas:
            header = stdout.readline().split()
            if len(header) == 2 and header[1] == b"missing":
                yield None
                continue
            if len(header) != 3:
                raise SuiteError(f"git cat-file: unexpected answer {header!r}")
            data = stdout.read(int(header[2]))
            stdout.read(1)  # the newline after every object
            yield data
    finally:
        writer.join()
        stdout.close()
        proc.wait()


def materialise(
    repos: Path,
    repo: str,
    commit: str,
    selection: Selection,
    cache: Path,
    log: Callable[[str], None] = lambda _: None,
) -> Materialised:
    """The corpus of ``repo`` at ``commit`` under ``cache``, written now unless already there."""
    where = corpus_dir(cache, repo, commit, selection)
    tree = where / "tree"
    state = where / "state"
    marker = where / COMPLETE_MARKER
    if marker.is_file() and tree.is_dir():
        count = int(marker.read_text().strip() or 0)
        state.mkdir(parents=True, exist_ok=True)
        return Materialised(repo, commit, tree, state, count)
    git_dir = find_git_dir(repos, repo)
    if not has_commit(git_dir, commit):
        raise SuiteError(f"repository {repo} at {git_dir} has no commit {commit}")
    blobs = list_blobs(git_dir, commit, selection)
    if not blobs:
        raise SuiteError(f"{repo}@{commit[:12]}: no files match selection {selection.name!r}")
    log(f"materialising {repo}@{commit[:12]} ({selection.name}: {len(blobs)} files)")
    where.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix="tree-", dir=where))
    missing = 0
    try:
        for (_, path), data in zip(blobs, read_blobs(git_dir, [s for s, _ in blobs]), strict=True):
            if data is None:
                missing += 1
                continue
            target = partial / path
            if not target.resolve().is_relative_to(partial.resolve()):
                continue  # a hostile path must not leave the tree
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if tree.exists():
            shutil.rmtree(tree)
        os.replace(partial, tree)
        marker.write_text(f"{len(blobs) - missing}\n")
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if missing:
        log(f"{repo}@{commit[:12]}: skipped {missing} file(s) whose blob the git dir lacks")
    state.mkdir(parents=True, exist_ok=True)
    return Materialised(repo, commit, tree, state, len(blobs) - missing)
