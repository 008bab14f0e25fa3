"""The ``mkdocs`` source kind: published MkDocs sites searched and fetched over HTTP.

The source's module (httpx, BeautifulSoup, markdownify) is imported when a ``mkdocs`` source is
configured, not when the plugin registers: most daemons serve local trees only, and those
imports are a fifth of a cold start.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import ORDER_KEY, Key, deferred_factory, hookimpl

# Declared here rather than on the source class so that checking a configuration does not
# import the source's module (see above); ``settings.py`` reads and normalises them.
SETTINGS: tuple[Key, ...] = (
    Key("origin", "string", None, "http(s) origin the sites are published under"),
    Key("sites", "strings", [], "site names under the origin"),
    Key("default_site", "string", "", "the site bare locations belong to (default: the first)"),
    Key("search_index_path", "string", "/search/search_index.json", "per-site search index"),
    Key("cache_hours", "number", 1.0, "how long a downloaded search index is kept"),
    Key("cache_dir", "string", None, "where search indexes are cached (default: state dir)"),
    Key("cache_file_template", "string", "{site}-search-index.json", "cache file name"),
    Key("raw_markdown_url", "string_or_false", "{base}/{path}.md", "raw page URL, or false"),
    Key("timeout_seconds", "number", 10.0, "deadline of one HTTP request"),
    Key("retry_cooldown_seconds", "number", 300.0, "pause after a site failed", minimum=0),
    Key("page_cache_seconds", "number", 60.0, "how long a fetched page is kept", minimum=0),
    Key("probe_redirects", "bool", True, "follow a site's redirects to find moved pages"),
    ORDER_KEY,
)


@hookimpl
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    register(
        "mkdocs",
        deferred_factory("scriptorium_plugins.mkdocs.source", "MkDocsSource"),
        settings=SETTINGS,
    )
