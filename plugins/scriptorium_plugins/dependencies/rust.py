"""Rust: ``Cargo.toml`` with ``Cargo.lock``, and the crates unpacked in the Cargo registry's
sources (``$CARGO_HOME/registry/src/*/<name>-<version>``)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scriptorium_plugins.dependencies.files import walk_library
from scriptorium_plugins.dependencies.model import Declared, Dependency

MANIFESTS = ("Cargo.toml", "Cargo.lock")
_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def is_manifest(name: str) -> bool:
    return name in MANIFESTS


def _toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _names(table: Any) -> set[str]:
    """The crates a dependency table names (``package = "..."`` renames followed)."""
    if not isinstance(table, Mapping):
        return set()
    out = set()
    for key, spec in table.items():
        real = spec.get("package") if isinstance(spec, Mapping) else None
        out.add(str(real or key))
    return out


def direct_names(manifest: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for table in _TABLES:
        names |= _names(manifest.get(table))
    for target in (manifest.get("target") or {}).values():
        if isinstance(target, Mapping):
            for table in _TABLES:
                names |= _names(target.get(table))
    names |= _names((manifest.get("workspace") or {}).get("dependencies"))
    return names


def lock_packages(path: Path) -> list[tuple[str, str]]:
    """(name, version) of every registry crate in ``Cargo.lock`` (workspace members have no
    ``source`` and are left out)."""
    out = []
    for package in _toml(path).get("package", []):
        if isinstance(package, Mapping) and package.get("source"):
            name, version = package.get("name"), package.get("version")
            if isinstance(name, str) and isinstance(version, str):
                out.append((name, version))
    return out


def read(root: Path, transitive: bool) -> list[Declared] | None:
    """The crate's dependencies; None when there is neither ``Cargo.toml`` nor ``Cargo.lock``."""
    manifest, lock = root / "Cargo.toml", root / "Cargo.lock"
    if not manifest.is_file() and not lock.is_file():
        return None
    direct = direct_names(_toml(manifest)) if manifest.is_file() else set()
    locked = lock_packages(lock) if lock.is_file() else []
    if not direct and not manifest.is_file():
        direct = {name for name, _ in locked}  # a lock alone: every crate it holds
    found: list[Declared] = []
    pinned = {name for name, _ in locked}
    for name, version in locked:
        if name in direct or transitive:
            found.append(Declared(name, version, name in direct))
    found += [Declared(name, "", True) for name in sorted(direct - pinned)]
    return sorted(found, key=lambda d: (d.name, d.version))


def cargo_home(configured: str = "") -> Path:
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")


def locate(declared: list[Declared], home: Path, limit: int) -> list[Dependency]:
    """Each crate, with its files when a registry's sources hold ``<name>-<version>``."""
    registries = sorted((home / "registry" / "src").glob("*")) if home.is_dir() else []
    out: list[Dependency] = []
    for item in declared:
        dep = Dependency("rust", item.name, item.version, item.direct)
        for registry in registries:
            folder = registry / f"{item.name}-{item.version}"
            if item.version and folder.is_dir():
                dep.installed_version = item.version
                dep.location = folder
                dep.files = list(walk_library(folder, "rust", limit))
                break
        if item.version:
            dep.documentation_urls = (f"https://docs.rs/{item.name}/{item.version}",)
        out.append(dep)
    return out
