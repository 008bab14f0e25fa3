"""The dependencies plugin: the ``dependencies`` source kind (a project's installed libraries)."""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import SourceFactory, deferred_factory, hookimpl
from scriptorium_plugins.dependencies.source import KEYS

KIND = "dependencies"


@hookimpl
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    register(
        KIND,
        deferred_factory("scriptorium_plugins.dependencies.source", "DependenciesSource"),
        KEYS,
    )


__all__ = ["KIND", "SourceFactory"]
