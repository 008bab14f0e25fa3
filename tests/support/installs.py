"""Real installed dependencies for the ``dependencies`` tests: a virtualenv from PyPI, a
``node_modules`` from npm, modules from the Go module proxy.

Each is made once under ``~/.cache/scriptorium/test-deps`` with the ordinary tools
(``python -m venv`` and pip, ``npm ci``, ``go mod download``) and reused while its pins
match (a marker file names them); a failed install leaves no marker, so the next run tries
again. ``make test`` therefore installs them itself from a clean clone.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# The pins the tests assert on.
HTTPX = "0.28.1"
PYDANTIC = "2.14.4"
MS = "2.1.3"
UUID_OLD, UUID_NEW = "v1.5.0", "v1.6.0"
ERRORS = "v0.9.1"
GO_MODULES = (
    f"github.com/google/uuid@{UUID_OLD}",
    f"github.com/google/uuid@{UUID_NEW}",
    f"github.com/pkg/errors@{ERRORS}",
)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/dependencies"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scriptorium" / "test-deps"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:12]


def _run(cmd: list[str], **kwargs) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")


def python_env() -> Path:
    """A virtualenv holding httpx and pydantic at the pinned versions (and what they need)."""
    pins = [f"httpx=={HTTPX}", f"pydantic=={PYDANTIC}"]
    venv = cache_root() / f"venv-{_digest(sys.version, *pins)}"
    marker = venv / "PINS"
    if marker.is_file() and marker.read_text() == "\n".join(pins):
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", str(venv)])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    _run([*pip, "--disable-pip-version-check", *pins])
    marker.write_text("\n".join(pins))
    return venv


def node_project(project: Path) -> Path:
    """``project`` with the fixture's package.json and package-lock.json, and ``npm ci``'s
    node_modules (npm's own cache makes a second run quick)."""
    project.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(FIXTURES / "npm-ms" / name, project / name)
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH")
    _run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=project)
    return project / "node_modules"


def go_module_cache() -> Path:
    """A module cache holding two versions of github.com/google/uuid and github.com/pkg/errors,
    downloaded through the Go module proxy."""
    cache = cache_root() / f"gomod-{_digest(*GO_MODULES)}"
    marker = cache / "MODULES"
    if marker.is_file() and marker.read_text() == "\n".join(GO_MODULES):
        return cache
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if go is None:
        raise RuntimeError("go is not on PATH")
    cache.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GOMODCACHE": str(cache),
        "GOFLAGS": "-modcacherw",
        "GO111MODULE": "on",
    }
    work = cache_root() / "go-download"
    work.mkdir(parents=True, exist_ok=True)
    (work / "go.mod").write_text("module example.com/download\n\ngo 1.21\n")
    _run([go, "mod", "download", "-json", *GO_MODULES], cwd=work, env=env)
    marker.write_text("\n".join(GO_MODULES))
    return cache
