"""The pure parts of the ``site`` and ``llms_txt`` kinds: scope, file names, llms files,
HTML conversion and the crawl's sentence (the crawls themselves: tests/e2e/test_doc_sites.py)."""

from __future__ import annotations

import pytest

from scriptorium_plugins.docsites import fetching
from scriptorium_plugins.docsites.convert import page_links, page_markdown
from scriptorium_plugins.docsites.crawl import SiteCrawl, mirror_path, normalize, scope_for
from scriptorium_plugins.docsites.fetching import Fetched, FetchFailed, PageCache, PoliteClient
from scriptorium_plugins.docsites.llms import linked_urls, split_full
from scriptorium_plugins.docsites.tally import CrawlTally
from tests.support.docsite import serving


def test_scope_keeps_to_the_start_folder_and_the_patterns() -> None:
    scope = scope_for("https://Docs.Example.org/guide/start.html", False, (), ("*/print.html",))
    assert scope.prefix == "/guide/"
    assert scope.reason_to_skip("https://docs.example.org/guide/a/b.html") is None
    assert scope.reason_to_skip("https://docs.example.org/guide") is None
    assert scope.reason_to_skip("https://docs.example.org/blog/") == "out of scope"
    assert scope.reason_to_skip("https://other.example.org/guide/") == "out of scope"
    assert scope.reason_to_skip("http://docs.example.org/guide/") == "out of scope"
    assert scope.reason_to_skip("https://docs.example.org/guide/?page=2") == "out of scope"
    assert scope.reason_to_skip("https://docs.example.org/guide/print.html") == "excluded"
    included = scope_for("https://docs.example.org/", True, ("/api/*",))
    assert included.reason_to_skip("https://docs.example.org/api/x.html") is None
    assert included.reason_to_skip("https://docs.example.org/guide/x.html") == "excluded"


def test_urls_are_normalised_and_kept_inside_the_mirror() -> None:
    assert normalize("HTTPS://Docs.Example.org/guide/index.html#top") == (
        "https://docs.example.org/guide/"
    )
    assert mirror_path("https://d.org/guide/user/quickstart.html", "/guide/") == (
        "user/quickstart.md"
    )
    assert mirror_path("https://d.org/guide/", "/guide/") == "index.md"
    assert mirror_path("https://d.org/guide/api/", "/guide/") == "api/index.md"
    assert mirror_path("https://d.org/docs/setup.md", "/") == "docs/setup.md"
    assert mirror_path("https://d.org/a%20b/c:d.html", "/") == "a_b/c_d.md"
    assert mirror_path("https://d.org/a/..%2f..%2fetc/passwd", "/") is None


def test_llms_txt_links_resolve_against_the_file() -> None:
    text = (
        "# Site\n\n> Summary\n\n## Docs\n\n- [A](/docs/a.md): first\n- [B](b.md)\n"
        "- [A again](/docs/a.md#part)\n- [Mail](mailto:x@y.z)\n"
    )
    assert linked_urls(text, "https://s.org/llms.txt") == [
        "https://s.org/docs/a.md",
        "https://s.org/b.md",
    ]


def test_llms_full_is_cut_at_its_top_headings_outside_code() -> None:
    text = (
        "Preamble line.\n# Install\nrun it\n```bash\n# not a heading\n```\n"
        "# Configure\n## Timeout\nthirty\n# Install\nagain\n"
    )
    pages = split_full(text)
    assert [p.slug for p in pages] == ["index", "install", "configure", "install-2"]
    assert "# not a heading" in pages[1].text and "## Timeout" in pages[2].text
    single = split_full("# Lantern\nintro\n## Quickstart\nq\n## Deploy\nd\n")
    assert [p.slug for p in single] == ["index", "quickstart", "deploy"]
    assert split_full("   \n") == []


def test_html_keeps_main_content_anchors_and_code_languages() -> None:
    html = """<html><head><title>Guide — Site</title></head><body>
    <header>Site header</header><nav><a href="/x.html">Menu entry</a></nav>
    <div class="sphinxsidebar">Quick search</div>
    <main><section id="install"><h2>Install</h2>
      <div class="highlight-bash notranslate"><div class="highlight">
      <pre>$ pip install lantern</pre></div></div>
      <pre><code class="language-python">import lantern</code></pre>
      <div class="highlight-default"><div class="highlight"><pre>plain()</pre></div></div>
      <h3><a id="opts"></a>Options</h3>
      <table><tr><th>key</th><th>default</th></tr><tr><td>timeout</td><td>30</td></tr></table>
    </section></main><footer>Copyright footer</footer></body></html>"""
    markdown, title = page_markdown(html)
    assert title == "Guide — Site"
    assert "## Install { #install }" in markdown and "### Options { #opts }" in markdown
    assert "```bash\n$ pip install lantern" in markdown
    assert "```python\nimport lantern" in markdown
    assert "```\nplain()" in markdown  # highlight-default names no language
    assert "| timeout | 30 |" in markdown
    for chrome in ("Site header", "Menu entry", "Quick search", "Copyright footer"):
        assert chrome not in markdown
    assert page_links(html, "https://s.org/guide/page.html") == ["https://s.org/x.html"]
    broken = '<base href="http://[::1"><a href="http://[::1/x">bad</a><a href="y.html">ok</a>'
    assert page_links(broken, "https://s.org/a/") == ["https://s.org/a/y.html"]


def test_a_crawl_that_lost_pages_says_partial_with_the_counts() -> None:
    tally = CrawlTally("https://s.org/")
    assert tally.state == "failed"
    tally.got(unchanged=False)
    tally.got(unchanged=True)
    tally.skip("robots")
    assert tally.state == "complete"
    tally.fail("https://s.org/a", 403, "HTTP 403")
    tally.fail("https://s.org/b", 0, "timed out")
    assert tally.state == "partial"
    assert tally.detail() == (
        "partial: 1 pages fetched, 1 unchanged (304), 2 failed (HTTP 403 ×1, timed out ×1),"
        " 1 skipped (1 robots)"
    )
    bounded = CrawlTally("https://s.org/")
    bounded.got(unchanged=False)
    bounded.skip("over the bound")
    assert bounded.state == "partial"


def test_a_page_is_decoded_by_its_charset() -> None:
    body = "Café crème".encode("latin-1")
    assert Fetched("u", body, "text/html; charset=ISO-8859-1", False).text == "Café crème"
    assert Fetched("u", "Café".encode(), "text/html", False).text == "Café"
    assert Fetched("u", b"ok", "text/html; charset=no-such-codec", False).text == "ok"


def test_a_page_past_the_size_bound_fails_without_being_held(tmp_path, monkeypatch) -> None:
    root = tmp_path / "www"
    root.mkdir()
    (root / "big.html").write_text("<p>" + "x" * 5000 + "</p>")
    (root / "small.html").write_text("<p>small</p>")
    monkeypatch.setattr(fetching, "MAX_PAGE_BYTES", 4096)
    with serving(root) as server:
        client = PoliteClient(PageCache(tmp_path / "cache"), 10.0, 0.0)
        try:
            assert client.get(f"{server.url}/small.html").text == "<p>small</p>"
            with pytest.raises(FetchFailed) as failed:
                client.get(f"{server.url}/big.html")
        finally:
            client.close()
    assert (failed.value.status, failed.value.error) == (200, "larger than 4096 bytes")


def test_a_crawl_past_its_time_budget_fetches_nothing_more(tmp_path) -> None:
    root = tmp_path / "www"
    root.mkdir()
    (root / "index.html").write_text("<main><h1>Home</h1></main>")
    with serving(root) as server:
        client = PoliteClient(PageCache(tmp_path / "cache"), 10.0, 0.0)
        tally = CrawlTally(server.url)
        crawl = SiteCrawl(
            client,
            scope_for(server.url + "/", False),
            tally,
            max_pages=10,
            max_depth=3,
            use_sitemap=False,
            deadline=0.0,  # already past
        )
        try:
            crawl.run([server.url + "/"], lambda url, html, unchanged: None)
        finally:
            client.close()
    assert tally.skipped == {"over the bound": 1} and tally.state == "failed"
    assert server.statuses("/") == []


def test_a_redirect_to_a_page_already_seen_is_not_counted_twice(tmp_path) -> None:
    root = tmp_path / "www"
    (root / "guide").mkdir(parents=True)
    (root / "index.html").write_text("<main><a href='/guide'>a</a><a href='/guide/'>b</a></main>")
    (root / "guide/index.html").write_text("<main><h1>Guide</h1><a href='/'>home</a></main>")
    stored: list[str] = []
    with serving(root) as server:
        client = PoliteClient(PageCache(tmp_path / "cache"), 10.0, 0.0)
        tally = CrawlTally(server.url)
        crawl = SiteCrawl(
            client,
            scope_for(server.url + "/", False),
            tally,
            max_pages=10,
            max_depth=3,
            use_sitemap=False,
        )
        try:
            crawl.run([server.url + "/"], lambda url, html, unchanged: stored.append(url))
        finally:
            client.close()
    # /guide answers 301 to /guide/ (http.server's folder redirect): one page, fetched once.
    assert stored == [server.url + "/", server.url + "/guide/"]
    assert (tally.fetched, dict(tally.skipped), tally.failures) == (2, {}, [])
