"""GetContent answers are assembled once: every path cuts, places and stamps them the same way.

A page held by a cluster (``opensearch``) is cut with the helpers of ``scriptorium.plugin`` and
must answer as local content does: the same locations and refs, the same stale-ref misses, a
moved definition followed, and a trace id on every answer.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scriptorium.content.assemble import StaleRef, cut_for_fragment, cut_for_ref, placed
from scriptorium.domain.model import Corpus, RefKind
from scriptorium.domain.outcomes import ContentOutcome
from scriptorium.domain.refs import Ref, decode_ref
from scriptorium.plugins import load_registry
from scriptorium.sources.base import SourceConfig, SourceContext, content_hash
from scriptorium.sources.remote import FetchMiss, FetchRequest, RemotePage
from scriptorium.text import split_lines
from scriptorium_plugins.opensearch import fetching
from scriptorium_plugins.opensearch.source import OpenSearchSource

ROOT = Path(__file__).resolve().parents[2]
TRACE_ID = re.compile(r"[0-9a-f]{32}")

GUIDE = """# Guide

Intro text.

## Install

Run the installer.

## Usage

Call the tool.
"""

MODULE = '''"""A module."""


def first():
    return 1


class Store:
    def put(self, key):
        return key
'''


def _page(path: str, text: str, corpus: Corpus) -> RemotePage:
    chain = load_registry().extractor_chain
    extraction = chain.for_path(path, corpus).extract(path, text)
    return RemotePage(
        source="cluster",
        path=path,
        text=text,
        corpus=corpus,
        content_hash=content_hash(text),
        blocks=extraction.blocks,
        meta=extraction.meta,
        url=f"https://docs.example/{path}",
        location=f"cluster/{path}",
        version=content_hash(text)[:12],
        revision="r7",
    )


@pytest.fixture(scope="module")
def source() -> OpenSearchSource:
    config = SourceConfig("cluster", "opensearch", None, options={"hosts": ["127.0.0.1:9"]})
    return OpenSearchSource(config, SourceContext(extractors=load_registry().extractor_chain))


def _fetch(source, page, fragment="", ref=None, location="") -> ContentOutcome | FetchMiss:
    request = FetchRequest(location=location, ref=ref, mode="snippet", max_lines=200)
    return fetching.outcome(source, page, request, fragment)


def test_a_cluster_section_answers_with_its_location_ref_url_and_trace(source) -> None:
    page = _page("guide.md", GUIDE, Corpus.DOCS)
    out = _fetch(source, page, "usage", location="cluster/guide.md#usage")
    assert isinstance(out, ContentOutcome)
    assert out.location == "cluster/guide.md#usage"
    assert out.url == "https://docs.example/guide.md#usage"
    assert out.content.startswith("## Usage") and out.scope == "section"
    assert out.provider == "cluster" and out.source_revision == "r7"
    ref = decode_ref(out.ref_id)
    assert (ref.source, ref.kind, ref.path, ref.anchor) == (
        "cluster",
        RefKind.DOC,
        "guide.md",
        "usage",
    )
    assert TRACE_ID.fullmatch(out.trace_id)
    again = _fetch(source, page, ref=ref)
    assert isinstance(again, ContentOutcome) and again.content == out.content
    assert again.resolution.rule == "ref" and TRACE_ID.fullmatch(again.trace_id)


def test_a_missing_section_returns_the_page_and_says_so(source) -> None:
    out = _fetch(source, _page("guide.md", GUIDE, Corpus.DOCS), "nowhere")
    assert isinstance(out, ContentOutcome) and out.location == "cluster/guide.md"
    assert out.resolution.detail == "no section 'nowhere' on this page; returned the page"
    assert TRACE_ID.fullmatch(out.trace_id)


def test_a_cluster_pages_lines_answer_as_a_local_pages_do(source) -> None:
    out = _fetch(source, _page("guide.md", GUIDE, Corpus.DOCS), "L5-L7")
    assert isinstance(out, ContentOutcome) and out.kind is RefKind.DOC
    assert out.content == "## Install\n\nRun the installer." and out.scope == "lines"
    assert out.location == "cluster/guide.md#L5-L7"
    assert out.url == "https://docs.example/guide.md#install"
    assert decode_ref(out.ref_id).anchor == "install" and out.resolution.detail == ""


def test_code_by_lines_by_name_and_as_a_file(source) -> None:
    page = _page("pkg/store.py", MODULE, Corpus.CODE)
    lines = _fetch(source, page, "L4-L5")
    named = _fetch(source, page, "Store.put")
    whole = _fetch(source, page, "nothing_here")
    assert lines.location == "cluster/pkg/store.py#L4-L5" and lines.kind is RefKind.CODE
    assert "def put" in named.content and named.url.startswith(
        "https://docs.example/pkg/store.py#L"
    )
    assert whole.kind is RefKind.FILE and whole.location == "cluster/pkg/store.py"
    assert whole.resolution.detail.startswith("no definition 'nothing_here'")
    assert all(TRACE_ID.fullmatch(o.trace_id) for o in (lines, named, whole))


def test_a_code_ref_follows_its_definition_when_the_file_changed(source) -> None:
    old = _page("pkg/store.py", MODULE, Corpus.CODE)
    named = _fetch(source, old, "Store.put")
    ref = decode_ref(named.ref_id)
    moved = MODULE.replace('"""A module."""\n', '"""A module."""\n\nimport os\n\n\nVALUE = 1\n')
    new = _page("pkg/store.py", moved, Corpus.CODE)
    again = _fetch(source, new, ref=ref)
    assert isinstance(again, ContentOutcome)
    assert "def put" in again.content and again.start_line > named.start_line


@pytest.mark.parametrize(
    ("ref", "detail"),
    [
        (Ref("cluster", RefKind.DOC, "guide.md", "gone", 1, "0" * 12), "the heading is gone"),
        (Ref("cluster", RefKind.CODE, "guide.md", "", 999, "0" * 12), "the file is shorter now"),
    ],
)
def test_a_stale_ref_is_a_miss_with_the_local_wording(source, ref, detail) -> None:
    out = _fetch(source, _page("guide.md", GUIDE, Corpus.DOCS), ref=ref)
    assert isinstance(out, FetchMiss)
    assert out.resolution.reason == "not_found" and out.resolution.detail == f"stale ref: {detail}"


def test_the_helpers_agree_with_a_local_cut() -> None:
    page = _page("guide.md", GUIDE, Corpus.DOCS)
    lines = split_lines(page.text)
    cut, note = cut_for_fragment(page, lines, "install", "full", 200)
    where = placed(cut, page, "docs", "guide.md", page.content_hash)
    assert note == "" and where.location == "guide.md#install" and where.url_anchor == "install"
    by_ref = cut_for_ref(page, lines, where.ref, "full", 200)
    assert (by_ref.start_line, by_ref.end_line) == (cut.start_line, cut.end_line)
    with pytest.raises(StaleRef):
        cut_for_ref(page, lines, Ref("docs", RefKind.DOC, "guide.md", "gone", 1, ""), "full", 9)


def test_every_answer_is_built_by_the_one_helper() -> None:
    """No other code builds a ContentOutcome (only the wire decoding does, from a reply that
    already carries its trace id), so no path can forget the trace id again."""
    builders = sorted(
        str(path.relative_to(ROOT))
        for folder in ("daemon/scriptorium", "plugins/scriptorium_plugins")
        for path in (ROOT / folder).rglob("*.py")
        if "ContentOutcome(" in path.read_text(encoding="utf-8")
    )
    assert builders == [
        "daemon/scriptorium/content/assemble.py",
        "daemon/scriptorium/grpc/convert.py",
    ]
