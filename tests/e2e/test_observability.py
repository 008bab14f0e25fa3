"""Observability against a real daemon: console traces and metrics, and no query text anywhere.

The daemon runs with DEBUG logging and the console exporters for traces and metrics; every call
carries a fake secret in its free text. After the daemon stops, its whole output (logs, spans,
metrics) must not contain the secret in any case, while the spans must show every stage.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

from scriptorium import telemetry as T
from scriptorium.domain.model import RefKind
from scriptorium.domain.refs import Ref
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, Daemon

SECRET = "sk-live-TESTSECRET-0123456789"
DOCS = ("background-tasks.md", "path-params.md", "query-params.md", "dependencies/index.md")


def small_tree(root: Path) -> Path:
    """A few FastAPI tutorial pages and the module they describe."""
    for name in DOCS:
        target = root / "docs" / "tutorial" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / "docs/en/docs/tutorial" / name, target)
    (root / "fastapi").mkdir(parents=True)
    shutil.copy(CORPUS / "fastapi/background.py", root / "fastapi/background.py")
    return root


def write_config(path: Path, root: Path) -> Path:
    path.write_text(
        f"""
[server]
watch = false

[[sources]]
name = "docs"
kind = "markdown"
root = "{root / "docs"}"
default = true

[[sources]]
name = "code"
kind = "code"
root = "{root}"
default = true
include = ["fastapi/**/*.py"]

[telemetry]
exporter = "console"
metrics_exporter = "console"
metrics_interval_seconds = 1
""",
        encoding="utf-8",
    )
    return path


def json_objects(text: str) -> list[dict]:
    """Every JSON line the console exporters printed (log lines are interleaved)."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def observed(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory):
    """Run every call once against a traced daemon; return (responses, full output)."""
    work = tmp_path_factory.mktemp("observability")
    config = write_config(work / "scriptorium.toml", small_tree(work / "tree"))
    daemon = Daemon(["--config", str(config), "--log-level", "DEBUG"], work / "state")
    daemon.start()
    responses: dict = {}
    try:
        stub = daemon.stub
        watch = daemon.health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
        responses["watch"] = next(watch).status
        watch.cancel()
        responses["search"] = stub.Search(
            pb.SearchRequest(query=f"run background tasks {SECRET}", explain=True), timeout=30
        )
        ref = responses["search"].results[0].ref_id
        responses["content"] = stub.GetContent(
            pb.GetContentRequest(location="tutorial/background-tasks"), timeout=30
        )
        for location in (f"tutorial/{SECRET}", f"{SECRET}/page", f"tutorial/path-params#{SECRET}"):
            try:
                stub.GetContent(pb.GetContentRequest(location=location), timeout=30)
            except grpc.RpcError as err:
                assert SECRET.lower() not in (err.details() or "").lower()
        # Refusals whose messages quote the request back to the caller, and only to the caller.
        responses["refused"] = []
        for bad in (
            pb.SearchRequest(query=f"tasks {SECRET}", mode=SECRET),
            pb.SearchRequest(query=SECRET, sources=[SECRET]),
        ):
            try:
                stub.Search(bad, timeout=30)
            except grpc.RpcError as err:
                responses["refused"].append(err.code())
        stale = Ref("docs", RefKind.DOC, f"{SECRET}.md", SECRET, 1, "0" * 12).encode()
        responses["related"] = stub.ExpandRelated(
            pb.ExpandRelatedRequest(ref_ids=[ref, stale]), timeout=30
        )
        responses["guide"] = stub.GuideImplementation(
            pb.GuideImplementationRequest(topic=f"add a background task {SECRET}"), timeout=60
        )
    finally:
        daemon.terminate()
    return responses, daemon.log_path.read_text("utf-8", "replace")


@pytest.fixture(scope="module")
def spans(observed) -> list[dict]:
    return [o for o in json_objects(observed[1]) if "context" in o and "name" in o]


def by_name(spans: list[dict], name: str) -> list[dict]:
    return [s for s in spans if s["name"] == name]


def test_the_secret_appears_nowhere_in_logs_spans_or_metrics(observed):
    _, output = observed
    assert "query understood:" in output, "DEBUG logging was not on"
    assert '"resource_metrics"' in output, "no metrics were exported"
    assert "TESTSECRET" not in output.upper()
    assert "0123456789" not in output


def test_refusals_quoting_the_request_were_made(observed):
    assert observed[0]["refused"] == [grpc.StatusCode.INVALID_ARGUMENT] * 2


def test_health_watch_still_streams_under_tracing(observed):
    assert observed[0]["watch"] == health_pb2.HealthCheckResponse.SERVING


def test_every_search_stage_is_a_span_of_the_response_trace(observed, spans):
    search = observed[0]["search"]
    names = {s["name"] for s in spans}
    assert {T.SEARCH, T.FETCH, T.RESOLVE, T.CUT, T.INDEX_BUILD, *T.STAGE_SPANS} <= names
    in_trace = [s for s in spans if s["context"]["trace_id"] == f"0x{search.trace_id}"]
    mine = by_name(in_trace, T.SEARCH)
    assert len(mine) == 1
    trace_names = {s["name"] for s in in_trace}
    assert {*T.STAGE_SPANS, "/scriptorium.v1.RetrievalService/Search"} <= trace_names
    attributes = mine[0]["attributes"]
    assert attributes[T.QUERY_CHARS] == len(f"run background tasks {SECRET}")
    assert attributes[T.TERM_COUNT] == len(search.understood.terms)
    assert attributes[T.RESULT_COUNT] == len(search.results)
    assert attributes[T.SEARCH_PROVIDER] == "local"
    thinnest = min(len(" ".join(r.preview.split())) for r in search.results)
    assert attributes[T.MIN_PREVIEW_CHARS] == thinnest


def test_server_spans_carry_split_provider_attribution(spans):
    server_search = by_name(spans, "/scriptorium.v1.RetrievalService/Search")
    assert server_search and server_search[0]["attributes"][T.SEARCH_PROVIDER] == "local"
    fetches = by_name(spans, "/scriptorium.v1.RetrievalService/GetContent")
    assert {s["attributes"].get(T.FETCH_PROVIDER) for s in fetches} == {"local", "none"}
    assert not any(T.SEARCH_PROVIDER in s["attributes"] for s in fetches)
    failed = [s for s in fetches if s["attributes"].get(T.FETCH_PROVIDER) == "none"]
    assert all(s["status"]["status_code"] == "ERROR" for s in failed)
    assert {s["attributes"]["rpc.grpc.status_code"] for s in failed} == {5}


def test_fetch_spans_say_how_the_location_resolved(observed, spans):
    content = observed[0]["content"]
    fetches = by_name(spans, T.FETCH)
    served = [s for s in fetches if s["attributes"][T.FETCH_PROVIDER] == "local"]
    assert served[0]["attributes"][T.RESOLUTION_REASON] == "resolved"
    assert served[0]["attributes"][T.RESOLUTION_RULE] == content.resolution.rule
    assert served[0]["attributes"][T.DOC_VERSION] == content.doc_version
    reasons = {s["attributes"][T.RESOLUTION_REASON] for s in fetches}
    assert {"resolved", "not_found", "unknown_site"} <= reasons


def test_metrics_count_outcomes_and_time_every_rpc(observed):
    points: dict[str, list[dict]] = {}
    for export in json_objects(observed[1]):
        for resource in export.get("resource_metrics", []):
            for scope in resource["scope_metrics"]:
                for metric in scope["metrics"]:
                    points.setdefault(metric["name"], []).extend(metric["data"]["data_points"])
    searches = {(p["attributes"]["source"], p["attributes"]["outcome"]) for p in points[T.SEARCHES]}
    assert ("all", "ok") in searches
    fetches = {(p["attributes"]["source"], p["attributes"]["outcome"]) for p in points[T.FETCHES]}
    assert {("docs", "ok"), ("unknown", "not_found")} <= fetches
    methods = {p["attributes"]["rpc.method"] for p in points[T.RPC_DURATION]}
    assert {"Search", "GetContent", "ExpandRelated", "GuideImplementation"} <= methods
    documents = {p["attributes"]["source"]: p["value"] for p in points[T.GAUGE_DOCUMENTS]}
    assert documents == {"docs": len(DOCS), "code": 1}
    assert all(p["value"] >= 0 for p in points[T.GAUGE_STALENESS])
