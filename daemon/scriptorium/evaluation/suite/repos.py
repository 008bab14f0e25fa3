"""Finding the git dir of a corpus repository inside the folder passed as ``--repos``.

Three layouts are accepted so a folder of bare clones, of mirrors or of plain clones all work:
``DIR/owner+name/repo``, ``DIR/owner+name`` and ``DIR/name.git`` (or ``DIR/name``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path


class SuiteError(RuntimeError):
    """The suite cannot run as asked (missing repository, commit, set file, ...)."""


def candidates(repos: Path, repo: str) -> list[Path]:
    """The places a repository ``owner/name`` may live under ``repos``, most specific first."""
    owner, _, name = repo.partition("/")
    flat = f"{owner}+{name}"
    return [
        repos / flat / "repo",
        repos / flat,
        repos / f"{name}.git",
        repos / name,
    ]


def _is_git_dir(path: Path) -> bool:
    """True for a bare repository or a clone with a work tree.

    Judged from the folder itself: ``git rev-parse`` would walk up and accept any folder that
    merely sits inside some other checkout.
    """
    bare = (path / "HEAD").is_file() and (path / "objects").is_dir()
    return bare or (path / ".git").exists()


def find_git_dir(repos: Path, repo: str) -> Path:
    """The git dir of ``repo`` under ``repos``; a clear error naming the layouts tried."""
    for path in candidates(repos, repo):
        if _is_git_dir(path):
            return path
    tried = ", ".join(str(p) for p in candidates(repos, repo))
    raise SuiteError(f"repository {repo} is missing under {repos} (looked for {tried})")


def has_commit(git_dir: Path, commit: str) -> bool:
    done = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0
