"""The ``mkdocs`` source kind: published MkDocs sites searched and fetched over HTTP.

The source's module (httpx, BeautifulSoup, markdownify) is imported when a ``mkdocs`` source is
configured, not when the plugin registers: most daemons serve local trees only, and those
imports are a fifth of a cold start.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import SourceFactory, deferred_factory, hookimpl


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("mkdocs", deferred_factory("scriptorium_plugins.mkdocs.source", "MkDocsSource"))
