"""MCP's ``Library`` field: a dependency's result, and a page of its published docs."""

from __future__ import annotations

from scriptorium.mcp.shapes import library_label
from scriptorium.v1 import retrieval_pb2 as pb


def test_a_docs_page_says_its_docs_version_beside_the_installed_one() -> None:
    code = pb.SearchResult(library="httpx", library_version="0.28.1")
    assert library_label(code) == "httpx@0.28.1"
    page = pb.SearchResult(library="httpx", library_version="0.28.1", docs_version="0.28")
    assert library_label(page) == "httpx@0.28.1, docs 0.28"
    latest = pb.SearchResult(library="httpx", library_version="0.28.1", docs_version="latest")
    assert library_label(latest) == "httpx@0.28.1, docs latest"
    assert library_label(pb.SearchResult()) is None
