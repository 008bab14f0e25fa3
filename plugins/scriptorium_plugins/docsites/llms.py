"""The ``llms.txt`` convention: a Markdown index of a site's pages, or all of them in one file.

``llms.txt`` is Markdown: an H1 with the site's name, a quoted summary, then H2 sections of
links (``- [Title](url): notes``) to pages published as Markdown. ``llms-full.txt`` holds the
pages themselves, one after another, each opening with its own heading; it is cut back into
pages at its top heading level (H1, or H2 when the file has a single H1), outside code fences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin

_LINK = re.compile(r"\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SLUG_DROP = re.compile(r"[^\w\s-]")


@dataclass(frozen=True, slots=True)
class FullPage:
    slug: str
    title: str
    text: str


def linked_urls(text: str, base_url: str) -> list[str]:
    """The URLs ``llms.txt`` links to, absolute, without fragments, in order, once each."""
    seen: dict[str, None] = {}
    for _title, href in _LINK.findall(text):
        if href.startswith(("#", "mailto:")):
            continue
        seen.setdefault(urljoin(base_url, href).split("#", 1)[0], None)
    return list(seen)


def _slug(title: str) -> str:
    slug = _SLUG_DROP.sub("", title.lower()).strip()
    return re.sub(r"[\s_-]+", "-", slug) or "section"


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line number, level, title) of every heading outside fenced code."""
    found = []
    fence = ""
    for number, line in enumerate(lines):
        opening = _FENCE.match(line)
        if opening:
            marker = opening.group(1)
            if not fence:
                fence = marker[0] * len(marker)
            elif marker.startswith(fence):
                fence = ""
            continue
        if fence:
            continue
        match = _HEADING.match(line)
        if match:
            found.append((number, len(match.group(1)), match.group(2)))
    return found


def split_full(text: str) -> list[FullPage]:
    """``llms-full.txt`` cut into its pages; a file without headings is one page."""
    lines = text.splitlines()
    headings = _headings(lines)
    if not headings:
        return [FullPage("index", "", text)] if text.strip() else []
    top = min(level for _n, level, _t in headings)
    cuts = [h for h in headings if h[1] == top]
    if len(cuts) == 1 and any(level == top + 1 for _n, level, _t in headings):
        cuts = [h for h in headings if h[1] == top + 1]
    pages: list[FullPage] = []
    used: dict[str, int] = {}
    starts = [n for n, _l, _t in cuts]
    if starts[0] > 0 and "\n".join(lines[: starts[0]]).strip():
        pages.append(FullPage("index", "", "\n".join(lines[: starts[0]]) + "\n"))
        used["index"] = 1
    for position, (number, _level, title) in enumerate(cuts):
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        slug = _slug(title)
        used[slug] = used.get(slug, 0) + 1
        if used[slug] > 1:
            slug = f"{slug}-{used[slug]}"
        pages.append(FullPage(slug, title, "\n".join(lines[number:end]).strip() + "\n"))
    return pages
