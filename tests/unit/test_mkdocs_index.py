"""A published MkDocs search index, normalised into canonical pages and searchable sections.

The entries below follow what ``mkdocs build`` with the Material theme publishes (HTML in
``text``, sections as ``page/#anchor``, the home page as ``""``, ``boost`` only when front
matter sets ``search.boost``); their text comes from the FastAPI documentation.
"""

from __future__ import annotations

import json
import math

import pytest

from scriptorium.index.searcher import FieldWeights
from scriptorium.sources.remote import round_robin
from scriptorium.text import query_terms
from scriptorium_plugins.mkdocs.siteindex import (
    IndexFormatError,
    SiteIndex,
    clamp_boost,
    load_index_json,
    parse_pages,
    split_location,
    strip_html,
)
from tests.support.daemon import CORPUS

DOCS = CORPUS / "docs/en/docs"


def paragraph_html(path: str, limit: int = 3) -> str:
    """A few paragraphs of a corpus page wrapped the way the index stores them."""
    paragraphs = [
        p.strip()
        for p in (DOCS / path).read_text("utf-8").split("\n\n")
        if p.strip() and not p.lstrip().startswith(("#", "{", "/", "```", "<"))
    ]
    return " ".join(f"<p>{p}</p>" for p in paragraphs[:limit])


ORIGIN_HTML = (
    "<p>An origin is the combination of protocol (<code>http</code>, <code>https</code>),"
    " domain and port.</p>"
)
HTTPS_HTML = "<p>HTTPS is provided by a <strong>TLS Termination Proxy</strong>.</p>"
IMAGE_HTML = "<pre><code>$ docker build -t myimage .\n$ docker run -d myimage\n</code></pre>"


def entry(location: str, title: str, text: str, boost=None) -> dict:
    out = {"location": location, "title": title, "text": text}
    if boost is not None:
        out["boost"] = boost
    return out


def entries() -> list[dict]:
    return [
        entry("", "FastAPI", paragraph_html("index.md")),
        entry("#requirements", "Requirements", "<ul><li>Starlette</li></ul>"),
        entry("tutorial/cors/", "CORS", paragraph_html("tutorial/cors.md")),
        entry("tutorial/cors/#origin", "Origin", ORIGIN_HTML),
        entry("tutorial/cors/#origin", "Origin again", "<p>ignored</p>"),
        entry("tutorial/cors/", "CORS (second)", "<p>ignored</p>"),
        entry(
            "deployment/concepts/",
            "Deployments Concepts",
            paragraph_html("deployment/concepts.md"),
            3,
        ),
        entry("deployment/concepts/#security-https", "Security - HTTPS", HTTPS_HTML, 3),
        entry("deployment/docker/#build-the-image", "Build the image", IMAGE_HTML, "nan"),
        entry(
            "deployment/docker/",
            "FastAPI in Containers - Docker",
            paragraph_html("deployment/docker.md"),
            0.5,
        ),
        entry("tutorial/index.html", "Tutorial - User Guide", "<p>step by step</p>", -2),
    ]


def test_html_is_stripped_to_lines_of_text() -> None:
    text = strip_html(
        "<p>First <code>main.py</code> &amp; friends</p>  <ul><li>one</li><li>two</li></ul>"
        "<pre><code>a = 1\n  b = 2\n</code></pre><script>alert(1)</script>"
    )
    assert text.split("\n") == ["First main.py & friends", "one", "two", "a = 1", "  b = 2"]
    assert strip_html("plain text\n\n\nstays") == "plain text\nstays"


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("", ("", "", "")),
        ("#requirements", ("", "", "requirements")),
        ("tutorial/cors/", ("tutorial/cors", "tutorial/cors/", "")),
        ("tutorial/cors/#origin", ("tutorial/cors", "tutorial/cors/", "origin")),
        ("tutorial/index.html", ("tutorial", "tutorial/index.html", "")),
        ("about/team.html#x", ("about/team", "about/team.html", "x")),
        ("index.html", ("", "index.html", "")),
    ],
)
def test_locations_split_into_page_href_and_anchor(location: str, expected) -> None:
    assert split_location(location) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 1.0), (2, 2.0), ("0.5", 0.5), (-1, 0.0), ("nan", 0.0), (math.inf, 0.0), ("x", 1.0)],
)
def test_boost_is_clamped(value, expected: float) -> None:
    assert clamp_boost(value) == expected


def test_anchors_fold_onto_their_page_and_the_first_entry_wins(fastapi_corpus) -> None:
    pages = parse_pages(entries())
    assert list(pages) == [
        "",
        "tutorial/cors",
        "deployment/concepts",
        "deployment/docker",
        "tutorial",
    ]
    cors = pages["tutorial/cors"]
    assert cors.title == "CORS"
    assert "cross-origin" in cors.text.lower() or "cors" in cors.text.lower()
    assert [s.anchor for s in cors.sections] == ["origin"]
    assert cors.sections[0].text.startswith("An origin is the combination of protocol (http")
    home = pages[""]
    assert home.title == "FastAPI" and [s.title for s in home.sections] == ["Requirements"]


def test_a_page_first_seen_through_an_anchor_takes_its_later_page_entry(fastapi_corpus) -> None:
    docker = parse_pages(entries())["deployment/docker"]
    assert docker.title == "FastAPI in Containers - Docker"
    assert docker.sections[0].anchor == "build-the-image"
    assert "docker build -t myimage ." in docker.sections[0].text
    # Boost comes from the first entry for the page (NaN → 0).
    assert docker.boost == 0.0


def test_boosts_per_page(fastapi_corpus) -> None:
    pages = parse_pages(entries())
    assert pages["deployment/concepts"].boost == 3.0
    assert pages["tutorial"].boost == 0.0
    assert pages["tutorial/cors"].boost == 1.0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{not json", "malformed"),
        (b'{"config": {}}', "malformed"),
        (b'{"docs": []}', "empty"),
        (b'{"docs": [{"title": "no location"}]}', "empty"),
        (b"[1, 2]", "malformed"),
    ],
)
def test_unusable_indexes_are_refused(raw: bytes, message: str) -> None:
    with pytest.raises(IndexFormatError, match=message):
        load_index_json(raw)


def site(name: str = "guide", items: list[dict] | None = None) -> SiteIndex:
    raw = json.dumps({"config": {}, "docs": items or entries()})
    return SiteIndex(
        source="docs",
        site=name,
        base_url=f"http://127.0.0.1:9/{name}",
        pages=parse_pages(load_index_json(raw)),
        revision="r1",
        qualify=lambda s, p: (p or "index") if s == "guide" else (f"{s}/{p}" if p else s),
    )


def test_each_page_is_a_document_with_a_block_per_section(fastapi_corpus) -> None:
    index = site()
    doc = index.documents["tutorial/cors"]
    assert doc.path == "guide/tutorial/cors"
    assert doc.url == "http://127.0.0.1:9/guide/tutorial/cors/"
    assert doc.location == "tutorial/cors"
    assert [b.anchor for b in doc.blocks] == ["", "origin"]
    lines = doc.text.split("\n")
    section = doc.blocks[1]
    assert lines[section.start_line - 1] == "## Origin"
    assert section.section_path == ("CORS", "Origin")
    assert doc.blocks[0].end_line == len(lines)
    assert index.page_count == 5 and index.section_count == 4


def test_search_scores_sections_and_multiplies_the_page_boost(fastapi_corpus) -> None:
    index = site()
    hits = index.search(query_terms("TLS termination proxy"), FieldWeights(), 10)
    assert hits and hits[0].block.anchor == "security-https"
    top = hits[0]
    bm25 = next(r.weight for r in top.reasons if r.name == "bm25")
    assert top.score == pytest.approx(bm25 * 3, rel=1e-3)
    assert any(r.name == "page-boost" and r.weight == 3.0 for r in top.reasons)
    zero = index.search(query_terms("docker build myimage"), FieldWeights(), 10)
    assert zero and all(c.score == 0.0 for c in zero)


def test_wildcard_listing_excludes_anchors_and_round_robins_sites(fastapi_corpus) -> None:
    guide = site("guide")
    other = site(
        "deploy-notes",
        [
            {"location": "", "title": "Deploy", "text": "<p>deploy</p>"},
            {"location": "#x", "title": "X", "text": "<p>x</p>"},
            {"location": "https/", "title": "HTTPS", "text": "<p>https</p>"},
        ],
    )
    listing = guide.listing()
    assert [c.document.location for c in listing] == [
        "index",
        "tutorial/cors",
        "deployment/concepts",
        "deployment/docker",
        "tutorial",
    ]
    assert all(c.block.anchor == "" for c in listing)
    mixed = round_robin([guide.listing(), other.listing()])
    assert [c.document.location for c in mixed][:5] == [
        "index",
        "deploy-notes",
        "tutorial/cors",
        "deploy-notes/https",
        "deployment/concepts",
    ]
    assert len(mixed) == 7
