"""The ``mkdocs`` source kind: published MkDocs sites searched and fetched over HTTP."""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugins import hookimpl
from scriptorium.sources import SourceFactory
from scriptorium_plugins.mkdocs.source import MkDocsSource

__all__ = ["MkDocsSource"]


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("mkdocs", MkDocsSource)
