"""A page of any static documentation site as Markdown: its main content and its own anchors.

Sites that are neither MkDocs nor Sphinx still share a shape: the content sits in ``<main>``,
``[role=main]`` or ``<article>``, around it are navigation, headers, footers and sidebars,
and a section's anchor is the heading's ``id``, an anchor inside it, or the id of the
``<section>`` it opens. The chrome is dropped before converting (so a sidebar's text is never
indexed), and every heading keeps the anchor the published page uses, written as ``{ #id }``
so section fragments of the published URLs resolve here too.
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import urljoin

from bs4 import BeautifulSoup

from scriptorium_plugins.mkdocs.pages import html_to_markdown

# Bumped whenever a page would convert differently: kept pages are then converted again even
# when the site answers 304.
CONVERTER_VERSION = 2
MAIN = (
    "main",
    "[role=main]",
    "article",
    "#main-content",
    "#content",
    ".content",
    ".document",
    "body",
)
CHROME = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "button",
    "form",
    "nav",
    "header",
    "footer",
    "aside",
    "a.headerlink",
    "[role=navigation]",
    "[role=banner]",
    "[role=contentinfo]",
    "[role=search]",
    ".sidebar",
    ".sphinxsidebar",
    ".related",
    ".breadcrumbs",
    ".toc",
    "#toc",
    ".navbar",
    ".footer",
    ".skip-link",
)
_HEADING = re.compile(r"^h[1-6]$")


def _promote_anchors(soup: BeautifulSoup) -> None:
    """Give each heading without an ``id`` the anchor the page links it by."""
    for heading in soup.find_all(_HEADING):
        if heading.get("id"):
            continue
        inner = heading.find(lambda tag: tag.get("id") or (tag.name == "a" and tag.get("name")))
        if inner is not None:
            heading["id"] = inner.get("id") or inner.get("name")
            continue
        parent = heading.parent
        if (
            parent is not None
            and parent.name in ("section", "div")
            and parent.get("id")
            and parent.find(_HEADING) is heading
        ):
            heading["id"] = parent["id"]


def _flatten_code(soup: BeautifulSoup) -> None:
    """Replace a code block's highlighting spans by their text: the Markdown is the same, and
    converting a highlighted page no longer walks one element per token."""
    for pre in soup.find_all("pre"):
        target = pre.find("code") or pre
        text = target.get_text()
        target.clear()
        target.append(text)


def page_markdown(html: str) -> tuple[str, str]:
    """(Markdown of the main content, the page title)."""
    soup = BeautifulSoup(html, "html.parser")
    _promote_anchors(soup)
    _flatten_code(soup)
    markdown, meta = html_to_markdown(soup, main_selectors=MAIN, chrome=CHROME)
    return markdown, str(meta.get("title", ""))


def page_links(html: str, page_url: str) -> list[str]:
    """Every ``<a href>`` of a page (navigation included: it is how pages are found),
    absolute and without fragments, in page order."""
    soup = BeautifulSoup(html, "html.parser")
    base_tag = soup.find("base", href=True)
    base = page_url
    if base_tag is not None:
        # A <base> no URL parser accepts leaves links resolving against the page.
        with contextlib.suppress(ValueError):
            base = urljoin(page_url, str(base_tag["href"]))
    links = []
    for anchor in soup.find_all("a", href=True):
        href = str(anchor["href"]).strip()
        if not href or href.startswith(("#", "mailto:", "javascript:", "tel:", "data:")):
            continue
        try:
            links.append(urljoin(base, href).split("#", 1)[0])
        except ValueError:  # an href no URL parser accepts
            continue
    return links
