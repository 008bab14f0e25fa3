"""Page content: raw-Markdown checks, HTML conversion, the served header and redirect stubs.

The HTML pages are rendered from FastAPI documentation pages with Python-Markdown (the renderer
MkDocs uses) inside the chrome a Material page has (header, navigation, permalinks, footer).
"""

from __future__ import annotations

from datetime import UTC, datetime

import markdown as python_markdown
import yaml

from scriptorium_plugins.mkdocs.pages import (
    CONVERTED_CONFIDENCE,
    has_content,
    html_to_markdown,
    looks_like_html,
    moved_from,
    redirect_in_html,
    split_front_matter,
    with_header,
)
from tests.support.daemon import CORPUS

DOCS = CORPUS / "docs/en/docs"


def material_page(path: str, *, head: str = "") -> str:
    body = python_markdown.markdown(
        (DOCS / path).read_text("utf-8"),
        extensions=["toc", "attr_list", "fenced_code"],
        extension_configs={"toc": {"permalink": "¶"}},
    )
    return f"""<!doctype html><html><head><title>Page - Site</title>{head}</head><body>
<header class="md-header"><nav>Site name <a href="/">Home</a></nav></header>
<div class="md-sidebar"><nav class="md-nav">Tutorial | First Steps | Path Parameters</nav></div>
<main><div class="md-content"><article class="md-content__inner md-typeset">
<a class="md-content__button" href="edit">Edit this page</a>
{body}
</article></div></main>
<footer class="md-footer">Made with Material</footer><script>var x = 1;</script>
</body></html>"""


def test_converted_html_keeps_the_article_and_drops_the_chrome(fastapi_corpus) -> None:
    markdown, meta = html_to_markdown(material_page("tutorial/cors.md"))
    assert markdown.startswith("# CORS")
    assert "## Origin { #origin }" in markdown
    assert "Edit this page" not in markdown
    assert "Made with Material" not in markdown
    assert "Tutorial | First Steps" not in markdown
    assert "¶" not in markdown and "var x" not in markdown
    assert "allow_origins" in markdown
    assert meta["title"] == "Page - Site"


def test_converted_headings_keep_the_site_anchor_even_when_it_differs() -> None:
    html = '<article><h2 id="custom-id">Some Title</h2><p>Body.</p></article>'
    markdown, _ = html_to_markdown(html)
    assert markdown.splitlines()[0] == "## Some Title { #custom-id }"


def test_moved_from_is_read_from_a_page_head(fastapi_corpus) -> None:
    page = material_page("advanced/settings.md", head='<meta name="moved_from" content="a/b, c">')
    _, meta = html_to_markdown(page)
    assert moved_from(meta) == ["a/b", "c"]
    assert moved_from({"moved_from": "x/y"}) == ["x/y"]
    assert moved_from({"moved_from": ["x", "", 3]}) == ["x", "3"]
    assert moved_from({}) == []


def test_html_served_as_markdown_is_recognised(fastapi_corpus) -> None:
    assert looks_like_html("<!DOCTYPE html><html>...", "text/plain")
    assert looks_like_html("  <html lang=en>", "")
    assert looks_like_html("# Title", "text/html; charset=utf-8")
    raw = (DOCS / "tutorial/cors.md").read_text("utf-8")
    assert not looks_like_html(raw, "text/markdown")


def test_front_matter_alone_is_no_content() -> None:
    assert not has_content("---\ntitle: x\n---\n\n  \n")
    assert not has_content("   \n")
    assert has_content("---\ntitle: x\n---\n# Heading\n")


def test_the_header_merges_with_the_page_front_matter() -> None:
    raw = "---\ntitle: Settings\nmoved_from: [old/settings]\nsite: not-ours\n---\n# Settings\n"
    served = with_header(
        raw,
        source_url="http://h/guide/advanced/settings.md",
        site="guide",
        retrieved=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        converted=False,
    )
    front, body = split_front_matter(served)
    assert front["source"] == "http://h/guide/advanced/settings.md"
    assert front["site"] == "guide"
    assert front["retrieved"] == "2026-01-02T03:04:05+00:00"
    assert front["title"] == "Settings" and front["moved_from"] == ["old/settings"]
    assert "converted_from" not in front
    assert body == "# Settings\n"
    assert served.count("---\n") == 2


def test_the_header_marks_converted_pages() -> None:
    served = with_header(
        "# Page\n",
        source_url="http://h/guide/page/",
        site="guide",
        retrieved=datetime(2026, 1, 1, tzinfo=UTC),
        converted=True,
    )
    front = yaml.safe_load(served.split("---\n")[1])
    assert front["converted_from"] == "html"
    assert front["parse_confidence"] == CONVERTED_CONFIDENCE < 1


def test_redirect_stubs_are_followed(fastapi_corpus) -> None:
    stub = (
        '<!doctype html><html><head><meta http-equiv="refresh" content="0; url=../../advanced/'
        'settings/"><link rel="canonical" href="../../advanced/settings/"></head></html>'
    )
    assert (
        redirect_in_html(stub, "http://h/guide/old/settings/")
        == "http://h/guide/advanced/settings/"
    )
    canonical_only = '<html><head><link rel="canonical" href="/guide/new/"></head></html>'
    assert redirect_in_html(canonical_only, "http://h/guide/old/") == "http://h/guide/new/"
    itself = '<html><head><link rel="canonical" href="http://h/guide/old/"></head></html>'
    assert redirect_in_html(itself, "http://h/guide/old/") is None
    assert redirect_in_html(material_page("tutorial/cors.md"), "http://h/guide/cors/") is None


def test_a_page_fetched_again_later_is_the_same_revision(tmp_path) -> None:
    """Its version leaves the retrieval time out: with ``page_cache_seconds = 0`` two fetches
    a second apart gave two doc_versions and the second a revision skew."""
    from scriptorium.domain.model import Corpus, DocMeta
    from scriptorium.plugins import load_registry
    from scriptorium.sources.base import SourceConfig, SourceContext
    from scriptorium.sources.remote import RemotePage
    from scriptorium_plugins.mkdocs.source import FetchedPage, MkDocsSource

    registry = load_registry()
    options = {"origin": "http://127.0.0.1:9", "default_site": "guide", "sites": ["guide"]}
    config = SourceConfig(
        name="docs", kind="mkdocs", options={**options, "cache_dir": str(tmp_path)}
    )
    source = MkDocsSource(config, SourceContext(extractors=registry.extractor_chain))
    indexed = RemotePage(
        "docs", "guide/https", "", Corpus.DOCS, "", DocMeta(title="HTTPS"), url="http://h/https/"
    )

    def served(second: int, markdown: str = "# HTTPS\n\nTLS termination proxy.\n"):
        at = datetime(2026, 1, 2, 3, 4, second, tzinfo=UTC)
        page = FetchedPage(markdown, "http://h/guide/https.md", False, at, [])
        return source._served_document("guide", indexed, page)

    first, again = served(5), served(6)
    assert first.text != again.text  # each says when it was retrieved
    assert first.content_hash == again.content_hash
    assert served(7, "# HTTPS\n\nChanged.\n").content_hash != first.content_hash
