"""The dependencies plugin: the ``dependencies`` source kind (a project's installed libraries)."""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import hookimpl
from scriptorium_plugins.dependencies.source import KEYS, DependenciesSource

__all__ = ["DependenciesSource"]


@hookimpl
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    register(DependenciesSource.kind, DependenciesSource, KEYS)
