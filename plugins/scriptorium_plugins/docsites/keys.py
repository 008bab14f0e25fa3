"""The ``[[sources]]`` keys of the ``site`` and ``llms_txt`` kinds (apart, so checking a
configuration does not import httpx or BeautifulSoup)."""

from __future__ import annotations

from scriptorium.plugin import Key

DEFAULT_RATE = 2.0  # requests per second: one every half second

SHARED_KEYS = (
    Key("cache_dir", "string", "", "where the site's pages are kept (default: user cache)"),
    Key("refresh_hours", "number", 24.0, "a crawl younger than this is not run again at start"),
    Key("timeout_seconds", "number", 10.0, "deadline of one HTTP request", minimum=0, strict=True),
    Key("max_pages", "integer", 500, "most pages kept from one site", minimum=1),
    Key(
        "max_crawl_minutes",
        "number",
        10.0,
        "longest a crawl runs at start-up; pages left are counted over the bound",
        minimum=0,
        strict=True,
    ),
    Key(
        "requests_per_second",
        "number",
        DEFAULT_RATE,
        "most requests a crawl makes per second (robots.txt's Crawl-delay, when longer, wins)",
        minimum=0,
        strict=True,
    ),
)

SITE_KEYS = (
    Key("start_urls", "strings", None, "pages the crawl starts from (http or https)"),
    Key(
        "scope",
        "string",
        "prefix",
        "prefix: stay under the first start URL's folder; origin: the whole origin",
        choices=("prefix", "origin"),
    ),
    Key("include", "strings", [], "URL path patterns a page must match (glob; empty: all)"),
    Key("exclude", "strings", [], "URL path patterns of pages never fetched (glob)"),
    Key("max_depth", "integer", 10, "most links followed from a start URL", minimum=0),
    Key("sitemap", "bool", True, "also start from the URLs of the site's sitemap.xml"),
    *SHARED_KEYS,
)

LLMS_KEYS = (
    Key("url", "string", None, "the site (its /llms.txt is read) or the llms.txt URL itself"),
    Key("full", "bool", False, "read llms-full.txt and cut it into pages by its headings"),
    Key("same_origin", "bool", True, "follow only links to the llms.txt's own origin"),
    *SHARED_KEYS,
)
