"""Page content: raw Markdown checks, HTML-to-Markdown conversion, headers and redirects.

A published page is served as its raw Markdown when the site publishes it; otherwise its HTML
is converted (main content only, without navigation chrome). Every served page starts with a
small YAML header saying where and when it came from, merged with the page's own front matter.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import urljoin

import yaml
from bs4 import BeautifulSoup
from markdownify import ATX, MarkdownConverter

# The parse confidence of a page rebuilt from HTML rather than read from its source.
CONVERTED_CONFIDENCE = 0.8
_HTML_START = re.compile(r"^\s*(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])", re.I)
_FRONT = re.compile(r"^---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|$)", re.S)
_REFRESH_URL = re.compile(r"url\s*=\s*['\"]?([^'\";]+)", re.I)
# Chrome that is never page content: navigation, headers, permalinks, buttons.
_CHROME = (
    "script",
    "style",
    "nav",
    "header",
    "footer",
    "form",
    "a.headerlink",
    ".md-source-file",
    ".md-content__button",
    ".md-sidebar",
    ".md-header",
    ".md-footer",
    ".md-tabs",
    "[role=navigation]",
)
_MAIN = ("article", "main", "[role=main]", ".md-content", ".rst-content", "body")


def looks_like_html(text: str, content_type: str = "") -> bool:
    """Whether a "raw Markdown" response is really an HTML page (an error or fallback page)."""
    if "html" in content_type.lower():
        return True
    return bool(_HTML_START.match(text[:512]))


def has_content(text: str) -> bool:
    """Whether a page holds anything besides front matter and whitespace."""
    match = _FRONT.match(text)
    body = text[match.end() :] if match else text
    return bool(body.strip())


_LANGUAGE_CLASS = re.compile(r"^(?:language|lang|highlight)-([\w+#.-]+)$")
# Class suffixes that name no language (Sphinx's project default, plain text).
_NO_LANGUAGE = frozenset({"default", "none", "text", "plain", "notranslate", "source"})


def code_language(el: Any) -> str:
    """A code block's language, from the classes renderers put on it or on its wrappers
    (``language-python``, ``lang-go``, Sphinx's ``highlight-bash``); empty when none says."""
    nodes = [el, el.find("code") if hasattr(el, "find") else None]
    parent = el.parent
    for _ in range(2):  # Sphinx: div.highlight-bash > div.highlight > pre
        if parent is None:
            break
        nodes.append(parent)
        parent = parent.parent
    for node in nodes:
        classes = node.get("class") if node is not None and hasattr(node, "get") else None
        for name in classes or ():
            match = _LANGUAGE_CLASS.match(name)
            if match and match.group(1).lower() not in _NO_LANGUAGE:
                return match.group(1).lower()
    return ""


class _Converter(MarkdownConverter):
    """Markdownify with ATX headings that keep the site's anchor ids (``{ #id }``)."""

    def convert_hN(self, n, el, text, parent_tags):
        out = super().convert_hN(n, el, text, parent_tags)
        anchor = el.get("id") if hasattr(el, "get") else None
        if not anchor or "_inline" in parent_tags:
            return out
        stripped = out.rstrip("\n")
        return f"{stripped} {{ #{anchor} }}" + out[len(stripped) :]


def page_meta(soup: BeautifulSoup) -> dict[str, Any]:
    """Front-matter-like facts an HTML page carries in its head (title, moved_from)."""
    meta: dict[str, Any] = {}
    if soup.title and soup.title.string:
        meta["title"] = soup.title.string.strip()
    moved = soup.find("meta", attrs={"name": "moved_from"})
    if moved is not None and moved.get("content"):
        meta["moved_from"] = [p.strip() for p in str(moved["content"]).split(",") if p.strip()]
    return meta


def html_to_markdown(
    html: str | BeautifulSoup,
    *,
    main_selectors: tuple[str, ...] = _MAIN,
    chrome: tuple[str, ...] = _CHROME,
) -> tuple[str, dict[str, Any]]:
    """The main content of a published page as Markdown, plus facts from its head.

    The first of ``main_selectors`` that matches is the content; ``chrome`` is removed from it.
    """
    soup = html if isinstance(html, BeautifulSoup) else BeautifulSoup(html, "html.parser")
    meta = page_meta(soup)
    main = next(
        (found for sel in main_selectors if (found := soup.select_one(sel)) is not None), soup
    )
    for selector in chrome:
        for node in main.select(selector):
            node.decompose()
    converter = _Converter(
        heading_style=ATX,
        bullets="-",
        escape_underscores=False,
        code_language_callback=code_language,
    )
    markdown = converter.convert_soup(main)
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    return markdown + "\n" if markdown else "", meta


def redirect_in_html(html: str, page_url: str) -> str | None:
    """Where a redirect stub sends the reader (meta refresh, else a canonical link elsewhere)."""
    soup = BeautifulSoup(html[:20000], "html.parser")
    refresh = soup.find("meta", attrs={"http-equiv": re.compile("^refresh$", re.I)})
    if refresh is not None and refresh.get("content"):
        match = _REFRESH_URL.search(str(refresh["content"]))
        if match:
            return urljoin(page_url, match.group(1).strip())
    canonical = soup.find("link", attrs={"rel": "canonical"})
    if canonical is not None and canonical.get("href"):
        target = urljoin(page_url, str(canonical["href"]))
        if target.rstrip("/") != page_url.rstrip("/"):
            return target
    return None


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter mapping, body); a broken or absent block leaves the text whole."""
    match = _FRONT.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}, text
    if not isinstance(data, dict):
        return {}, text
    return data, text[match.end() :]


def with_header(
    markdown: str,
    *,
    source_url: str,
    site: str,
    retrieved: datetime | None,
    converted: bool,
    extra: dict[str, Any] | None = None,
) -> str:
    """The page prefixed with one YAML header: where it came from, then its own front matter.

    ``retrieved=None`` leaves the retrieval time out: the text a page's version is taken
    from, so that fetching an unchanged page again does not make it a new revision.
    """
    own, body = split_front_matter(markdown)
    header: dict[str, Any] = {"source": source_url, "site": site}
    if retrieved is not None:
        header["retrieved"] = retrieved.isoformat(timespec="seconds")
    if converted:
        header["converted_from"] = "html"
        header["parse_confidence"] = CONVERTED_CONFIDENCE
    for key, value in {**(extra or {}), **own}.items():
        header.setdefault(str(key), value)
    dumped = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{dumped}---\n{body.lstrip(chr(10))}"


def moved_from(front: dict[str, Any]) -> list[str]:
    """Old paths a page declares in ``moved_from`` (a string or a list)."""
    value = front.get("moved_from")
    values = value if isinstance(value, list) else [value]
    return [str(v).strip() for v in values if isinstance(v, str | int) and str(v).strip()]
