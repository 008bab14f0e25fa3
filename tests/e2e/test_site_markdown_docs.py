"""react.dev and Vite pages (MDX components, containers, site heading ids) through a daemon."""

from __future__ import annotations

import shutil
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.calls import content
from tests.support.daemon import running
from tests.support.waiting import wait_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/site_markdown"


def search(stub, query: str) -> list[pb.SearchResult]:
    reply = stub.Search(pb.SearchRequest(query=query, kinds=[pb.CORPUS_DOCS]), timeout=30)
    return list(reply.results)


def test_site_pages_are_indexed_as_read_and_served_as_written(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(FIXTURES, site)
    with running([str(site), "--watch-interval", "0.2"], tmp_path / "state") as daemon:
        stub = daemon.stub
        hits = search(stub, "Create React App deprecated sunsetting")
        assert hits[0].location == "react.dev/learn/installation#should-i-use-create-react-app"
        assert "<Note>" not in hits[0].preview and "{/*" not in hits[0].preview
        # Components' tags are not indexed text: nothing matches the tag names alone.
        assert all("installation" not in h.location for h in search(stub, "Sandpack Intro"))

        page = content(stub, "react.dev/learn/installation")
        original = (FIXTURES / "react.dev/learn/installation.md").read_text("utf-8")
        # FULL keeps the file as written: front matter, components, heading ids.
        assert page.content.rstrip("\n") == original.rstrip("\n")
        section = content(stub, "react.dev/learn/installation#try-react")
        assert section.resolution.reason == "resolved"
        assert "<Sandpack>" in section.content
        assert content(stub, "react.dev/learn/installation.mdx").resolution.rule == "variant"

        # VitePress: its slug rule, and a ``::: tip`` read as its title and text.
        root = content(stub, "vite/guide#index-html-and-project-root")
        assert root.resolution.reason == "resolved"
        assert root.content.splitlines()[0] == "## `index.html` and Project Root"
        tip = search(stub, "pre-bundling only applies in development mode")
        assert tip[0].location == "vite/guide/dep-pre-bundling#the-why"
        assert ":::" not in tip[0].preview

        page_path = site / "vite/guide/dep-pre-bundling.md"
        page_path.write_text(
            page_path.read_text("utf-8")
            + "\n## Offline Caches {#offline}\n\n::: warning\nA wombat ate the cache.\n:::\n",
            "utf-8",
        )
        assert wait_for(
            lambda: (
                [h.location for h in search(stub, "wombat ate the cache")][:1]
                == ["vite/guide/dep-pre-bundling#offline"]
            )
        )
