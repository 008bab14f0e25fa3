"""The ``mkdocs`` source table: site names, cache paths and defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptorium.sources.base import SourceConfig
from scriptorium_plugins.mkdocs.settings import (
    cache_file_name,
    dedupe_sites,
    parse_settings,
    sanitize_site,
)


def config(**options) -> SourceConfig:
    base = {"origin": "http://127.0.0.1:8000", "default_site": "guide"}
    return SourceConfig(name="docs", kind="mkdocs", options={**base, **options})


def test_sites_are_deduplicated_case_insensitively_and_blanks_dropped() -> None:
    assert dedupe_sites("guide", ["Deploy-Notes", "", "  ", "deploy-notes", "GUIDE", "ref"]) == (
        "guide",
        "Deploy-Notes",
        "ref",
    )


def test_the_default_site_is_always_served_and_first() -> None:
    settings = parse_settings(config(sites=["ref", "deploy"]), None)
    assert settings.sites == ("guide", "ref", "deploy")
    settings = parse_settings(config(default_site="", sites=["ref", "deploy"]), None)
    assert settings.default_site == "ref"


def test_base_url_is_origin_slash_site() -> None:
    settings = parse_settings(config(origin="https://docs.example.org/"), None)
    assert settings.base_url("guide") == "https://docs.example.org/guide"
    assert settings.search_index_path == "/search/search_index.json"


@pytest.mark.parametrize(
    ("site", "expected"),
    [
        ("guide", "guide"),
        ('we<ird>:"na|me?*', "we-ird---na-me--"),
        ("back\\slash", "back-slash"),
        ("..", "--"),
        ("tab\there", "tab-here"),
    ],
)
def test_site_names_are_sanitised_for_file_names(site: str, expected: str) -> None:
    assert sanitize_site(site) == expected


def test_cache_file_template_substitutes_or_prepends_the_site() -> None:
    assert cache_file_name("{site}-search-index.json", "guide") == "guide-search-index.json"
    assert cache_file_name("docs-index.json", "guide") == "guide-docs-index.json"
    assert cache_file_name("idx-{site}.json", "a:b") == "idx-a-b.json"


def test_cache_path_defaults_under_the_state_directory(tmp_path: Path) -> None:
    settings = parse_settings(config(), tmp_path)
    assert settings.cache_path("guide") == tmp_path / "remote/docs/guide-search-index.json"
    explicit = parse_settings(config(cache_dir=str(tmp_path / "c")), tmp_path)
    assert explicit.cache_path("guide") == (tmp_path / "c/guide-search-index.json").resolve()


@pytest.mark.parametrize(("hours", "expected"), [(0, 1.0), (-3, 1.0), (0.5, 0.5), (24, 24.0)])
def test_cache_hours_of_zero_or_less_fall_back_to_one(hours: float, expected: float) -> None:
    assert parse_settings(config(cache_hours=hours), None).cache_hours == expected


def test_raw_markdown_url_can_be_disabled() -> None:
    assert parse_settings(config(), None).raw_markdown_url == "{base}/{path}.md"
    assert parse_settings(config(raw_markdown_url=False), None).raw_markdown_url == ""
    assert parse_settings(config(raw_markdown_url=""), None).raw_markdown_url == ""


def test_defaults() -> None:
    settings = parse_settings(config(), None)
    assert settings.retry_cooldown_seconds == 300
    assert settings.timeout_seconds == 10
    assert settings.cache_file_template == "{site}-search-index.json"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"origin": "ftp://x"}, "origin must be an http"),
        ({"origin": ""}, "origin must be an http"),
        ({"sites": "guide"}, "sites must be a list"),
        ({"default_site": "", "sites": []}, "default_site"),
        ({"sites": ["a#b"]}, "must not contain"),
        ({"cache_hours": "soon"}, "cache_hours must be a number"),
        ({"timeout_seconds": 0}, "timeout_seconds must be greater than 0"),
        ({"retry_cooldown_seconds": -1}, "retry_cooldown_seconds must be at least 0"),
        ({"raw_markdown_url": 3}, "raw_markdown_url must be a string or false"),
    ],
)
def test_bad_options_name_the_source_and_key(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as err:
        parse_settings(config(**options), None)
    assert "'docs'" in str(err.value)
