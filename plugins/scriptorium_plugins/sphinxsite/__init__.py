"""The ``sphinx`` source kind: a published Sphinx site, mirrored and indexed like a local tree.

The source's module (httpx, BeautifulSoup) is imported only when a ``sphinx`` source is
configured, as for the ``mkdocs`` kind.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import LocalTreeSource, deferred_factory, hookimpl
from scriptorium_plugins.sphinxsite.keys import SITE_KEYS

SETTINGS = (*(k for k in LocalTreeSource.settings if k.name != "include"), *SITE_KEYS)


@hookimpl
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    register(
        "sphinx",
        deferred_factory("scriptorium_plugins.sphinxsite.source", "SphinxSiteSource"),
        settings=SETTINGS,
    )
