"""Bad input over HTTP: the gRPC sweep's cases (tests/e2e/test_bad_input.py) sent both ways.

One daemon serves gRPC and HTTP over the sweep's tree (symlinks out of the root, a secret
beside it). Each bad request goes to both doors: the HTTP answer must carry the gRPC status
name, code and message the gRPC call got, under the matching HTTP code, never a traceback or
the secret, and the daemon must go on answering. Then the abuse only HTTP can receive:
bodies that are not JSON, not UTF-8, nested past any parser, or too large.
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest
from google.protobuf import json_format

from scriptorium.http.errors import HTTP_STATUS
from scriptorium.limits import SEARCHED_QUERY_CHARS
from scriptorium.v1 import retrieval_pb2 as pb
from tests.e2e.test_bad_input import SECRET, Tree, forge, tree, tree_config  # noqa: F401
from tests.support.http import JSON_TYPE, HttpDaemon, post

MAX_RECEIVE = 200_000


@pytest.fixture(scope="module")
def daemon(tree: Tree) -> Iterator[HttpDaemon]:  # noqa: F811
    config = tree_config(
        tree.root / "http.toml", tree, f"watch = false\nmax_receive_message_bytes = {MAX_RECEIVE}"
    )
    d = HttpDaemon(["--config", str(config)], tree.root / "http-state")
    d.start()
    yield d
    d.terminate()


@pytest.fixture(scope="module")
def http(daemon: HttpDaemon) -> Iterator[httpx.Client]:
    with daemon.client() as client:
        yield client


def assert_serving(http: httpx.Client) -> None:
    reply = post(http, "Search", {"query": "declare path parameters"})
    assert reply.status_code == 200 and reply.json()["results"], reply.text


def assert_clean(reply: httpx.Response) -> None:
    assert "Traceback" not in reply.text and SECRET not in reply.text
    assert reply.headers["content-type"] == "application/json"


S, G = pb.SearchRequest, pb.GetContentRequest
CASES: list[tuple[str, object]] = [
    # Search
    ("Search", S(query="")),
    ("Search", S(query="   \t\n\r  ")),
    ("Search", S(query="path " * 20_000)),
    ("Search", S(query="b" * (SEARCHED_QUERY_CHARS + 1))),
    ("Search", S(query="\x00\x01path\x07 parameters\x7f\x1b[31m")),
    ("Search", S(query="path\u200bparameters\u202e\ufeff")),
    ("Search", S(query='+-&&||!(){}[]^"~*?:\\/')),
    ("Search", S(query="path parameters", top_k=-5)),
    ("Search", S(query="path parameters", top_k=10**6)),
    ("Search", S(query="path parameters", snippet_lines=-3)),
    ("Search", S(query="path parameters", token_budget=-1)),
    ("Search", S(query="path parameters", mode="no-such-mode")),
    ("Search", S(query="path parameters", sources=["docs", "nope"])),
    ("Search", S(query="path parameters", kinds=[7])),
    # GetContent
    ("GetContent", G()),
    ("GetContent", G(ref_id="r1.x", location="tutorial/path-params")),
    ("GetContent", G(ref_id="garbage")),
    ("GetContent", G(ref_id="r1.!!!!")),
    ("GetContent", G(ref_id=forge("nosuchsite", "d", "a.md"))),
    ("GetContent", G(ref_id=forge("docs", "d", "../outside/secret.md"))),
    ("GetContent", G(ref_id=forge("docs", "f", "/etc/passwd"))),
    ("GetContent", G(location="../../etc/passwd")),
    ("GetContent", G(location="%2e%2e/%2e%2e/etc/passwd")),
    ("GetContent", G(location="tutorial/path-params\x00.md")),
    ("GetContent", G(location="/etc/passwd")),
    ("GetContent", G(location="file:///etc/passwd")),
    ("GetContent", G(location="leak", mode=pb.CONTENT_MODE_FULL)),
    ("GetContent", G(location="leakdir/secret", mode=pb.CONTENT_MODE_FULL)),
    ("GetContent", G(location="tutorial/path-params", max_lines=-1)),
    ("GetContent", G(location="tutorial/path-params", mode=9)),
    ("GetContent", G(location="x" * 100_000)),
    # The composing calls
    ("ExpandRelated", pb.ExpandRelatedRequest()),
    ("ExpandRelated", pb.ExpandRelatedRequest(ref_ids=["garbage"], kinds=[9])),
    ("ExpandRelated", pb.ExpandRelatedRequest(ref_ids=["garbage"], top_k=-4)),
    ("SummarizeFlow", pb.SummarizeFlowRequest()),
    ("SummarizeFlow", pb.SummarizeFlowRequest(ref_ids=["garbage"], style=42)),
    ("SummarizeFlow", pb.SummarizeFlowRequest(ref_ids=["garbage"], token_budget=-1)),
    ("GuideImplementation", pb.GuideImplementationRequest()),
    ("GuideImplementation", pb.GuideImplementationRequest(topic="oauth", style=77)),
    ("GuideImplementation", pb.GuideImplementationRequest(topic="\x00" * 50)),
    ("GuideImplementation", pb.GuideImplementationRequest(topic="oauth", max_docs=-9)),
]


def _id(case: tuple[str, object]) -> str:
    name, request = case
    return f"{name}:{json_format.MessageToJson(request, indent=None)[:60]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_http_answers_bad_input_as_grpc_does(daemon, http, case):
    name, request = case
    try:
        over_grpc = getattr(daemon.stub, name)(request, timeout=60)
    except grpc.RpcError as err:
        code, details, reply_grpc = err.code(), err.details(), None
    else:
        code, details, reply_grpc = grpc.StatusCode.OK, "", over_grpc
    reply = post(http, name, json_format.MessageToDict(request))
    assert_clean(reply)
    assert reply.status_code == HTTP_STATUS[code.name], reply.text
    if code is grpc.StatusCode.OK:
        if name == "Search":  # answered the same way: the same results, the same truncation
            body = reply.json()
            assert [r["location"] for r in body["results"]] == [
                r.location for r in reply_grpc.results
            ]
            assert body["queryTruncated"] == reply_grpc.query_truncated
    else:
        error = reply.json()
        assert error["status"] == code.name
        assert error["code"] == code.value[0]
        assert error["message"] == details
    assert_serving(http)


GARBAGE_BODIES = [
    b"{",
    b"null",
    b'"a string"',
    b"12",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"query": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    b"\xff\xfe\x00\x01",
    b'{"query": "\\ud800"}',
    b'{"query": "x", "query": "y", "topK": 1e400}',
    b'{"topK": "NaN"}',
    b'{"asOf": "not a time"}',
    b'{"kinds": {"a": 1}}',
    b"\x00" * 1000,
]


@pytest.mark.parametrize("body", GARBAGE_BODIES, ids=range(len(GARBAGE_BODIES)))
def test_garbage_bodies_are_invalid_argument(http, body):
    reply = post(http, "Search", body)
    assert_clean(reply)
    assert reply.status_code == 400, reply.text
    assert reply.json()["status"] == "INVALID_ARGUMENT"
    assert_serving(http)


def test_a_body_over_the_receive_limit_is_refused_before_it_is_read(http):
    reply = post(http, "Search", b'{"query": "' + b"a" * (MAX_RECEIVE + 1) + b'"}')
    assert reply.status_code == 413
    assert reply.json()["status"] == "RESOURCE_EXHAUSTED"
    assert_serving(http)


def test_a_body_over_the_limit_without_a_length_is_refused(http):
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "'
        for _ in range(MAX_RECEIVE // 10_000 + 2):
            yield b"a" * 10_000
        yield b'"}'

    reply = http.post("/v1/Search", content=chunks(), headers=JSON_TYPE)
    assert reply.status_code == 413
    assert_serving(http)


@pytest.mark.parametrize(
    "path",
    [
        "/v1/",
        "/v1/%00",
        "/v1/Search/extra",
        "/v1/" + "A" * 5000,
        "/console/../../etc/passwd",
        "/console/%2e%2e%2fsecret",
        "/console/index.html",
    ],
)
def test_odd_paths_are_json_404s(http, path):
    reply = http.post(path) if path.startswith("/v1/") else http.get(path)
    assert_clean(reply)
    assert reply.status_code in (404, 405), reply.text
    assert_serving(http)


def test_odd_query_strings_are_invalid_argument(http):
    for query in ("q=%00%ff", "q=" + "x" * 10_000, "top_k=1&top_k=2", "kinds=docs,,,code,zzz"):
        reply = http.get(f"/v1/search?{query}")
        assert_clean(reply)
        assert reply.status_code in (200, 400), (query, reply.text)
        if reply.status_code == 400:
            assert reply.json()["status"] == "INVALID_ARGUMENT"
    assert_serving(http)
