"""The ``mkdocs`` source kind: published MkDocs sites searched and fetched over HTTP.

The source's module (httpx, BeautifulSoup, markdownify) is imported when a ``mkdocs`` source is
configured, not when the plugin registers: most daemons serve local trees only, and those
imports are a fifth of a cold start.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scriptorium.plugins import hookimpl
from scriptorium.sources import SourceConfig, SourceContext, SourceFactory

if TYPE_CHECKING:
    from scriptorium_plugins.mkdocs.source import MkDocsSource

__all__ = ["MkDocsSource", "make_source"]


def make_source(config: SourceConfig, context: SourceContext) -> MkDocsSource:
    from scriptorium_plugins.mkdocs.source import MkDocsSource

    return MkDocsSource(config, context)


def __getattr__(name: str):
    if name == "MkDocsSource":
        from scriptorium_plugins.mkdocs.source import MkDocsSource

        return MkDocsSource
    raise AttributeError(name)


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("mkdocs", make_source)
