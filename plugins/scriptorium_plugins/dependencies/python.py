"""Python: ``pyproject.toml`` with ``uv.lock``, ``poetry.lock`` or ``requirements*.txt``, and
the distributions installed in the project's virtualenv (each one's ``*.dist-info/RECORD``)."""

from __future__ import annotations

import csv
import email.parser
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scriptorium_plugins.dependencies.files import wanted
from scriptorium_plugins.dependencies.model import (
    Declared,
    Dependency,
    InstalledFile,
    normalize_python_name,
)

MANIFESTS = ("pyproject.toml", "uv.lock", "poetry.lock")
REQUIREMENTS = re.compile(r"^requirements[\w.-]*\.txt$")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*===?\s*([^\s;#,]+)")
# A lock's entries that are the project itself (or another local tree), not a dependency.
_LOCAL_SOURCES = frozenset({"editable", "virtual", "directory", "path"})


def is_manifest(name: str) -> bool:
    return name in MANIFESTS or bool(REQUIREMENTS.match(name))


def requirement_name(spec: str) -> str | None:
    """The distribution a PEP 508 requirement names (``httpx[http2]>=0.27`` -> ``httpx``)."""
    match = _NAME.match(spec)
    return normalize_python_name(match.group(1)) if match else None


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _specs(value: Any) -> Iterable[str]:
    """Requirement strings in a list, or in every list of a table of lists."""
    if isinstance(value, list):
        yield from (v for v in value if isinstance(v, str))
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _specs(item)


def direct_names(pyproject: Mapping[str, Any]) -> set[str]:
    """Every distribution the manifest names: PEP 621 (with extras), dependency groups,
    uv's dev dependencies and Poetry's tables."""
    names: set[str] = set()
    project = pyproject.get("project", {})
    specs = [
        *_specs(project.get("dependencies", [])),
        *_specs(project.get("optional-dependencies", {})),
        *_specs(pyproject.get("dependency-groups", {})),
        *_specs(pyproject.get("tool", {}).get("uv", {}).get("dev-dependencies", [])),
    ]
    names.update(n for n in map(requirement_name, specs) if n)
    poetry = pyproject.get("tool", {}).get("poetry", {})
    tables = [poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})]
    tables += [g.get("dependencies", {}) for g in poetry.get("group", {}).values()]
    for table in tables:
        if isinstance(table, Mapping):
            names.update(normalize_python_name(n) for n in table if n.lower() != "python")
    return names


def lock_pins(path: Path) -> dict[str, str]:
    """Name to version of every registry package of a ``uv.lock`` or ``poetry.lock``."""
    pins: dict[str, str] = {}
    for package in _load_toml(path).get("package", []):
        if not isinstance(package, Mapping):
            continue
        source = package.get("source", {})
        if isinstance(source, Mapping) and _LOCAL_SOURCES & set(source):
            continue
        if isinstance(source, Mapping) and source.get("type") in _LOCAL_SOURCES:
            continue  # poetry's [package.source] type = "directory"
        name, version = package.get("name"), package.get("version")
        if isinstance(name, str) and isinstance(version, str):
            pins[normalize_python_name(name)] = version
    return pins


def requirements_pins(path: Path) -> dict[str, str]:
    """Name to version ("" when not pinned with ``==``) of every requirement line; options
    (``-r``, ``-e``, ``--hash``) and comments are skipped."""
    pins: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return pins
    for line in lines:
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        match = _PIN.match(line)
        if match:
            pins[normalize_python_name(match.group(1))] = match.group(2)
        else:
            name = requirement_name(line)
            if name:
                pins.setdefault(name, "")
    return pins


def read(root: Path, transitive: bool) -> list[Declared] | None:
    """The project's Python dependencies; None when it has no Python manifest."""
    requirement_files = sorted(p for p in root.glob("requirements*.txt") if p.is_file())
    pyproject_path = root / "pyproject.toml"
    pyproject = _load_toml(pyproject_path) if pyproject_path.is_file() else None
    if pyproject is None and not requirement_files:
        return None
    pins: dict[str, str] = {}
    for lock in ("uv.lock", "poetry.lock"):
        if (root / lock).is_file():
            pins = lock_pins(root / lock)
            break
    required: dict[str, str] = {}
    for path in requirement_files:
        required.update(requirements_pins(path))
    direct = direct_names(pyproject) if pyproject is not None else set(required)
    if not pins:
        pins = {name: version for name, version in required.items() if version}
    own = requirement_name(str((pyproject or {}).get("project", {}).get("name", "")))
    names = set(direct) | (set(pins) if transitive else set())
    names.discard(own or "")
    return [Declared(name, pins.get(name, ""), name in direct) for name in sorted(names)]


# -- where it is installed ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Distribution:
    """One ``*.dist-info`` folder of a site-packages."""

    name: str
    version: str
    folder: Path


def site_packages(venv: Path) -> Path | None:
    """The ``site-packages`` folder of a virtualenv (POSIX or Windows layout)."""
    for candidate in sorted(venv.glob("lib/python*/site-packages")):
        if candidate.is_dir():
            return candidate
    windows = venv / "Lib" / "site-packages"
    return windows if windows.is_dir() else None


def distributions(site: Path) -> dict[str, Distribution]:
    """Every distribution installed in ``site``, by normalised name."""
    found: dict[str, Distribution] = {}
    for folder in sorted(site.glob("*.dist-info")):
        stem = folder.name[: -len(".dist-info")]
        name, _, version = stem.partition("-")
        meta = _metadata(folder)
        name = meta.get("Name") or name
        version = meta.get("Version") or version
        found[normalize_python_name(name)] = Distribution(name, version, folder)
    return found


def _metadata(folder: Path) -> Any:
    try:
        text = (folder / "METADATA").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return email.parser.Parser().parsestr(text)


_DOC_LABELS = frozenset({"documentation", "docs"})
_HOME_LABELS = frozenset({"homepage", "home", "source", "source code", "repository"})


def documentation_urls(meta: Any) -> tuple[str, ...]:
    """The metadata's documentation links, then its home page (a changelog or issue tracker
    is neither)."""
    if not hasattr(meta, "get_all"):
        return ()
    docs, homes = [], []
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = str(entry).partition(",")
        label, url = label.strip().lower(), url.strip()
        if url.startswith(("http://", "https://")):
            if label in _DOC_LABELS:
                docs.append(url)
            elif label in _HOME_LABELS:
                homes.append(url)
    home = str(meta.get("Home-page") or "").strip()
    if home.startswith(("http://", "https://")):
        homes.insert(0, home)
    return tuple(dict.fromkeys([*docs, *homes[:1]]))


def _readme(dist: Distribution, meta: Any) -> InstalledFile | None:
    """The long description (a wheel's README) as a page of its own."""
    if not hasattr(meta, "get_payload"):
        return None
    body = meta.get_payload()
    if not isinstance(body, str) or not body.strip():
        return None
    content_type = str(meta.get("Description-Content-Type") or "").lower()
    suffix = ".md" if "markdown" in content_type else ".rst"
    return InstalledFile(f"README{suffix}", dist.folder / "METADATA", synthesised=True)


def readme_text(metadata_path: Path) -> str | None:
    """The long description a synthesised ``README`` reads from ``METADATA``."""
    try:
        text = metadata_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    body = email.parser.Parser().parsestr(text).get_payload()
    return without_changelog(body) if isinstance(body, str) else None


_CHANGELOG = re.compile(
    r"^(?:#{1,3}\s*(?:change\s*log|changes|history|release\s+(?:notes|information))\b.*"
    r"|(?:change\s*log|changes|history|release\s+(?:notes|information))\s*\n[=\-~^]{3,})\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def without_changelog(body: str) -> str:
    """The long description up to a changelog some projects append to it (every release's
    notes would answer every question about the library's API)."""
    match = _CHANGELOG.search(body)
    return body[: match.start()].rstrip() + "\n" if match and match.start() > 0 else body


def record_files(dist: Distribution, site: Path, limit: int) -> list[InstalledFile]:
    """The distribution's indexed files, from its ``RECORD`` (paths inside ``site`` only)."""
    try:
        with (dist.folder / "RECORD").open(encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))
    except OSError:
        return []
    files: list[InstalledFile] = []
    for row in rows:
        if not row:
            continue
        path = row[0].replace("\\", "/")
        if path.startswith(("../", "/")) or ".dist-info/" in path or ".data/" in path:
            continue
        if wanted(path, "python"):
            files.append(InstalledFile(path, site / path))
    files.sort(key=lambda f: f.path)
    return files[:limit]


def locate(declared: list[Declared], venv: Path | None, limit: int) -> list[Dependency]:
    """Each declared distribution, with its files when the virtualenv has it installed."""
    site = site_packages(venv) if venv is not None else None
    installed = distributions(site) if site is not None else {}
    out: list[Dependency] = []
    for item in declared:
        dep = Dependency("python", item.name, item.version, item.direct)
        dist = installed.get(item.name)
        if dist is not None and site is not None:
            meta = _metadata(dist.folder)
            dep.name = normalize_python_name(dist.name)
            dep.installed_version = dist.version
            dep.version = item.version or dist.version
            dep.location = site
            readme = _readme(dist, meta)
            dep.files = ([readme] if readme else []) + record_files(dist, site, limit)
            dep.documentation_urls = documentation_urls(meta)
        out.append(dep)
    return out
