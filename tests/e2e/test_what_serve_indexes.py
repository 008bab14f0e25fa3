"""What a bare ``serve PATH`` indexes: a folder's name never hides it (a Docusaurus or Hugo
tree keeps its pages in ``site/``); ``.gitignore`` and the markers of generated output decide
(a built MkDocs site, a Sphinx ``_build/``), and ListSources, ``scriptorium sources`` and the
MCP ``list_sources`` tool say how many files each rule left out.

A real daemon over a tree written here, reached by the stubs, the CLI and the MCP bridge.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon, running
from tests.support.trees import write_tree

TREE = {
    # Sources in folders named like output: indexed.
    "site/docs/widgets.mdx": "# Widgets\n\nThe widget gallery explains frobnication.\n",
    "vendor/notes.md": "# Vendor notes\n\nHow the vendored parser handles frobnication.\n",
    "build/tools.py": "def frobnicate_build():\n    return 1\n",
    # A built MkDocs site: sitemap.xml, index.html and search/search_index.json.
    "docs-site/index.html": "<html><body>frobnication</body></html>\n",
    "docs-site/sitemap.xml": "<urlset/>\n",
    "docs-site/search/search_index.json": '{"docs": []}\n',
    "docs-site/copy.md": "# Copy\n\nA built copy of frobnication.\n",
    # A Sphinx build.
    "manual/_build/html/.buildinfo": "# Sphinx build info\n",
    "manual/_build/html/_sources/intro.md": "# Intro\n\nfrobnication, built\n",
    "manual/intro.md": "# Intro\n\nThe manual's frobnication intro.\n",
    # Ignored by .gitignore: a folder and a file.
    ".gitignore": "out/\nscratch.md\n",
    "out/a.md": "# A\n\nfrobnication out\n",
    "out/b.md": "# B\n\nfrobnication out\n",
    "scratch.md": "# Scratch\n\nfrobnication scratch\n",
    # Installed dependencies: built-in.
    "node_modules/lib/readme.md": "# Lib\n\nfrobnication dependency\n",
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("serve-indexes") / "repo", TREE)


@pytest.fixture(scope="module")
def daemon(tree: Path) -> Iterator[Daemon]:
    with running([str(tree), "--no-watch"], tree.parent / "state") as served:
        yield served


def paths(daemon: Daemon, query: str, kinds: str = "") -> set[str]:
    request = pb.SearchRequest(query=query, top_k=25)
    if kinds:
        request.kinds.append(pb.REF_KIND_DOC if kinds == "docs" else pb.REF_KIND_CODE)
    reply = daemon.stub.Search(request, timeout=30)
    return {r.location.split("#")[0] for r in reply.results}


def test_pages_under_folders_named_like_output_are_indexed(daemon):
    found = paths(daemon, "frobnication")
    assert "site/docs/widgets" in found
    assert "vendor/notes" in found
    assert "manual/intro" in found
    assert "build/tools.py" in {p.split("#")[0] for p in paths(daemon, "frobnicate_build")}


def test_generated_output_ignored_and_dependency_files_are_not(daemon):
    found = paths(daemon, "frobnication")
    for left_out in ("docs-site/", "manual/_build/", "out/", "scratch", "node_modules/"):
        assert not any(p.startswith(left_out) for p in found), (left_out, found)


def test_list_sources_counts_the_files_each_rule_left_out(daemon):
    reply = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=30)
    docs = next(s for s in reply.sources if s.name == "docs")
    skipped = {c.rule: c.files for c in docs.skipped}
    # Markdown files only: the docs source would have indexed these.
    assert skipped == {"gitignore": 3, "generated": 2, "built-in": 1}, skipped


def test_the_cli_and_mcp_show_the_skipped_counts(daemon):
    done = subprocess.run(
        [sys.executable, "-m", "scriptorium", "sources", "--target", daemon.address],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "docs: skipped 3 by gitignore, 2 by generated, 1 by built-in" in done.stdout

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def listed() -> dict:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "scriptorium", "mcp", "--target", daemon.address],
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("list_sources", {})
            return json.loads(result.content[0].text)

    sources = asyncio.run(asyncio.wait_for(listed(), 120))["sources"]
    docs = next(s for s in sources if s["name"] == "docs")
    assert docs["skipped"] == {"gitignore": 3, "generated": 2, "built-in": 1}
