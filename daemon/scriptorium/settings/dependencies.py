"""What ``serve PATH`` offers of a project's installed dependencies: the ``[dependencies]``
table and the ``dependencies`` source a bare path gets when it holds a manifest."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scriptorium.domain.model import SourceClass
from scriptorium.settings.schema import Key, check_table, table_of
from scriptorium.settings.sourceconfig import SourceConfig

# Files at a bare path's root that make ``serve PATH`` offer the project's dependencies too
# (the ``dependencies`` source kind reads them; ``requirements*.txt`` counts as well).
DEPENDENCY_MANIFESTS = frozenset(
    {
        "pyproject.toml",
        "uv.lock",
        "poetry.lock",
        "package.json",
        "package-lock.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "go.mod",
        "Cargo.toml",
        "Cargo.lock",
    }
)
DEPENDENCY_KEYS: tuple[Key, ...] = (
    Key(
        "enabled",
        "bool",
        True,
        "serve PATH also indexes the installed dependencies its manifests and lock files name "
        "(a `dependencies` source named deps); serve --no-dependencies turns it off too",
    ),
    Key(
        "transitive",
        "bool",
        False,
        "that source indexes every locked dependency, not only the direct ones",
    ),
    Key(
        "docs_sites",
        "bool",
        False,
        "that source also fetches each library's published documentation site, at the pinned "
        "version where the site serves one (off: nothing leaves the machine unless asked)",
    ),
)


def dependency_options(table: Any, flag: bool | None) -> dict[str, Any] | None:
    """The options of the source a bare path gets; None when it gets none (``enabled =
    false``, or ``flag`` False: ``--no-dependencies``, which wins over the file)."""
    deps: Mapping[str, Any] = table_of(table, "[dependencies]")
    check_table(deps, DEPENDENCY_KEYS, "[dependencies]")
    offered = bool(deps.get("enabled", True)) if flag is None else flag
    if not offered:
        return None
    options: dict[str, Any] = {"transitive": bool(deps.get("transitive", False))}
    if deps.get("docs_sites", False):
        options["docs_sites"] = True
    return options


def has_dependency_manifest(root: Path) -> bool:
    """Whether ``root`` holds a manifest or lock file the ``dependencies`` kind reads."""
    try:
        names = [entry.name for entry in os.scandir(root) if entry.is_file()]
    except OSError:
        return False
    return any(
        n in DEPENDENCY_MANIFESTS or (n.startswith("requirements") and n.endswith(".txt"))
        for n in names
    )


def dependency_source(
    root: Path, name: str, taken: set[str], options: Mapping[str, Any]
) -> list[SourceConfig]:
    """The ``dependencies`` source of a bare path (none without a manifest, or when its name
    is taken); a reference source, default so that its locations stay unqualified."""
    if not has_dependency_manifest(root) or name.casefold() in taken:
        return []
    taken.add(name.casefold())
    return [
        SourceConfig(
            name=name,
            kind="dependencies",
            root=root,
            source_class=SourceClass.REFERENCE.value,
            default=True,
            options=dict(options),
        )
    ]
