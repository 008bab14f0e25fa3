"""The ``mkdocs`` source table: sites under one origin, their index cache and fetch patterns.

Everything a misconfiguration could break is checked here, once, with the source name in the
message; the rest of the plugin reads plain, already normalised values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scriptorium.plugin import SourceConfig, option_number

DEFAULT_INDEX_PATH = "/search/search_index.json"
DEFAULT_CACHE_TEMPLATE = "{site}-search-index.json"
DEFAULT_RAW_PATTERN = "{base}/{path}.md"
DEFAULT_TIMEOUT_SECONDS = 10.0
DEFAULT_COOLDOWN_SECONDS = 300.0
DEFAULT_PAGE_CACHE_SECONDS = 60.0
# Characters no common file system accepts in a name, plus control characters.
_INVALID_FILE_CHARS = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


@dataclass(frozen=True, slots=True)
class MkDocsSettings:
    origin: str
    default_site: str
    sites: tuple[str, ...]
    search_index_path: str
    cache_dir: Path
    cache_file_template: str
    cache_hours: float
    raw_markdown_url: str  # "" disables raw Markdown: pages are always converted from HTML
    timeout_seconds: float
    retry_cooldown_seconds: float
    page_cache_seconds: float
    probe_redirects: bool

    def base_url(self, site: str) -> str:
        """A site's base URL: always ``{origin}/{site}``."""
        return f"{self.origin}/{site}"

    def cache_path(self, site: str) -> Path:
        return self.cache_dir / cache_file_name(self.cache_file_template, site)


def dedupe_sites(default: str, sites: list[Any]) -> tuple[str, ...]:
    """Site names without blanks or case-insensitive repeats; the default site always first."""
    out: list[str] = []
    seen: set[str] = set()
    for raw in [default, *sites]:
        if not isinstance(raw, str):
            continue
        name = raw.strip().strip("/")
        if not name or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        out.append(name)
    return tuple(out)


def sanitize_site(site: str) -> str:
    """A site name made safe as part of a file name (invalid characters become ``-``)."""
    clean = _INVALID_FILE_CHARS.sub("-", site)
    return "-" * len(clean) if set(clean) <= {"."} else clean


def cache_file_name(template: str, site: str) -> str:
    """The cache file name for a site; a template without ``{site}`` gets the site prepended."""
    name = sanitize_site(site)
    if "{site}" in template:
        return template.replace("{site}", name)
    return f"{name}-{template}"


def _text(config: SourceConfig, key: str, default: str) -> str:
    value = config.options.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"source {config.name!r}: {key} must be a string")
    return value.strip()


def _raw_pattern(config: SourceConfig) -> str:
    value = config.options.get("raw_markdown_url", DEFAULT_RAW_PATTERN)
    if value is False or value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"source {config.name!r}: raw_markdown_url must be a string or false")
    return value.strip()


def parse_settings(config: SourceConfig, state_dir: Path | None) -> MkDocsSettings:
    """Settings from a ``[[sources]]`` table of kind ``mkdocs`` (options hold the keys)."""
    where = f"source {config.name!r}"
    origin = _text(config, "origin", "").rstrip("/")
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{where}: origin must be an http(s) URL such as http://127.0.0.1:8000")
    raw_sites = config.options.get("sites", [])
    if not isinstance(raw_sites, list):
        raise ValueError(f"{where}: sites must be a list of site names")
    default = _text(config, "default_site", "").strip("/")
    if not default:
        default = next((s.strip().strip("/") for s in raw_sites if isinstance(s, str)), "")
    if not default:
        raise ValueError(f"{where}: default_site (or at least one entry in sites) is required")
    sites = dedupe_sites(default, raw_sites)
    for site in sites:
        if "/" in site or "#" in site:
            raise ValueError(f"{where}: site name {site!r} must not contain '/' or '#'")
    index_path = _text(config, "search_index_path", DEFAULT_INDEX_PATH) or DEFAULT_INDEX_PATH
    if not index_path.startswith("/"):
        index_path = "/" + index_path
    cache_hours = option_number(config, "cache_hours", 1.0)
    if cache_hours <= 0:
        cache_hours = 1.0
    cache_value = config.options.get("cache_dir")
    if cache_value is not None and not isinstance(cache_value, str):
        raise ValueError(f"{where}: cache_dir must be a path string")
    if cache_value:
        cache_dir = Path(cache_value).expanduser().resolve()
    elif state_dir is not None:
        cache_dir = Path(state_dir) / "remote" / sanitize_site(config.name)
    else:
        cache_dir = Path.home() / ".cache" / "scriptorium" / "remote" / sanitize_site(config.name)
    probe = config.options.get("probe_redirects", True)
    if not isinstance(probe, bool):
        raise ValueError(f"{where}: probe_redirects must be true or false")
    timeout = option_number(config, "timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
    if timeout <= 0:
        raise ValueError(f"{where}: timeout_seconds must be greater than 0")
    return MkDocsSettings(
        origin=origin,
        default_site=default,
        sites=sites,
        search_index_path=index_path,
        cache_dir=cache_dir,
        cache_file_template=_text(config, "cache_file_template", DEFAULT_CACHE_TEMPLATE)
        or DEFAULT_CACHE_TEMPLATE,
        cache_hours=cache_hours,
        raw_markdown_url=_raw_pattern(config),
        timeout_seconds=timeout,
        retry_cooldown_seconds=option_number(
            config, "retry_cooldown_seconds", DEFAULT_COOLDOWN_SECONDS, minimum=0
        ),
        page_cache_seconds=option_number(
            config, "page_cache_seconds", DEFAULT_PAGE_CACHE_SECONDS, minimum=0
        ),
        probe_redirects=probe,
    )
