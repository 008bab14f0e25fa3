"""Go: ``go.mod`` (and ``go.sum``) and the modules in the module cache
(``$GOMODCACHE/<path>@<version>``)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from scriptorium_plugins.dependencies.files import walk_library
from scriptorium_plugins.dependencies.model import Declared, Dependency

MANIFESTS = ("go.mod", "go.sum")
_REQUIRE = re.compile(r"^\s*(?:require\s+)?([^\s()]+)\s+(v[^\s]+)(\s*//\s*indirect)?")
_REPLACE = re.compile(r"^\s*(?:replace\s+)?([^\s()]+)(?:\s+v\S+)?\s*=>\s*(\S+)(?:\s+(v\S+))?")


def is_manifest(name: str) -> bool:
    return name in MANIFESTS


def parse_go_mod(text: str) -> tuple[list[Declared], dict[str, tuple[str, str]]]:
    """The ``require`` entries (``// indirect`` ones are not direct) and the ``replace``
    entries that point at another module version (path -> (new path, version))."""
    required: list[Declared] = []
    replaced: dict[str, tuple[str, str]] = {}
    block = ""
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].rstrip() if "// indirect" not in raw else raw
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.endswith("(") and stripped.split()[0] in {"require", "replace", "exclude"}:
            block = stripped.split()[0]
            continue
        if stripped == ")":
            block = ""
            continue
        word = stripped.split()[0]
        kind = block or word
        if kind == "require":
            match = _REQUIRE.match(stripped)
            if match:
                required.append(Declared(match.group(1), match.group(2), not match.group(3)))
        elif kind == "replace":
            match = _REPLACE.match(stripped)
            if match and match.group(3):
                replaced[match.group(1)] = (match.group(2), match.group(3))
    return required, replaced


def parse_go_sum(text: str) -> dict[str, str]:
    """Module path to the newest version whose code (not only ``go.mod``) is recorded."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not parts[1].endswith("/go.mod"):
            found[parts[0]] = parts[1]
    return found


def read(root: Path, transitive: bool) -> list[Declared] | None:
    """The module's dependencies; None when there is no ``go.mod``."""
    try:
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    required, _ = parse_go_mod(text)
    if transitive:
        named = {d.name for d in required}
        try:
            summed = parse_go_sum((root / "go.sum").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            summed = {}
        required += [Declared(p, v, False) for p, v in summed.items() if p not in named]
    else:
        required = [d for d in required if d.direct]
    return sorted(required, key=lambda d: d.name)


def replacements(root: Path) -> dict[str, tuple[str, str]]:
    try:
        return parse_go_mod((root / "go.mod").read_text(encoding="utf-8", errors="replace"))[1]
    except OSError:
        return {}


def escape_path(path: str) -> str:
    """The module cache's case encoding: every upper-case letter becomes ``!`` + lower case."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)


@functools.cache
def module_cache(configured: str = "") -> Path | None:
    """``$GOMODCACHE``, else what ``go env GOMODCACHE`` says, else ``$GOPATH/pkg/mod``."""
    if configured:
        return Path(configured).expanduser()
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    go = shutil.which("go")
    if go:
        try:
            done = subprocess.run(
                [go, "env", "GOMODCACHE"], capture_output=True, text=True, timeout=20, check=False
            )
            if done.returncode == 0 and done.stdout.strip():
                return Path(done.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    gopath = os.environ.get("GOPATH") or str(Path.home() / "go")
    return Path(gopath.split(os.pathsep)[0]) / "pkg" / "mod"


def locate(
    declared: list[Declared], cache: Path | None, replaced: dict[str, tuple[str, str]], limit: int
) -> list[Dependency]:
    """Each required module, with its files when the module cache holds that version."""
    out: list[Dependency] = []
    for item in declared:
        dep = Dependency("go", item.name, item.version, item.direct)
        path, version = replaced.get(item.name, (item.name, item.version))
        folder = cache / f"{escape_path(path)}@{version}" if cache is not None else None
        if folder is not None and folder.is_dir():
            dep.installed_version = version
            dep.location = folder
            dep.files = list(walk_library(folder, "go", limit))
        dep.documentation_urls = (f"https://pkg.go.dev/{item.name}@{item.version}",)
        out.append(dep)
    return out
