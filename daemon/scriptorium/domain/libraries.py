"""How a document of an installed library is named: ``name@version:path-inside``.

A ``dependencies`` source lists each library's files under that label; location resolution
names a library's Python file by its import path, and ranking tells the project's own
results from its dependencies' by it.
"""

from __future__ import annotations


def split_library_label(path: str) -> tuple[str, str] | None:
    """``httpx@0.28.1:httpx/_client.py`` -> (``httpx``, ``0.28.1``); None for other paths
    (``@types/node@22.15.30:index.d.ts`` keeps its scope in the name)."""
    label, colon, _ = path.partition(":")
    name, at, version = label.rpartition("@")
    if not colon or not at or not name or "/" in version:
        return None
    return name, version


def inside_library(path: str) -> str:
    """The path inside the library (``httpx/_client.py``); ``path`` itself for other paths."""
    return path.partition(":")[2] if split_library_label(path) else path
