"""Reading a published Sphinx site's files: searchindex.js, objects.inv, HTML pages."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from scriptorium_plugins.sphinxsite.site import (
    SiteFormatError,
    html_page_markdown,
    parse_inventory,
    parse_searchindex,
)

BUILT = Path(__file__).resolve().parents[1] / "fixtures/sphinx_site/html"


def test_the_real_build_lists_its_pages_and_objects() -> None:
    pages = parse_searchindex((BUILT / "searchindex.js").read_text("utf-8"))
    by_name = {p.docname: p for p in pages}
    assert by_name["usage/quickstart"].filename == "usage/quickstart.rst"
    assert by_name["usage/quickstart"].title == "Getting started"
    objects = parse_inventory((BUILT / "objects.inv").read_bytes())
    assert ("enumerate", "enumerate") in objects["usage/quickstart"]


def test_html_pages_keep_their_section_ids() -> None:
    markdown = html_page_markdown((BUILT / "support.html").read_text("utf-8"))
    assert "{ #get-support }" in markdown
    assert "¶" not in markdown


def test_docnames_that_would_leave_the_mirror_are_dropped() -> None:
    names = ["ok/page", "../escape", "/etc/passwd", "a//b", "a/./b", "~root", "c\\\\d", 7, ""]
    index = "Search.setIndex(" + json.dumps({"docnames": names, "titles": []}) + ")"
    assert [p.docname for p in parse_searchindex(index)] == ["ok/page"]


@pytest.mark.parametrize(
    "raw",
    [b"not an inventory", b"# Sphinx inventory version 2\n#\n#\n#\nnot zlib"],
)
def test_broken_inventories_are_refused(raw: bytes) -> None:
    with pytest.raises(SiteFormatError):
        parse_inventory(raw)


def test_broken_search_indexes_are_refused() -> None:
    for text in ("Search.setIndex({broken", "[]", '{"titles": []}'):
        with pytest.raises(SiteFormatError):
            parse_searchindex(text)
    body = zlib.compress(b"name py:function 1 api.html#$ -\n")
    inventory = b"# Sphinx inventory version 2\n# Project: x\n# Version: 1\n# z\n" + body
    assert parse_inventory(inventory) == {"api": [("name", "name")]}


def _build_source(cache: str, url: str) -> None:
    """Builds a sphinx source the way a build helper does (in a spawned child process)."""
    from scriptorium.blocks.extractors import ExtractorChain
    from scriptorium.sources.base import SourceConfig, SourceContext
    from scriptorium_plugins.sphinxsite.source import SphinxSiteSource

    options = {"url": url, "cache_dir": cache, "refresh_hours": 0}
    config = SourceConfig("site", "sphinx", None, options=options)
    SphinxSiteSource(config, SourceContext(ExtractorChain([])))


def test_only_the_daemon_fetches_a_site_never_its_build_helpers(tmp_path: Path) -> None:
    import multiprocessing
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    requests: list[str] = []

    class Counting(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            requests.append(self.path)

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Counting, directory=str(BUILT)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        child = multiprocessing.get_context("spawn").Process(
            target=_build_source, args=(str(tmp_path / "helper"), url)
        )
        child.start()
        child.join(120)
        assert child.exitcode == 0
        assert requests == []
        _build_source(str(tmp_path / "daemon"), url)
        assert "/searchindex.js" in requests
        assert (tmp_path / "daemon/usage/quickstart.rst").is_file()
    finally:
        server.shutdown()
        server.server_close()
