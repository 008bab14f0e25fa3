"""Search and GetContent over the FastAPI corpus through the generated stubs."""

from __future__ import annotations

import base64

import grpc
import pytest

from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb


def search(stub, query: str, **kw) -> pb.SearchResponse:
    return stub.Search(pb.SearchRequest(query=query, **kw), timeout=30)


def pages(response: pb.SearchResponse) -> list[str]:
    return [r.location.split("#", 1)[0] for r in response.results]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("declare path parameters with types", "tutorial/path-params"),
        ("run code after returning a response background task", "tutorial/background-tasks"),
        ("CORS allow origins middleware", "tutorial/cors"),
        ("パスパラメータ 型", "ja/tutorial/path-params"),
        ("查询参数 默认值", "zh/tutorial/query-params"),
        ("FastAPI の 依存性注入", "ja/tutorial/dependencies"),
    ],
)
def test_multilingual_queries_find_the_right_page(stub, query, expected):
    response = search(stub, query, kinds=[pb.CORPUS_DOCS])
    assert expected in pages(response)[:5], pages(response)


def test_results_are_complete_sorted_and_deduplicated(stub):
    response = search(stub, "request body pydantic model", top_k=15)
    results = response.results
    assert 1 <= len(results) <= 15
    keys = [(r.source, r.location, r.start_line, r.end_line) for r in results]
    assert len(keys) == len(set(keys))
    order = [(-r.score, r.location, r.start_line) for r in results]
    assert order == sorted(order)
    for r in results:
        assert r.ref_id and r.location and r.title and r.doc_version
        assert r.start_line >= 1 and r.end_line >= r.start_line
        assert r.snippet and r.preview
        assert len(r.preview) <= 206
        assert r.kind in (pb.REF_KIND_DOC, pb.REF_KIND_CODE)


@pytest.mark.parametrize(
    "query",
    [
        "request body pydantic model",
        "APIRouter include_router",
        "security oauth2 scopes",
        "Depends",
        "upload files with UploadFile",
        "ミドルウェア",
        "websocket",
    ],
)
def test_a_shorter_result_list_is_the_prefix_of_a_longer_one(stub, query):
    """Asking for fewer results must not change which results come first."""

    def seen(top_k: int) -> list[tuple[str, int, float]]:
        response = search(stub, query, top_k=top_k)
        return [(r.location, r.start_line, round(r.score, 6)) for r in response.results]

    longest = seen(25)
    assert len(longest) > 10, longest
    for top_k in (1, 3, 5, 10):
        assert seen(top_k) == longest[:top_k], top_k


def test_doc_snippet_starts_at_the_block_heading(stub):
    response = search(stub, "interactive API docs swagger", kinds=[pb.CORPUS_DOCS], snippet_lines=3)
    top = response.results[0]
    assert top.snippet.lstrip().startswith("#")
    assert len(top.snippet.splitlines()) <= 3
    assert top.section_path[-1] == top.title


def test_top_k_is_clamped_and_empty_queries_return_nothing(stub):
    assert len(search(stub, "parameter", top_k=500).results) == 25
    assert len(search(stub, "parameter", top_k=0).results) == 10
    assert len(search(stub, "").results) == 0
    assert len(search(stub, "   \t\n ").results) == 0


def test_every_returned_location_and_ref_fetches(stub):
    queries = [
        "security oauth2 scopes",
        "testing with TestClient",
        "ミドルウェア",
        "依赖项",
        "APIRouter",
    ]
    for query in queries:
        for result in search(stub, query).results:
            by_ref = stub.GetContent(pb.GetContentRequest(ref_id=result.ref_id), timeout=30)
            assert by_ref.content.strip(), result.location
            assert by_ref.doc_version == result.doc_version
            by_loc = stub.GetContent(
                pb.GetContentRequest(location=result.location, mode=pb.CONTENT_MODE_FULL),
                timeout=30,
            )
            assert by_loc.content.strip(), result.location
            assert by_loc.resolution.reason == "resolved"


def test_markdown_block_runs_to_next_heading_of_same_level(stub):
    reply = stub.GetContent(
        pb.GetContentRequest(location="tutorial/first-steps#recap", mode=pb.CONTENT_MODE_FULL)
    )
    assert reply.content.splitlines()[0].startswith("## Recap")
    assert reply.location == "tutorial/first-steps#recap"
    assert not any(line.startswith("## ") for line in reply.content.splitlines()[1:])


def test_multi_range_marks_lists_and_nested_headings(stub):
    reply = stub.GetContent(
        pb.GetContentRequest(location="tutorial/first-steps", mode=pb.CONTENT_MODE_MULTI_RANGE)
    )
    reasons = {r.reason for r in reply.ranges}
    assert "nested-heading" in reasons
    assert reasons & {"ordered-list", "bullet-list"}
    for r in reply.ranges:
        assert reply.start_line <= r.start_line <= r.end_line <= reply.end_line


def test_max_lines_truncates(stub):
    reply = stub.GetContent(
        pb.GetContentRequest(
            location="tutorial/first-steps", mode=pb.CONTENT_MODE_FULL, max_lines=5
        )
    )
    assert reply.truncated
    assert len(reply.content.splitlines()) == 5
    assert reply.total_lines > 5


@pytest.mark.parametrize(
    ("location", "rule", "resolved"),
    [
        ("tutorial/path-params", "exact", "tutorial/path-params"),
        ("tutorial/path-params.md", "variant", "tutorial/path-params"),
        ("/Tutorial/Path-Params/", "exact", "tutorial/path-params"),
        ("tutorial/dependencies/index", "variant", "tutorial/dependencies"),
        (
            "path-params-numeric-validations",
            "canonical-leaf",
            "tutorial/path-params-numeric-validations",
        ),
        ("ja/tutorial/path-params.html", "variant", "ja/tutorial/path-params"),
    ],
)
def test_resolution_rules(stub, location, rule, resolved):
    reply = stub.GetContent(pb.GetContentRequest(location=location))
    assert reply.resolution.reason == "resolved"
    assert reply.resolution.rule == rule
    assert reply.location == resolved
    assert reply.requested_location == location


def test_shared_leaf_is_not_found_not_guessed(stub):
    with pytest.raises(grpc.RpcError) as err:
        stub.GetContent(pb.GetContentRequest(location="first-steps"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    resolution = resolution_from_error(err.value)
    assert resolution is not None and resolution.reason == "not_found"
    # The pages that share the leaf come back so the caller can choose (each site-qualified).
    expected = [
        f"{site}{page}"
        for site in ("", "ja/", "zh/")
        for page in ("tutorial/first-steps", "tutorial/security/first-steps")
    ]
    assert list(resolution.candidates) == sorted(expected)
    assert "the leaf 'first-steps' names 6 pages" in resolution.detail
    assert "pass one of the candidates" in err.value.details()


def test_shared_leaf_candidates_each_fetch(stub):
    with pytest.raises(grpc.RpcError) as err:
        stub.GetContent(pb.GetContentRequest(location="middleware"))
    resolution = resolution_from_error(err.value)
    assert (resolution.reason, resolution.rule) == ("not_found", "none")
    assert len(resolution.candidates) == 7  # three English pages, two each in ja and zh
    assert {"advanced/middleware", "reference/middleware", "tutorial/middleware"} <= set(
        resolution.candidates
    )
    for candidate in resolution.candidates:
        reply = stub.GetContent(pb.GetContentRequest(location=candidate))
        assert (reply.resolution.reason, reply.location) == ("resolved", candidate)


def test_shared_leaf_in_a_named_source_lists_only_that_source(stub):
    with pytest.raises(grpc.RpcError) as err:
        stub.GetContent(pb.GetContentRequest(location="ja/middleware.md"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    resolution = resolution_from_error(err.value)
    assert resolution.reason == "not_found"
    assert list(resolution.candidates) == ["ja/advanced/middleware", "ja/tutorial/middleware"]
    assert "names 2 pages" in resolution.detail


def test_python_client_surfaces_shared_leaf_candidates(fastapi_daemon):
    from scriptorium.client import Client, ResolutionError

    with Client(fastapi_daemon.address) as client, pytest.raises(ResolutionError) as err:
        client.get_content(location="ja/middleware")
    assert err.value.reason == "not_found"
    assert err.value.candidates == ["ja/advanced/middleware", "ja/tutorial/middleware"]


def test_unknown_site_is_distinguished(stub):
    with pytest.raises(grpc.RpcError) as err:
        stub.GetContent(pb.GetContentRequest(location="other-site/guide/setup"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert resolution_from_error(err.value).reason == "unknown_site"


@pytest.mark.parametrize(
    "location",
    [
        "../../etc/passwd",
        "%2e%2e/%2e%2e/etc/passwd",
        "tutorial/../../../etc/passwd",
        "C:\\Windows\\win.ini",
    ],
)
def test_traversal_locations_are_refused(stub, location):
    with pytest.raises(grpc.RpcError) as err:
        stub.GetContent(pb.GetContentRequest(location=location))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_forged_ref_escaping_the_root_is_refused(stub):
    raw = "\x1f".join(["en", "d", "../../../../etc/passwd", "", "1", "0" * 12])
    forged = "r1." + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    with pytest.raises(grpc.RpcError) as err:
        stub.GetContent(pb.GetContentRequest(ref_id=forged))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_malformed_ref_and_unknown_mode_are_invalid(stub):
    with pytest.raises(grpc.RpcError) as err:
        stub.GetContent(pb.GetContentRequest(ref_id="r1.!!!"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        search(stub, "routing", mode="no-such-mode")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "implementation" in err.value.details()


def test_list_sources_reports_every_source(stub):
    reply = stub.ListSources(pb.ListSourcesRequest())
    by_name = {s.name: s for s in reply.sources}
    assert set(by_name) == {"en", "ja", "zh", "code"}
    for status in by_name.values():
        assert status.state == pb.SOURCE_STATE_READY
        assert status.document_count > 0 and status.block_count >= status.document_count
        assert status.generation >= 1
    assert by_name["en"].document_count == 155
