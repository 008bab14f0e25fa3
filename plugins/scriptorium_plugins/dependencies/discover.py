"""A project's dependencies across ecosystems: read the manifests, find what is installed.

Nothing is downloaded: a dependency the machine does not hold is reported as not installed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scriptorium_plugins.dependencies import golang, node, python, rust
from scriptorium_plugins.dependencies.model import ECOSYSTEMS, Dependency


def is_manifest(name: str) -> bool:
    """Whether a file of the project's root is one the dependencies are read from."""
    return any(m.is_manifest(name) for m in (python, node, golang, rust))


def has_manifest(root: Path) -> bool:
    """Whether ``root`` holds a manifest or lock file of any ecosystem (``serve .`` offers
    the dependencies source then)."""
    try:
        return any(is_manifest(entry.name) for entry in os.scandir(root) if entry.is_file())
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class Where:
    """Where installed dependencies are looked for; empty strings mean the usual place."""

    venv: str = ""
    node_modules: str = ""
    gomodcache: str = ""
    cargo_home: str = ""


def python_env(root: Path, configured: str) -> Path | None:
    """The virtualenv to read: the configured one, else the project's ``.venv``, else the
    active one (``$VIRTUAL_ENV``)."""
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_absolute() else root / path
    if (root / ".venv").is_dir():
        return root / ".venv"
    active = os.environ.get("VIRTUAL_ENV")
    return Path(active) if active else None


def discover(
    root: Path,
    *,
    transitive: bool = False,
    ecosystems: Sequence[str] = ECOSYSTEMS,
    where: Where = Where(),
    max_files: int = 2000,
) -> list[Dependency]:
    """Every declared dependency of the project at ``root``, installed or not."""
    found: list[Dependency] = []
    if "python" in ecosystems:
        declared = python.read(root, transitive)
        if declared:
            found += python.locate(declared, python_env(root, where.venv), max_files)
    if "node" in ecosystems:
        declared = node.read(root, transitive)
        if declared:
            folder = Path(where.node_modules).expanduser() if where.node_modules else None
            modules = (
                folder if folder and folder.is_absolute() else root / (folder or "node_modules")
            )
            found += node.locate(declared, modules, max_files)
    if "go" in ecosystems:
        declared = golang.read(root, transitive)
        if declared:
            cache = golang.module_cache(where.gomodcache)
            found += golang.locate(declared, cache, golang.replacements(root), max_files)
    if "rust" in ecosystems:
        declared = rust.read(root, transitive)
        if declared:
            found += rust.locate(declared, rust.cargo_home(where.cargo_home), max_files)
    return found
