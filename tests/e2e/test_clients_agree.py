"""One daemon answer through every client: Python, Node, Go, Java and the MCP bridge agree.

Each language client runs its own small program against one daemon over a slice of the FastAPI
docs and code: a code search (top 5), a full fetch of its first result by ref_id, and a fetch
of a location that names nothing. Each prints what it decoded as JSON (the proto JSON mapping
for Go, Java and Python; the Node client's own objects), which is brought to one canonical form
by walking the message descriptors (64-bit integers as ints, Timestamps in RFC 3339, enums by
name, absent fields as their defaults) and compared field by field. The MCP bridge answers the
same requests through its search_code and get_content tools, which publish fewer fields under
other names; those are compared with the fields they stand for.

The Go program and the Java classes are built by this test (Go's build cache and ~/.m2 make that
quick after the first time); the Node client needs `make node`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.timestamp_pb2 import Timestamp

from scriptorium.client import Client, ResolutionError
from scriptorium.client._wire import enum_word
from scriptorium.v1 import retrieval_pb2 as pb
from tests.e2e.test_mcp import McpSession, ok
from tests.support.daemon import Daemon, copy_security_slice

REPO = Path(__file__).resolve().parents[2]
QUERY = "OAuth2PasswordBearer token url"
MISSING = "tutorial/security/no-such-page"
# Each call has its own trace id; everything else is the daemon's answer and must agree.
PER_CALL = {"trace_id"}
TIMEOUT = 300


# -- the canonical form ----------------------------------------------------------------------------


def canonical(descriptor: Descriptor, data: dict[str, Any] | None) -> dict[str, Any] | None:
    """``data`` (one client's JSON of a ``descriptor`` message) with every field in one form."""
    if data is None:
        return None
    out: dict[str, Any] = {}
    for field in descriptor.fields:
        if field.name in PER_CALL:
            continue
        value = data.get(field.name, data.get(field.json_name))
        if field.is_repeated:
            out[field.name] = [_scalar(field, item) for item in value or []]
        else:
            out[field.name] = _scalar(field, value)
    return out


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    if field.message_type is not None:
        if field.message_type.full_name == Timestamp.DESCRIPTOR.full_name:
            return _timestamp(value)
        return canonical(field.message_type, value)
    if field.enum_type is not None:
        if value is None:
            return field.enum_type.values[0].name
        return field.enum_type.values_by_number[value].name if isinstance(value, int) else value
    if value is None:
        return field.default_value
    if field.cpp_type in (FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_INT32):
        return int(value)
    if field.cpp_type == FieldDescriptor.CPPTYPE_DOUBLE:
        return float(value)
    return value


def _timestamp(value: Any) -> str | None:
    """RFC 3339 from a JSON string or a ``{seconds, nanos}`` object; None when unset."""
    if value is None:
        return None
    stamp = Timestamp()
    if isinstance(value, str):
        stamp.FromJsonString(value)
    else:
        stamp.seconds, stamp.nanos = int(value["seconds"]), int(value.get("nanos", 0))
    return stamp.ToJsonString()


def canonical_answer(raw: dict[str, Any]) -> dict[str, Any]:
    """The three parts of one client's output, each canonical."""
    return {
        "search": canonical(pb.SearchResponse.DESCRIPTOR, raw["search"]),
        "content": canonical(pb.GetContentResponse.DESCRIPTOR, raw["content"]),
        "missing": {
            "code": int(raw["missing"]["code"]),
            "resolution": canonical(pb.Resolution.DESCRIPTOR, raw["missing"]["resolution"]),
        },
    }


# -- the daemon and the clients --------------------------------------------------------------------


@pytest.fixture(scope="module")
def daemon(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    root = copy_security_slice(tmp_path_factory.mktemp("clients-agree"), langs=("en",))
    config = root / "scriptorium.toml"
    config.write_text(
        f"""
[server]
watch = false

[[sources]]
name = "en"
kind = "markdown"
root = "{root / "docs/en/docs"}"
default = true
url_base = "https://fastapi.tiangolo.com"

[[sources]]
name = "code"
kind = "code"
root = "{root}"
default = true
include = ["fastapi/**/*.py", "docs_src/**/*.py"]
""",
        encoding="utf-8",
    )
    with Daemon(["--config", str(config)], root / "state") as running:
        yield running


def _run(cmd: list[str], cwd: Path) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


def python_answer(address: str) -> dict[str, Any]:
    def as_json(message) -> dict[str, Any]:
        return json_format.MessageToDict(
            message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )

    with Client(address, timeout=30) as client:
        search = client.search(QUERY, kinds="code", top_k=5)
        content = client.get_content(ref_id=search.results[0].ref_id, mode="full")
        with pytest.raises(ResolutionError) as missing:
            client.get_content(location=MISSING, mode="full")
    failed = missing.value
    return {
        "search": as_json(search),
        "content": as_json(content),
        "missing": {"code": failed.code.value[0], "resolution": as_json(failed.resolution)},
    }


def node_answer(address: str) -> dict[str, Any]:
    node_client = REPO / "clients" / "node"
    assert (node_client / "node_modules").is_dir(), "run `make node` first"
    return json.loads(_run(["node", "test/canon.js", address, QUERY, MISSING], node_client))


def go_answer(address: str, tmp_path: Path) -> dict[str, Any]:
    go = shutil.which("go") or "/usr/local/go/bin/go"
    exe = tmp_path / "scriptorium-go"
    _run([go, "build", "-o", str(exe), "./cmd/scriptorium"], REPO / "clients" / "go")
    out = _run([str(exe), "-target", address, "canon", "-query", QUERY, "-missing", MISSING], REPO)
    return json.loads(out)


def java_answer(address: str) -> dict[str, Any]:
    java_client = REPO / "clients" / "java"
    # Offline once a run with this pom.xml fetched everything (the Makefile's java-test stamp).
    pom = hashlib.sha1((java_client / "pom.xml").read_bytes()).hexdigest()[:12]
    stamp = Path.home() / ".m2" / "repository" / f".scriptorium-{pom}"
    _run(["mvn", "-B", "-ntp", "-q", *(["-o"] if stamp.exists() else []), "compile"], java_client)
    target = java_client / "target"
    classpath = f"{target / 'classes'}:{(target / 'classpath.txt').read_text().strip()}"
    main = "dev.scriptorium.client.Main"
    out = _run(["java", "-cp", classpath, main, "--target", address, "canon", QUERY, MISSING], REPO)
    return json.loads(out)


@pytest.fixture(scope="module")
def answers(daemon: Daemon, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("clients")
    raw = {
        "python": python_answer(daemon.address),
        "node": node_answer(daemon.address),
        "go": go_answer(daemon.address, tmp),
        "java": java_answer(daemon.address),
    }
    return {name: canonical_answer(answer) for name, answer in raw.items()}


# -- the comparisons -------------------------------------------------------------------------------


def test_the_answer_is_a_real_one(answers: dict[str, dict]) -> None:
    """What the clients agree on has content: code results, a fetched block, a Resolution."""
    answer = answers["python"]
    results = answer["search"]["results"]
    assert results and all(r["kind"] == "REF_KIND_CODE" for r in results)
    assert any("OAuth2PasswordBearer" in r["snippet"] for r in results)
    assert answer["content"]["ref_id"] == results[0]["ref_id"]
    assert answer["content"]["content"] and answer["content"]["total_lines"] > 0
    assert answer["missing"]["code"] == 5  # NOT_FOUND
    assert answer["missing"]["resolution"]["reason"] == "not_found"
    assert answer["missing"]["resolution"]["requested_location"] == MISSING


@pytest.mark.parametrize("client", ["node", "go", "java"])
@pytest.mark.parametrize("part", ["search", "content", "missing"])
def test_every_client_decodes_every_field_alike(
    answers: dict[str, dict], client: str, part: str
) -> None:
    assert answers[client][part] == answers["python"][part]


def test_the_mcp_bridge_shows_the_same_answer(daemon: Daemon, answers: dict[str, dict]) -> None:
    """search_code and get_content carry the fields they publish with the clients' values."""
    expected = answers["python"]
    with McpSession(["--target", daemon.address]) as mcp:
        hits = ok(mcp.call("search_code", {"query": QUERY, "maxResults": 5}))["result"]
        first = expected["search"]["results"][0]["ref_id"]
        # The bridge answers in parts of 12,000 characters unless told otherwise; the clients
        # asked for the whole answer.
        whole = {"ref_id": first, "mode": "full", "max_chars": 0}
        content = ok(mcp.call("get_content", whole))
        missing = ok(mcp.call("get_content", {"location": MISSING, "mode": "full"}))

    assert [_as_code_hit(r) for r in expected["search"]["results"]] == hits
    assert content.pop("found") is True
    assert content.pop("error", None) is None
    kind = pb.GetContentResponse.DESCRIPTOR.fields_by_name["kind"].enum_type
    want = {
        **expected["content"],
        "kind": enum_word(kind, pb.RefKind.Value(expected["content"]["kind"])),
    }
    assert set(content) - PER_CALL <= set(want)
    assert {k: v for k, v in content.items() if k not in PER_CALL} == {
        k: want[k] for k in content if k not in PER_CALL
    }
    assert missing["found"] is False
    assert missing["error"]["code"] == "NOT_FOUND"
    assert missing["resolution"] == expected["missing"]["resolution"]


def _as_code_hit(result: dict[str, Any]) -> dict[str, Any]:
    """A canonical SearchResult as the bridge's search_code shows it."""
    return {
        "Title": result["title"],
        "Path": result["location"],
        "Url": result["url"],
        "Snippet": result["snippet"],
        "Score": round(result["score"], 4),
        "Language": result["language"],
        "Lines": {"Start": result["start_line"], "End": result["end_line"]},
    }


def test_the_canonical_form_sees_a_difference() -> None:
    """What makes the comparison fail: a field decoded differently is a different answer."""
    proto_json = {"document_count": "3", "indexed_at": "2026-01-02T03:04:05.500Z"}
    node_object = {"document_count": 3, "indexed_at": {"seconds": 1767323045, "nanos": 500000000}}
    same = canonical(pb.SourceStatus.DESCRIPTOR, proto_json)
    assert same == canonical(pb.SourceStatus.DESCRIPTOR, node_object)
    assert same["state"] == "SOURCE_STATE_UNSPECIFIED" and same["name"] == ""
    off_by_one = {**node_object, "document_count": 4}
    assert canonical(pb.SourceStatus.DESCRIPTOR, off_by_one) != same
