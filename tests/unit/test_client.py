"""The Python client and the ``scriptorium`` command against a real server on loopback.

The engine behind the server is faked (it counts calls and fails on cue) because these tests
are about retries, errors and output; the real engine is tested end to end elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import threading
import types
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

from scriptorium.cli import main
from scriptorium.client import (
    AsyncClient,
    Client,
    ResolutionError,
    ScriptoriumError,
    content_request,
    search_request,
)
from scriptorium.domain.model import Corpus, RefKind, Scores
from scriptorium.domain.outcomes import (
    ContentOutcome,
    ContentParams,
    NotFound,
    Resolution,
    SearchHit,
    SearchOutcome,
    SearchParams,
    SourceReport,
    Unavailable,
)
from scriptorium.engine.base import Engine
from scriptorium.grpc.server import start_server
from scriptorium.settings.config import Settings
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS

CODE = CORPUS / "docs_src/first_steps/tutorial001_py310.py"


class FlakyEngine(Engine):
    """Fails the first ``failures`` searches with UNAVAILABLE; fetches of unknown refs 404."""

    def __init__(self, tmp: Path, failures: int = 0) -> None:
        copy = tmp / "main.py"
        shutil.copy(CODE, copy)
        self.text = copy.read_text("utf-8")
        self.failures = failures
        self.search_calls = 0
        self.content_calls: list[ContentParams] = []

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    @property
    def ready(self) -> bool:
        return True

    async def search(self, params: SearchParams) -> SearchOutcome:
        self.search_calls += 1
        if self.search_calls <= self.failures:
            raise Unavailable("source backend is restarting")
        hit = SearchHit(
            ref_id="r1.main-root",
            kind=RefKind.CODE,
            location="first_steps/main.py#L7",
            url="",
            title="root",
            section_path=["root"],
            start_line=6,
            end_line=8,
            snippet="\n".join(self.text.splitlines()[5:8]),
            preview="async def root(): return message Hello World",
            score=1.25,
            scores=Scores(lexical=1.25),
            reasons=[],
            source="code",
            doc_version="v1",
            language="python",
            anchor_line=7,
        )
        return SearchOutcome(hits=[hit], trace_id="trace-9", provider="code")

    async def get_content(self, params: ContentParams) -> ContentOutcome:
        self.content_calls.append(params)
        if params.ref_id != "r1.main-root" and params.location != "first_steps/main.py":
            raise NotFound(
                "unknown ref",
                Resolution("not_found", "none", candidates=["first_steps/main.py"]),
            )
        return ContentOutcome(
            location="first_steps/main.py",
            requested_location=params.location,
            url="",
            source="code",
            content=self.text,
            ranges=[],
            truncated=False,
            total_lines=len(self.text.splitlines()),
            doc_version="v1",
            resolution=Resolution("resolved", "ref" if params.ref_id else "exact"),
            ref_id="r1.main-root",
            kind=RefKind.CODE,
            title="root",
            start_line=1,
            end_line=len(self.text.splitlines()),
            provider="code",
        )

    def list_sources(self) -> list[SourceReport]:
        return [
            SourceReport(
                name="code",
                kind="code",
                state="ready",
                document_count=1,
                block_count=2,
                generation=1,
                indexed_at=None,
                last_error="",
                source_class="product",
                root="/src",
                bytes=len(self.text),
                corpus=Corpus.CODE,
            )
        ]


@pytest.fixture
def server(tmp_path: Path):
    """Start a server for an engine on a background loop; yields a function returning the target."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    running = []

    def _start(engine: Engine, *, serving: bool = False, **overrides) -> str:
        settings = Settings(listen="127.0.0.1:0", grace_seconds=0.0, **overrides)
        started = asyncio.run_coroutine_threadsafe(start_server(settings, engine), loop).result(10)
        if serving:
            status = health_pb2.HealthCheckResponse.SERVING
            asyncio.run_coroutine_threadsafe(started.health.set("", status), loop).result(10)
        running.append(started)
        return f"127.0.0.1:{started.port}"

    yield _start
    for started in running:
        asyncio.run_coroutine_threadsafe(started.server.stop(0), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def unused_target() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


FAST = {"backoff_initial": 0.01, "backoff_max": 0.02, "timeout": 5.0}


# -- request building ----------------------------------------------------------------------------


def test_requests_accept_friendly_values() -> None:
    request = search_request("q", kinds="docs,code", as_of=datetime(2024, 1, 1, tzinfo=UTC))
    assert list(request.kinds) == [pb.CORPUS_DOCS, pb.CORPUS_CODE]
    assert request.as_of.seconds == int(datetime(2024, 1, 1, tzinfo=UTC).timestamp())
    assert content_request(location="a.md", mode="multi-range").mode == pb.CONTENT_MODE_MULTI_RANGE
    with pytest.raises(ValueError, match="exactly one"):
        content_request(ref_id="r1.a", location="a.md")
    with pytest.raises(ValueError, match="unknown content mode"):
        content_request(location="a.md", mode="everything")


def test_an_unknown_word_is_refused_with_the_accepted_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown kind 'prose'; use docs or code"):
        search_request("q", kinds="docs,prose")
    with pytest.raises(ValueError, match=r"use snippet, full, multi_range, definition or outline"):
        content_request(location="a.md", mode="fulll")
    assert search_request("q", kinds=" Docs ").kinds == [pb.CORPUS_DOCS]


# -- retries -------------------------------------------------------------------------------------


def test_sync_client_retries_unavailable_then_succeeds(
    fastapi_corpus, tmp_path: Path, server
) -> None:
    engine = FlakyEngine(tmp_path, failures=2)
    with Client(server(engine), attempts=3, **FAST) as client:
        response = client.search("root")
    assert engine.search_calls == 3
    assert response.results[0].anchor_line == 7


def test_sync_client_gives_up_after_the_configured_attempts(
    fastapi_corpus, tmp_path: Path, server
) -> None:
    engine = FlakyEngine(tmp_path, failures=10)
    client = Client(server(engine), attempts=2, **FAST)
    with client, pytest.raises(ScriptoriumError) as info:
        client.search("root")
    assert info.value.code is grpc.StatusCode.UNAVAILABLE
    assert info.value.message == "source backend is restarting"
    assert engine.search_calls == 2


def test_sync_client_does_not_retry_not_found(fastapi_corpus, tmp_path: Path, server) -> None:
    engine = FlakyEngine(tmp_path)
    client = Client(server(engine), attempts=3, **FAST)
    with client, pytest.raises(ResolutionError) as info:
        client.get_content(ref_id="r1.nope")
    assert len(engine.content_calls) == 1
    assert info.value.code is grpc.StatusCode.NOT_FOUND
    assert info.value.resolution.reason == "not_found"
    assert info.value.candidates == ["first_steps/main.py"]


def test_async_client_retries_unavailable_but_not_not_found(
    fastapi_corpus, tmp_path: Path, server
) -> None:
    engine = FlakyEngine(tmp_path, failures=2)
    target = server(engine)

    async def scenario() -> tuple[pb.SearchResponse, ResolutionError]:
        async with AsyncClient(target, attempts=3, **FAST) as client:
            response = await client.search("root", kinds=["code"])
            try:
                await client.get_content(location="nowhere.py")
            except ResolutionError as err:
                return response, err
        raise AssertionError("NOT_FOUND was not raised")

    response, err = asyncio.run(scenario())
    assert engine.search_calls == 3
    assert response.results[0].ref_id == "r1.main-root"
    assert err.code is grpc.StatusCode.NOT_FOUND
    assert len(engine.content_calls) == 1


def test_async_client_gives_up_on_unavailable(fastapi_corpus, tmp_path: Path, server) -> None:
    engine = FlakyEngine(tmp_path, failures=10)
    target = server(engine)

    async def scenario() -> ScriptoriumError:
        async with AsyncClient(target, attempts=3, **FAST) as client:
            try:
                await client.search("root")
            except ScriptoriumError as err:
                return err
        raise AssertionError("UNAVAILABLE was not raised")

    err = asyncio.run(scenario())
    assert err.code is grpc.StatusCode.UNAVAILABLE
    assert engine.search_calls == 3


def test_retries_stop_at_the_deadline(fastapi_corpus, tmp_path: Path, server) -> None:
    engine = FlakyEngine(tmp_path, failures=10)
    client = Client(server(engine), attempts=50, backoff_initial=0.2, backoff_max=0.2, timeout=0.5)
    with client, pytest.raises(ScriptoriumError):
        client.search("root")
    # Backoff of 0.1-0.2 s inside a 0.5 s deadline leaves room for a handful of attempts.
    assert 2 <= engine.search_calls <= 5


def test_unreachable_target_is_unavailable() -> None:
    client = Client(unused_target(), attempts=2, **FAST)
    with client, pytest.raises(ScriptoriumError) as info:
        client.list_sources()
    assert info.value.code is grpc.StatusCode.UNAVAILABLE


# -- the command ---------------------------------------------------------------------------------


def test_cli_search_json_and_text(fastapi_corpus, tmp_path: Path, server, capsys) -> None:
    target = server(FlakyEngine(tmp_path))
    assert main(["--format", "json", "search", "root", "--target", target, "--kinds", "code"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["results"][0]["ref_id"] == "r1.main-root"
    assert data["results"][0]["kind"] == "REF_KIND_CODE"
    assert data["trace_id"] == "trace-9"
    assert main(["search", "root", "--target", target]) == 0
    text = capsys.readouterr().out
    assert "1. first_steps/main.py#L7  [code, code, score 1.250]" in text
    assert "ref: r1.main-root" in text


def test_cli_get_sends_ref_ids_and_locations(
    fastapi_corpus, tmp_path: Path, server, capsys
) -> None:
    engine = FlakyEngine(tmp_path)
    target = server(engine)
    assert main(["get", "r1.main-root", "--target", target, "--mode", "full"]) == 0
    assert capsys.readouterr().out == engine.text
    assert main(["get", "first_steps/main.py", "--target", target, "--max-lines", "5"]) == 0
    first, second = engine.content_calls
    assert (first.ref_id, first.location, first.mode) == ("r1.main-root", "", "full")
    assert (second.ref_id, second.location, second.max_lines) == ("", "first_steps/main.py", 5)
    assert main(["get", "missing.py", "--target", target]) == 1
    err = capsys.readouterr().err
    assert "NOT_FOUND: unknown ref" in err
    assert "candidate: first_steps/main.py" in err


def test_cli_sources_and_health_exit_codes(fastapi_corpus, tmp_path: Path, server, capsys) -> None:
    loading = server(FlakyEngine(tmp_path))
    serving = server(FlakyEngine(tmp_path), serving=True)
    assert main(["sources", "--target", loading]) == 0
    out = capsys.readouterr().out
    assert "code  code  ready" in out
    assert main(["health", "--target", serving]) == 0
    assert capsys.readouterr().out.strip() == "SERVING"
    assert main(["health", "--target", loading]) == 1
    assert capsys.readouterr().out.strip() == "NOT_SERVING"
    assert main(["health", "--target", serving, "--service", "no.such.Service"]) == 1
    assert main(["health", "--target", unused_target(), "--timeout", "1"]) == 2


def test_cli_startup_errors_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["serve", str(tmp_path / "absent")]) == 2
    assert "not a directory" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("[server]\nlisten = 1\n", encoding="utf-8")
    assert main(["index", "build", "--config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scriptorium: error: [server] listen must be")
    assert err.count("\n") == 1


def test_eval_is_delegated_with_its_arguments(monkeypatch) -> None:
    seen: list[list[str]] = []
    fake = types.ModuleType("scriptorium.evaluation.cli")
    fake.main = lambda argv: seen.append(argv) or 3
    monkeypatch.setitem(sys.modules, "scriptorium.evaluation.cli", fake)
    assert main(["--format", "json", "eval", "--top-k", "3", "--json"]) == 3
    assert seen == [["--top-k", "3", "--json"]]


# -- TLS -----------------------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _certificates(tmp: Path) -> Path:
    """A throwaway CA with a server certificate for localhost and a client certificate."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
             "-subj", "/CN=scriptorium-test-ca", cwd=tmp)  # fmt: skip
    (tmp / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name in ("server", "client"):
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={name}", cwd=tmp)  # fmt: skip
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                 "-CAcreateserial", "-out", f"{name}.pem", "-days", "1",
                 "-extfile", "san.ext", cwd=tmp)  # fmt: skip
    return tmp


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_mutual_tls(fastapi_corpus, tmp_path: Path, server) -> None:
    certs = _certificates(tmp_path)
    target = server(
        FlakyEngine(tmp_path),
        tls_cert=certs / "server.pem",
        tls_key=certs / "server.key",
        tls_client_ca=certs / "ca.pem",
    )
    options = [("grpc.ssl_target_name_override", "localhost")]
    trusted = {"root_certificates": certs / "ca.pem", "options": options, **FAST}
    with Client(
        target, client_cert=certs / "client.pem", client_key=certs / "client.key", **trusted
    ) as client:
        assert client.search("root").results[0].ref_id == "r1.main-root"
    # Without a client certificate the handshake is refused; plaintext is refused too.
    for client in (Client(target, attempts=1, **trusted), Client(target, attempts=1, **FAST)):
        with client, pytest.raises(ScriptoriumError) as info:
            client.search("root")
        assert info.value.code is grpc.StatusCode.UNAVAILABLE
