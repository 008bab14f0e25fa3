"""The HTTP/JSON API against a real daemon: ``serve --http`` beside gRPC, reached with httpx.

Every RPC answers as it does over gRPC (the same servicer) and matches the OpenAPI
description, failures are JSON with the gRPC status name, message and Resolution under the
matching HTTP code, the GET forms build the same requests, health is at /healthz and /readyz,
and HTTP starts and stops with the daemon. The rules shared with gRPC (token, limits, TLS,
cancellation, deadlines) are in test_http_rules.py.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS
from tests.support.http import HttpDaemon, config_text, post, write
from tests.support.waiting import wait_for

# Fields that differ between two calls of the same request.
VOLATILE = {"traceId", "stalenessSeconds"}


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-tree")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "docs/tutorial")
    shutil.copytree(CORPUS / "fastapi", root / "code/fastapi")
    return root


@pytest.fixture(scope="module")
def daemon(tree: Path) -> Iterator[HttpDaemon]:
    config = write(
        tree / "http.toml", config_text(tree, "watch = false\nmax_receive_message_bytes = 100000")
    )
    d = HttpDaemon(["--config", str(config)], tree / "state")
    d.start()
    yield d
    d.terminate()


@pytest.fixture(scope="module")
def http(daemon: HttpDaemon) -> Iterator[httpx.Client]:
    with daemon.client() as client:
        yield client


def stable(value: Any) -> Any:
    """``value`` without the fields that change from call to call."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def grpc_json(message: Any) -> dict:
    return stable(json_format.MessageToDict(message, always_print_fields_with_no_presence=True))


def first_ref(daemon: HttpDaemon, query: str) -> pb.SearchResult:
    return daemon.stub.Search(pb.SearchRequest(query=query), timeout=30).results[0]


# -- every RPC -------------------------------------------------------------------------------------


def requests_of_every_rpc(daemon: HttpDaemon) -> dict[str, Any]:
    ref = first_ref(daemon, "declare path parameters")
    return {
        "Search": pb.SearchRequest(query="declare path parameters", explain=True, top_k=5),
        "GetContent": pb.GetContentRequest(location=ref.location, mode=pb.CONTENT_MODE_MULTI_RANGE),
        "ExpandRelated": pb.ExpandRelatedRequest(ref_ids=[ref.ref_id]),
        "SummarizeFlow": pb.SummarizeFlowRequest(ref_ids=[ref.ref_id]),
        "GuideImplementation": pb.GuideImplementationRequest(
            topic="add oauth2 password login", framework="fastapi"
        ),
        "ListSources": pb.ListSourcesRequest(),
    }


def test_every_rpc_answers_over_http_what_it_answers_over_grpc(daemon, http):
    requests = requests_of_every_rpc(daemon)
    assert set(requests) == {
        m.name for m in pb.DESCRIPTOR.services_by_name["RetrievalService"].methods
    }
    for name, request in requests.items():
        over_grpc = getattr(daemon.stub, name)(request, timeout=60)
        reply = post(http, name, json_format.MessageToDict(request))
        assert reply.status_code == 200, (name, reply.text)
        assert reply.headers["content-type"] == "application/json"
        assert stable(reply.json()) == grpc_json(over_grpc), name
    # The answers are real ones, not two empty messages.
    assert post(http, "Search", {"query": "declare path parameters"}).json()["results"]


def test_every_answer_matches_its_schema_in_the_openapi_description(daemon, http):
    import jsonschema

    doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")

    def check(value: Any, schema_name: str) -> None:
        schema = {"$ref": f"#/components/schemas/{schema_name}", "components": doc["components"]}
        jsonschema.Draft202012Validator(schema).validate(value)

    for name, request in requests_of_every_rpc(daemon).items():
        reply = post(http, name, json_format.MessageToDict(request))
        check(reply.json(), f"scriptorium.v1.{name}Response")
    failed = post(http, "GetContent", {"location": "tutorial/no-such-page"})
    check(failed.json(), "Error")
    with pytest.raises(jsonschema.ValidationError):  # the check can fail
        check({"results": [{"noSuchField": 1}]}, "scriptorium.v1.SearchResponse")


def test_snake_case_field_names_and_an_empty_body_are_accepted(http):
    snake = post(http, "Search", {"query": "declare path parameters", "top_k": 2}).json()
    camel = post(http, "Search", {"query": "declare path parameters", "topK": 2}).json()
    assert len(snake["results"]) == 2
    assert stable(snake) == stable(camel)
    listed = http.post("/v1/ListSources")
    assert listed.status_code == 200
    assert {s["name"] for s in listed.json()["sources"]} == {"docs", "code"}


# -- failures --------------------------------------------------------------------------------------


def test_not_found_is_404_with_the_grpc_status_message_and_resolution(daemon, http):
    request = pb.GetContentRequest(location="tutorial/no-such-page")
    with pytest.raises(grpc.RpcError) as err:
        daemon.stub.GetContent(request, timeout=30)
    reply = post(http, "GetContent", {"location": "tutorial/no-such-page"})
    assert reply.status_code == 404
    body = reply.json()
    assert body["status"] == "NOT_FOUND" and body["code"] == grpc.StatusCode.NOT_FOUND.value[0]
    assert body["message"] == err.value.details()
    resolution = resolution_from_error(err.value)
    assert body["resolution"] == json_format.MessageToDict(resolution)
    assert body["resolution"]["reason"] == "not_found"


@pytest.mark.parametrize(
    ("rpc", "body", "http_status", "status", "words"),
    [
        ("Search", {"query": "x", "tokenBudget": -1}, 400, "INVALID_ARGUMENT", "token_budget"),
        ("Search", {"query": "x", "mode": "nosuchmode"}, 400, "INVALID_ARGUMENT", "mode"),
        ("Search", {"query": 5}, 400, "INVALID_ARGUMENT", "SearchRequest"),
        ("Search", {"qurey": "x"}, 400, "INVALID_ARGUMENT", "qurey"),
        ("Search", {"kinds": ["CORPUS_NOPE"]}, 400, "INVALID_ARGUMENT", "SearchRequest"),
        ("Search", b"{not json", 400, "INVALID_ARGUMENT", "not JSON"),
        ("Search", b"[1, 2]", 400, "INVALID_ARGUMENT", "JSON object"),
        ("Search", b"\xff\xfe{}", 400, "INVALID_ARGUMENT", "UTF-8"),
        ("GetContent", {}, 400, "INVALID_ARGUMENT", "ref_id"),
        ("GetContent", {"refId": "r1.garbage"}, 400, "INVALID_ARGUMENT", "ref"),
        ("Serch", {}, 404, "NOT_FOUND", "did you mean Search"),
    ],
)
def test_bad_requests_get_the_matching_http_code(http, rpc, body, http_status, status, words):
    reply = post(http, rpc, body)
    assert reply.status_code == http_status, reply.text
    error = reply.json()
    assert error["status"] == status
    assert words.lower() in error["message"].lower(), error
    assert "Traceback" not in reply.text


def test_a_body_over_the_receive_limit_is_413(http):
    reply = post(http, "Search", {"query": "path " * 30_000})
    assert reply.status_code == 413
    assert reply.json()["status"] == "RESOURCE_EXHAUSTED"
    assert post(http, "Search", {"query": "path parameters"}).json()["results"]


def test_wrong_method_and_unknown_path_are_json(http):
    wrong = http.get("/v1/Search")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"
    assert wrong.json()["status"] == "UNIMPLEMENTED"
    missing = http.get("/v2/nothing")
    assert missing.status_code == 404 and missing.json()["status"] == "NOT_FOUND"


# -- the GET forms ---------------------------------------------------------------------------------


def test_get_search_builds_the_request_from_the_url(daemon, http):
    reply = http.get(
        "/v1/search",
        params={"q": "declare path parameters", "kinds": "docs", "explain": "true", "top_k": "3"},
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    over_grpc = daemon.stub.Search(
        pb.SearchRequest(
            query="declare path parameters", kinds=[pb.CORPUS_DOCS], explain=True, top_k=3
        ),
        timeout=30,
    )
    assert stable(body) == grpc_json(over_grpc)
    assert len(body["results"]) == 3
    assert all(r["kind"] == "REF_KIND_DOC" for r in body["results"])
    assert body["stages"] and body["results"][0]["reasons"]


def test_get_content_fetches_a_location(daemon, http):
    ref = first_ref(daemon, "declare path parameters")
    reply = http.get("/v1/content", params={"location": ref.location, "mode": "full"})
    assert reply.status_code == 200, reply.text
    over_grpc = daemon.stub.GetContent(
        pb.GetContentRequest(location=ref.location, mode=pb.CONTENT_MODE_FULL), timeout=30
    )
    assert reply.json()["content"] == over_grpc.content and over_grpc.content


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"q": "x", "kinds": "doc"}, "docs, code"),
        ({"q": "x", "top_k": "many"}, "integer"),
        ({"q": "x", "explain": "perhaps"}, "true or false"),
        ({"q": "x", "qq": "y"}, "unknown parameter 'qq'"),
        ({"q": "x", "as_of": "yesterday"}, "SearchRequest"),
    ],
)
def test_get_search_refuses_bad_parameters(http, params, words):
    reply = http.get("/v1/search", params=params)
    assert reply.status_code == 400, reply.text
    assert reply.json()["status"] == "INVALID_ARGUMENT"
    assert words in reply.json()["message"]


def test_get_content_not_found_carries_the_resolution(http):
    reply = http.get("/v1/content", params={"location": "tutorial/nowhere"})
    assert reply.status_code == 404
    assert reply.json()["resolution"]["requestedLocation"] == "tutorial/nowhere"


# -- health, loading, draining ---------------------------------------------------------------------


def test_health_endpoints_say_serving(http):
    assert http.get("/healthz").json() == {"status": "SERVING"}
    ready = http.get("/readyz")
    assert ready.status_code == 200 and ready.json() == {"status": "SERVING"}


def test_while_loading_readyz_is_503_and_calls_are_unavailable(tree, tmp_path):
    release = tmp_path / "release-build"
    config = write(tmp_path / "c.toml", config_text(tree))
    d = HttpDaemon(
        ["--config", str(config)], tmp_path / "state", env={FAULT_PAUSE: f"build.write={release}"}
    )
    d.start_process()
    try:
        assert wait_for(reached_marker(release).exists, 120), d.log()
        with d.client() as client:
            assert client.get("/healthz").json() == {"status": "NOT_SERVING"}
            assert client.get("/readyz").status_code == 503
            loading = post(client, "Search", {"query": "path parameters"})
            assert loading.status_code == 503
            assert loading.json()["status"] == "UNAVAILABLE"
            assert post(client, "ListSources").status_code == 200
            release.touch()
            d.wait_serving()
            assert client.get("/readyz").status_code == 200
    finally:
        release.touch()
        d.terminate()


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_http_stops_with_the_daemon(tree, tmp_path):
    config = write(tmp_path / "c.toml", config_text(tree))
    d = HttpDaemon(["--config", str(config)], tmp_path / "state")
    d.start()
    assert _accepts(d.http_port)
    assert d.terminate() == 0
    assert not _accepts(d.http_port)
    assert "HTTP stopped" in d.full_log()


def test_a_taken_http_address_is_one_sentence_and_exit_2(tree, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write(tmp_path / "c.toml", config_text(tree))
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "scriptorium",
                "serve",
                "--config",
                str(config),
                "--listen",
                "127.0.0.1:0",
                "--http",
                f"127.0.0.1:{port}",
                "--state-dir",
                str(tmp_path / "state"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 2, result.stderr
    assert f"cannot listen for HTTP on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("value", ["nonsense", "127.0.0.1:http", ":80", "127.0.0.1:70000"])
def test_a_malformed_http_address_is_refused(tree, tmp_path, value):
    config = write(tmp_path / "c.toml", config_text(tree, f'http_listen = "{value}"'))
    result = subprocess.run(
        [sys.executable, "-m", "scriptorium", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "[server] http_listen must be a 'host:port' address" in result.stderr
