"""The ``site`` and ``llms_txt`` source kinds: any documentation site, crawled and indexed.

``site`` crawls static HTML documentation that is neither MkDocs nor Sphinx (robots.txt,
sitemap.xml, a scope, a rate limit, bounds) and keeps its main content as Markdown; ``llms_txt``
reads a site's ``llms.txt`` and the Markdown pages it links, or its ``llms-full.txt``. The
sources' module (httpx, BeautifulSoup, markdownify) is imported only when such a source is
configured, as for the ``mkdocs`` and ``sphinx`` kinds.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import LocalTreeSource, deferred_factory, hookimpl
from scriptorium_plugins.docsites.keys import LLMS_KEYS, SITE_KEYS

_TREE = tuple(k for k in LocalTreeSource.settings if k.name not in ("include", "exclude"))


@hookimpl
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    register(
        "site",
        deferred_factory("scriptorium_plugins.docsites.source", "SiteSource"),
        settings=(*_TREE, *SITE_KEYS),
    )
    register(
        "llms_txt",
        deferred_factory("scriptorium_plugins.docsites.source", "LlmsTxtSource"),
        settings=(*_TREE, *LLMS_KEYS),
    )
