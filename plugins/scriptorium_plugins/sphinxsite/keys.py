"""The ``[[sources]]`` keys of the ``sphinx`` kind (apart, so checking a configuration is cheap)."""

from __future__ import annotations

from scriptorium.plugin import Key

SITE_KEYS = (
    Key("url", "string", None, "the published site's base URL (where searchindex.js is)"),
    Key("cache_dir", "string", "", "where the site's pages are mirrored (default: user cache)"),
    Key("refresh_hours", "number", 24.0, "a mirror younger than this is not fetched again"),
    Key("timeout_seconds", "number", 10.0, "deadline of one HTTP request", minimum=0, strict=True),
    Key("max_pages", "integer", 5000, "most pages mirrored from one site", minimum=1),
)
