"""A documentation page's lines by location (``page#L10-L20``) through a real daemon: what a
search result's ``start_line``..``end_line`` names comes back exactly, a section whose anchor
reads like a line range is still the section, and bad ranges are refused as code's are."""

from __future__ import annotations

import grpc
import pytest

from scriptorium.domain.refs import decode_ref
from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import markdown_config, write_tree

GUIDE = """# Guide

An introduction to the tool.

## Install

Run the installer, then restart the shell.

### From source

Clone the repository and build it with make.

## L2

A section whose heading reads like a line anchor.

## Retries

Failed calls are retried three times, waiting longer each time.
"""


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("doc-lines")
    docs = write_tree(root / "docs", {"guide.md": GUIDE})
    config = markdown_config(root / "config.toml", {"docs": docs})
    with running(["--config", str(config)], root / "state") as running_daemon:
        yield running_daemon


def fetch(daemon, location: str, mode=pb.CONTENT_MODE_SNIPPET) -> pb.GetContentResponse:
    request = pb.GetContentRequest(location=location, mode=mode)
    return daemon.stub.GetContent(request, timeout=30)


def failure(daemon, location: str) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        fetch(daemon, location)
    return caught.value


def test_a_search_results_lines_come_back_exactly(daemon):
    lines = GUIDE.splitlines()
    reply = daemon.stub.Search(pb.SearchRequest(query="retried three times"), timeout=30)
    top = reply.results[0]
    assert top.location == "guide#retries"
    got = fetch(daemon, f"guide.md#L{top.start_line}-L{top.end_line}")
    assert got.content == "\n".join(lines[top.start_line - 1 : top.end_line])
    assert (got.start_line, got.end_line) == (top.start_line, top.end_line)
    assert got.scope == "lines" and got.location == f"guide#L{top.start_line}-L{top.end_line}"
    assert got.resolution.reason == "resolved" and got.resolution.detail == ""
    # Labelled, linked and referenced by the section that holds the first line.
    inside = fetch(daemon, "guide#L9-L11")
    assert inside.content == "\n".join(lines[8:11])
    assert inside.section_path == ["Guide", "Install", "From source"]
    assert inside.url.endswith("#from-source")
    assert decode_ref(inside.ref_id).anchor == "from-source"
    assert fetch(daemon, "guide#L3").content == "An introduction to the tool."


def test_a_range_past_the_end_stops_there_and_one_starting_past_it_is_not_found(daemon):
    total = len(GUIDE.splitlines())
    clamped = fetch(daemon, f"guide#L{total - 1}-L{total + 40}")
    assert (clamped.start_line, clamped.end_line) == (total - 1, total)
    assert clamped.total_lines == total
    assert clamped.resolution.detail == f"the page has {total} lines; the range stops there"
    err = failure(daemon, f"guide#L{total + 1}")
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert "past the end of the page" in err.details()
    assert resolution_from_error(err).detail == f"the page has {total} lines"


@pytest.mark.parametrize("fragment", ["L0", "L0-L5", "L9-L4"])
def test_a_zero_or_reversed_range_is_invalid(daemon, fragment):
    err = failure(daemon, f"guide#{fragment}")
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in err.details()


def test_a_section_anchored_like_a_line_range_is_the_section(daemon):
    section = fetch(daemon, "guide#L2")
    assert section.scope == "section" and section.content.startswith("## L2")
    assert section.location == "guide#l2"
    # A fragment that is neither still returns the page and says so.
    page = fetch(daemon, "guide#nowhere")
    assert page.scope == "page"
    assert page.resolution.detail == "no section 'nowhere' on this page; returned the page"


def test_full_and_multi_range_of_lines_are_those_lines(daemon):
    lines = GUIDE.splitlines()
    full = fetch(daemon, "guide#L5-L8", pb.CONTENT_MODE_FULL)
    assert full.content == "\n".join(lines[4:8]) and full.scope == "lines"
    multi = fetch(daemon, "guide#L5-L8", pb.CONTENT_MODE_MULTI_RANGE)
    assert multi.content == full.content
    assert all(5 <= r.start_line <= r.end_line <= 8 for r in multi.ranges)
