"""Which files of an installed dependency are read: its code and bundled documentation.

Tests, caches, nested dependencies and generated bundles are left out; so is anything past
the size cap. The same rules serve every ecosystem, with each one's own code suffixes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from scriptorium_plugins.dependencies.model import InstalledFile

DOC_SUFFIXES = (".md", ".markdown", ".mdx", ".rst")
CODE_SUFFIXES = {
    "python": (".py", ".pyi"),
    "node": (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"),
    "go": (".go",),
    "rust": (".rs",),
}
# Folders of a library never read: its tests, caches, its own dependencies, build output.
SKIPPED_DIRS = frozenset(
    {
        "__pycache__",
        "node_modules",
        "tests",
        "test",
        "testdata",
        "__tests__",
        ".git",
        ".github",
        "target",
        # A front end's built assets (hashed bundles), never its source.
        "assets",
    }
)
# Tests, and generated code a reader never looks for: minified and bundled JavaScript,
# protobuf's generated modules.
SKIPPED_ENDINGS = (
    ".min.js",
    ".map",
    "_test.go",
    ".test.js",
    ".spec.js",
    ".test.ts",
    "bundle.js",
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pb.go",
)


def wanted(path: str, ecosystem: str) -> bool:
    """Whether a library's file (``/``-separated, inside the library) is indexed."""
    lowered = path.lower()
    if lowered.endswith(SKIPPED_ENDINGS):
        return False
    parts = path.split("/")
    if any(part in SKIPPED_DIRS or part.startswith(".") for part in parts[:-1]):
        return False
    return lowered.endswith(DOC_SUFFIXES) or lowered.endswith(CODE_SUFFIXES[ecosystem])


def walk_library(folder: Path, ecosystem: str, limit: int) -> Iterator[InstalledFile]:
    """The indexed files under ``folder`` (a package directory), in path order, at most
    ``limit`` of them. Symbolic links are followed only for the folder itself."""
    base = os.path.realpath(folder)
    found: list[InstalledFile] = []
    for directory, dirs, names in os.walk(base):
        rel_dir = os.path.relpath(directory, base)
        prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(names):
            rel = prefix + name
            full = os.path.join(directory, name)
            if wanted(rel, ecosystem) and not os.path.islink(full):
                found.append(InstalledFile(rel, Path(full)))
    found.sort(key=lambda f: f.path)
    yield from found[:limit]
