"""Node: ``package.json`` with ``package-lock.json``, ``pnpm-lock.yaml`` or ``yarn.lock``, and
the packages installed under ``node_modules/<name>``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scriptorium_plugins.dependencies.files import walk_library
from scriptorium_plugins.dependencies.model import Declared, Dependency

MANIFESTS = ("package.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock")
_DEPENDENCY_TABLES = ("dependencies", "devDependencies", "optionalDependencies")
# ``1.2.3(react@18.2.0)``: pnpm appends the peers it resolved a version against.
_PEER_SUFFIX = re.compile(r"\(.*$")


def is_manifest(name: str) -> bool:
    return name in MANIFESTS


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def direct_names(package: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for table in _DEPENDENCY_TABLES:
        value = package.get(table)
        if isinstance(value, Mapping):
            names.update(str(n) for n in value)
    return names


def package_lock_pins(path: Path) -> dict[str, str]:
    """Name to version of every top-level package (lockfile v1, v2 and v3)."""
    data = _json(path)
    pins: dict[str, str] = {}
    packages = data.get("packages")
    if isinstance(packages, Mapping):
        for key, entry in packages.items():
            head, _, name = str(key).rpartition("node_modules/")
            if head or not name or not isinstance(entry, Mapping) or entry.get("link"):
                continue  # the root (""), nested copies, and workspace links
            if isinstance(entry.get("version"), str):
                pins[name] = entry["version"]
        return pins
    for name, entry in (data.get("dependencies") or {}).items():
        if isinstance(entry, Mapping) and isinstance(entry.get("version"), str):
            pins[str(name)] = entry["version"]
    return pins


def _pnpm_key(key: str) -> tuple[str, str] | None:
    """``/@scope/name@1.2.3``, ``name@1.2.3(peer)`` or ``/name/1.2.3`` -> (name, version)."""
    key = _PEER_SUFFIX.sub("", key.lstrip("/"))
    at = key.rfind("@")
    if at > 0:
        return key[:at], key[at + 1 :]
    name, _, version = key.rpartition("/")
    return (name, version) if name and version else None


def pnpm_pins(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(the project's direct pins, every package's pin) from ``pnpm-lock.yaml`` v5 to v9."""
    import yaml  # only a pnpm project pays for the parser

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}, {}
    if not isinstance(data, dict):
        return {}, {}
    root = (data.get("importers") or {}).get(".") or data
    direct: dict[str, str] = {}
    for table in _DEPENDENCY_TABLES:
        for name, spec in (root.get(table) or {}).items():
            version = spec.get("version") if isinstance(spec, Mapping) else spec
            if isinstance(version, str) and not version.startswith(("link:", "file:")):
                direct[str(name)] = _PEER_SUFFIX.sub("", version)
    every: dict[str, str] = {}
    for key in data.get("packages") or {}:
        found = _pnpm_key(str(key))
        if found:
            every.setdefault(*found)
    return direct, {**every, **direct}


_YARN_ENTRY = re.compile(r'^"?((?:@[^@/"]+/)?[^@"\s]+)@')
_YARN_VERSION = re.compile(r'^\s+version:?\s+"?([^"\s]+)"?')


def yarn_pins(path: Path) -> dict[str, str]:
    """Name to version of every entry of a ``yarn.lock`` (classic and berry)."""
    pins: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return pins
    current: str | None = None
    for line in lines:
        if line and not line[0].isspace() and not line.startswith("#"):
            match = _YARN_ENTRY.match(line)
            current = match.group(1) if match and match.group(1) != "__metadata" else None
            continue
        version = _YARN_VERSION.match(line)
        if current and version:
            pins.setdefault(current, version.group(1))
            current = None
    return pins


def read(root: Path, transitive: bool) -> list[Declared] | None:
    """The project's npm dependencies; None when it has no ``package.json``."""
    manifest = root / "package.json"
    if not manifest.is_file():
        return None
    package = _json(manifest)
    direct = direct_names(package)
    pins: dict[str, str] = {}
    if (root / "package-lock.json").is_file():
        pins = package_lock_pins(root / "package-lock.json")
    elif (root / "pnpm-lock.yaml").is_file():
        pins = pnpm_pins(root / "pnpm-lock.yaml")[1]
    elif (root / "yarn.lock").is_file():
        pins = yarn_pins(root / "yarn.lock")
    names = direct | (set(pins) if transitive else set())
    return [Declared(name, pins.get(name, ""), name in direct) for name in sorted(names)]


def _homepage(package: Mapping[str, Any]) -> tuple[str, ...]:
    urls = []
    home = package.get("homepage")
    if isinstance(home, str) and home.startswith(("http://", "https://")):
        urls.append(home)
    return tuple(urls)


def locate(declared: list[Declared], node_modules: Path, limit: int) -> list[Dependency]:
    """Each declared package, with its files when ``node_modules/<name>`` holds it."""
    out: list[Dependency] = []
    for item in declared:
        dep = Dependency("node", item.name, item.version, item.direct)
        folder = node_modules / item.name
        package = _json(folder / "package.json") if folder.is_dir() else {}
        if package:
            dep.installed_version = str(package.get("version") or item.version)
            dep.version = item.version or dep.installed_version
            dep.location = folder
            dep.files = list(walk_library(folder, "node", limit))
            dep.documentation_urls = _homepage(package)
        out.append(dep)
    return out
