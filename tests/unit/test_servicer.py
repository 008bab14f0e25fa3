"""The network layer: conversion, statuses, the servicer, interceptors and the server lifecycle.

The server is real (grpc.aio on 127.0.0.1, an OS-chosen port) and is called through real
channels. The engine is faked: this layer only maps calls onto it, and the real engine is tested
end to end elsewhere. The fake serves blocks cut from a real FastAPI page.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import socket
import sys
import threading
import time
import types
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from scriptorium.client import Client, ResolutionError, ScriptoriumError
from scriptorium.daemon import serve
from scriptorium.domain.model import Corpus, Reason, RefKind, Scores
from scriptorium.domain.outcomes import (
    ContentOutcome,
    ContentParams,
    FlowOutcome,
    FlowParams,
    FlowStep,
    InvalidArgument,
    NotFound,
    RangeMark,
    Resolution,
    SearchHit,
    SearchOutcome,
    SearchParams,
    SourceReport,
    UnderstoodQuery,
)
from scriptorium.engine.base import Engine
from scriptorium.engine.checks import validate_source_kinds
from scriptorium.faults import InjectedPanic
from scriptorium.grpc import convert
from scriptorium.grpc.server import (
    Shutdown,
    check_listen_address,
    is_loopback,
    run_server,
    start_server,
)
from scriptorium.grpc.status import INTERNAL_MESSAGE, resolution_from_error, to_status
from scriptorium.plugins import Registry
from scriptorium.settings.config import ConfigError, Settings
from scriptorium.sources.base import SourceConfig
from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc
from tests.support.daemon import CORPUS

PAGE = CORPUS / "docs/en/docs/tutorial/first-steps.md"
SERVICE = "scriptorium.v1.RetrievalService"
# The bound of every wait for an event: generous, since nothing here should ever need it.
WAIT = 60.0


# -- a fake engine over a real page --------------------------------------------------------------


def page_hit(lines: list[str]) -> SearchHit:
    return SearchHit(
        ref_id="r1.first-steps",
        kind=RefKind.DOC,
        location="tutorial/first-steps.md#first-steps",
        url="file:///docs/tutorial/first-steps.md#first-steps",
        title="First Steps",
        section_path=["First Steps"],
        start_line=1,
        end_line=64,
        snippet="\n".join(lines[:8]),
        preview=" ".join(lines[2].split()),
        score=0.75,
        scores=Scores(lexical=7.5, fused=0.5, rerank=0.75),
        reasons=[Reason("bm25", 7.5, "body"), Reason("source_class", 1.0)],
        source="docs",
        doc_version="abc123",
        effective_from=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
        language="",
    )


class FakeEngine(Engine):
    """Answers from one real page; gates let a test hold a call or the start-up in flight."""

    def __init__(self, tmp: Path, *, ready: bool = True) -> None:
        copy = tmp / "first-steps.md"
        shutil.copy(PAGE, copy)
        self.lines = copy.read_text("utf-8").splitlines()
        self._ready = ready
        self.search_calls: list[SearchParams] = []
        self.content_calls: list[ContentParams] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.cancelled = threading.Event()
        self.start_gate = threading.Event()
        self.start_gate.set()
        self.started = threading.Event()
        self.stopped = threading.Event()

    async def start(self) -> None:
        while not self.start_gate.is_set():
            await asyncio.sleep(0.01)
        self._ready = True
        self.started.set()

    async def stop(self) -> None:
        self.stopped.set()

    @property
    def ready(self) -> bool:
        return self._ready

    async def search(self, params: SearchParams) -> SearchOutcome:
        self.search_calls.append(params)
        if params.query == "block":
            self.entered.set()
            try:
                while not self.release.is_set():
                    await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return SearchOutcome(
            hits=[page_hit(self.lines)],
            trace_id="t-1",
            abstained=True,
            abstain_reason="low_confidence",
            provider="docs",
            understood=UnderstoodQuery(
                terms=["first", "steps"],
                kinds=[Corpus.DOCS],
                sources=[],
                surface="",
                as_of=None,
                mode="default",
                query_chars=len(params.query),
                term_count=2,
            ),
        )

    async def get_content(self, params: ContentParams) -> ContentOutcome:
        self.content_calls.append(params)
        if params.location != "tutorial/first-steps.md":
            raise NotFound(
                "no document at that location",
                Resolution(
                    reason="not_found",
                    rule="none",
                    candidates=["tutorial/first-steps.md"],
                    requested_location=params.location,
                ),
            )
        return ContentOutcome(
            location=params.location,
            requested_location=params.location,
            url="",
            source="docs",
            content="\n".join(self.lines[:10]),
            ranges=[RangeMark(1, 1, "heading")],
            truncated=True,
            total_lines=len(self.lines),
            doc_version="abc123",
            resolution=Resolution(reason="resolved", rule="exact"),
            ref_id="r1.first-steps",
            kind=RefKind.DOC,
            title="First Steps",
            start_line=1,
            end_line=10,
            provider="docs",
        )

    async def summarize_flow(self, params: FlowParams) -> FlowOutcome:
        if params.topic.startswith("explode"):
            raise RuntimeError(f"engine bug while handling {params.topic}")
        return FlowOutcome(
            flow=[FlowStep(1, "Run", "Run the live server", params.ref_ids, [], "numbered")],
            assumptions=[],
            confidence="medium",
        )

    def list_sources(self) -> list[SourceReport]:
        return [
            SourceReport(
                name="docs",
                kind="markdown",
                state="ready" if self._ready else "loading",
                document_count=1,
                block_count=12,
                generation=3,
                indexed_at=datetime(2024, 5, 6, tzinfo=UTC),
                last_error="",
                source_class="product",
                root="/docs",
                bytes=4096,
                corpus=Corpus.DOCS,
            )
        ]


# -- a server on a background event loop ---------------------------------------------------------


class LoopThread:
    """An event loop in its own thread, so blocking clients can call a server running on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def submit(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro, timeout: float = WAIT):
        return self.submit(coro).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        self.loop.close()


@pytest.fixture
def loop_thread():
    runner = LoopThread()
    yield runner
    runner.close()


@pytest.fixture
def start(loop_thread):
    """Start a server for an engine; returns its port. Stopped at teardown."""
    running = []

    def _start(engine: Engine, **overrides) -> int:
        settings = Settings(listen="127.0.0.1:0", grace_seconds=0.0, **overrides)
        server = loop_thread.run(start_server(settings, engine))
        running.append(server)
        return server.port

    yield _start
    for server in running:
        loop_thread.run(server.server.stop(0))


def channel(port: int) -> grpc.Channel:
    return grpc.insecure_channel(f"127.0.0.1:{port}")


def health_status(port: int, service: str = "") -> int:
    with channel(port) as ch:
        request = health_pb2.HealthCheckRequest(service=service)
        return health_pb2_grpc.HealthStub(ch).Check(request, timeout=WAIT).status


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- conversion ----------------------------------------------------------------------------------


def test_timestamps_round_trip_and_unset_is_none() -> None:
    request = pb.SearchRequest(query="x")
    assert convert.datetime_from_pb(request, "as_of") is None
    moment = datetime(2025, 3, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    convert.datetime_to_pb(moment, request.as_of)
    back = convert.datetime_from_pb(request, "as_of")
    assert back == moment
    assert back.tzinfo is UTC
    naive = pb.SearchRequest()
    convert.datetime_to_pb(datetime(2025, 3, 1), naive.as_of)
    assert convert.datetime_from_pb(naive, "as_of") == datetime(2025, 3, 1, tzinfo=UTC)


def test_enums_round_trip_and_reject_unknown_values() -> None:
    for corpus in Corpus:
        assert convert.corpus_from_pb(convert.corpus_to_pb(corpus)) is corpus
    for kind in RefKind:
        assert convert.ref_kind_from_pb(convert.ref_kind_to_pb(kind)) is kind
    for mode in ("snippet", "full", "multi_range"):
        assert convert.content_mode_from_pb(convert.content_mode_to_pb(mode)) == mode
    for style in ("", "compact", "detailed"):
        assert convert.flow_style_from_pb(convert.flow_style_to_pb(style)) == style
    assert convert.content_mode_from_pb(pb.CONTENT_MODE_UNSPECIFIED) == "snippet"
    with pytest.raises(InvalidArgument):
        convert.corpus_from_pb(42)
    with pytest.raises(InvalidArgument):
        convert.content_mode_from_pb(42)
    assert (
        convert.abstain_reason_to_pb("conflicting_sources") == pb.ABSTAIN_REASON_CONFLICTING_SOURCES
    )
    assert convert.abstain_reason_to_pb("") == pb.ABSTAIN_REASON_UNSPECIFIED
    assert convert.confidence_to_pb("high") == pb.CONFIDENCE_HIGH
    assert convert.source_state_to_pb("stale") == pb.SOURCE_STATE_STALE


def test_search_request_to_params() -> None:
    request = pb.SearchRequest(
        query="path operation",
        top_k=5,
        snippet_lines=4,
        kinds=[pb.CORPUS_CODE, pb.CORPUS_UNSPECIFIED, pb.CORPUS_CODE, pb.CORPUS_DOCS],
        mode="implementation",
        sources=["docs"],
        surface="tutorial",
        token_budget=300,
        explain=True,
    )
    params = convert.search_params(request)
    assert params == SearchParams(
        query="path operation",
        top_k=5,
        snippet_lines=4,
        kinds=(Corpus.CODE, Corpus.DOCS),
        mode="implementation",
        sources=("docs",),
        surface="tutorial",
        as_of=None,
        token_budget=300,
        explain=True,
    )


def test_search_outcome_to_response(fastapi_corpus, tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path)
    outcome = asyncio.run(engine.search(SearchParams(query="first steps")))
    response = convert.search_response(outcome)
    (result,) = response.results
    assert result.kind == pb.REF_KIND_DOC
    assert result.title == "First Steps"
    assert result.snippet.startswith("# First Steps")
    assert result.scores.lexical == 7.5
    assert [r.name for r in result.reasons] == ["bm25", "source_class"]
    assert result.effective_from.ToDatetime(tzinfo=UTC) == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert not result.HasField("effective_to")
    assert response.abstain_reason == pb.ABSTAIN_REASON_LOW_CONFIDENCE
    assert response.understood.query_chars == len("first steps")
    assert list(response.understood.kinds) == [pb.CORPUS_DOCS]


def test_source_reports_and_resolution_convert(fastapi_corpus, tmp_path: Path) -> None:
    response = convert.list_sources_response(FakeEngine(tmp_path).list_sources(), "9.9")
    (status,) = response.sources
    assert status.state == pb.SOURCE_STATE_READY
    assert status.corpus == pb.CORPUS_DOCS
    assert status.indexed_at.ToDatetime(tzinfo=UTC) == datetime(2024, 5, 6, tzinfo=UTC)
    assert (response.generation, response.server_version) == (3, "9.9")
    resolution = Resolution("ambiguous", "variant", ["a/x.md", "b/x.md"], "two pages", "x", "b")
    assert convert.resolution_from_pb(convert.resolution_to_pb(resolution)) == resolution


def test_status_carries_resolution_and_hides_unexpected_messages() -> None:
    error = NotFound("gone", Resolution("not_found", candidates=["a.md"]))
    status = to_status(error)
    assert status.code is grpc.StatusCode.NOT_FOUND
    assert status.details == "gone"
    assert any(k == "grpc-status-details-bin" for k, _ in status.trailing_metadata)
    internal = to_status(ValueError("query text: password=hunter2"))
    assert internal.code is grpc.StatusCode.INTERNAL
    assert internal.details == INTERNAL_MESSAGE
    assert "hunter2" not in repr(internal.trailing_metadata)


# -- the servicer over a real server -------------------------------------------------------------


def test_search_maps_request_and_response(fastapi_corpus, tmp_path: Path, start) -> None:
    engine = FakeEngine(tmp_path)
    port = start(engine)
    as_of = datetime(2024, 6, 1, tzinfo=UTC)
    with Client(f"127.0.0.1:{port}", timeout=WAIT) as client:
        response = client.search(
            "first steps", top_k=3, kinds=["code"], as_of=as_of, sources=["docs"], explain=True
        )
    (params,) = engine.search_calls
    assert params.query == "first steps"
    assert params.kinds == (Corpus.CODE,)
    assert params.as_of == as_of
    assert params.sources == ("docs",)
    assert params.explain is True
    assert response.results[0].ref_id == "r1.first-steps"
    assert response.results[0].location == "tutorial/first-steps.md#first-steps"
    assert response.trace_id == "t-1"
    assert response.abstained is True


def test_not_found_arrives_with_the_resolution_detail(
    fastapi_corpus, tmp_path: Path, start
) -> None:
    engine = FakeEngine(tmp_path)
    port = start(engine)
    with channel(port) as ch:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(ch)
        ok = stub.GetContent(pb.GetContentRequest(location="tutorial/first-steps.md"), timeout=WAIT)
        assert ok.resolution.rule == "exact"
        assert ok.total_lines == len(engine.lines)
        with pytest.raises(grpc.RpcError) as info:
            stub.GetContent(pb.GetContentRequest(location="first-step"), timeout=WAIT)
    err = info.value
    assert err.code() is grpc.StatusCode.NOT_FOUND
    assert err.details() == "no document at that location"
    resolution = resolution_from_error(err)
    assert resolution is not None
    assert resolution.reason == "not_found"
    assert list(resolution.candidates) == ["tutorial/first-steps.md"]
    assert resolution.requested_location == "first-step"


def test_unimplemented_invalid_and_internal_statuses(
    fastapi_corpus, tmp_path: Path, start, caplog
) -> None:
    port = start(FakeEngine(tmp_path))
    caplog.set_level(logging.DEBUG)
    with Client(f"127.0.0.1:{port}", timeout=WAIT) as client:
        with pytest.raises(ScriptoriumError) as unimplemented:
            client.expand_related(["r1.first-steps"])
        assert unimplemented.value.code is grpc.StatusCode.UNIMPLEMENTED
        flow = client.summarize_flow(["r1.first-steps"], topic="servers")
        assert flow.confidence == pb.CONFIDENCE_MEDIUM
        with pytest.raises(ScriptoriumError) as internal:
            client.summarize_flow(["r1.x"], topic="explode secret-topic-77")
    assert internal.value.code is grpc.StatusCode.INTERNAL
    assert internal.value.message == INTERNAL_MESSAGE
    assert "RuntimeError" in caplog.text
    assert "secret-topic-77" not in caplog.text
    with channel(port) as ch:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(ch)
        with pytest.raises(grpc.RpcError) as invalid:
            stub.GetContent(pb.GetContentRequest(location="x", mode=42), timeout=WAIT)
    assert invalid.value.code() is grpc.StatusCode.INVALID_ARGUMENT


class PanickingEngine(FakeEngine):
    """Its searches fail as a Rust panic reaches Python: a ``BaseException``."""

    async def search(self, params: SearchParams) -> SearchOutcome:
        raise InjectedPanic("injected panic at the engine")


def test_a_panic_under_a_call_ends_it_with_internal_rather_than_a_hang(
    fastapi_corpus, tmp_path: Path, start
) -> None:
    port = start(PanickingEngine(tmp_path))
    with Client(f"127.0.0.1:{port}", timeout=WAIT, attempts=1) as client:
        with pytest.raises(ScriptoriumError) as failed:
            client.search("anything")
        assert failed.value.code is grpc.StatusCode.INTERNAL
        assert "InjectedPanic" in failed.value.message
        assert client.list_sources().sources  # the server goes on serving


def test_loading_engine_answers_unavailable_but_lists_sources(
    fastapi_corpus, tmp_path: Path, start
) -> None:
    port = start(FakeEngine(tmp_path, ready=False))
    with Client(f"127.0.0.1:{port}", timeout=WAIT, attempts=1) as client:
        with pytest.raises(ScriptoriumError) as info:
            client.search("first steps")
        assert info.value.code is grpc.StatusCode.UNAVAILABLE
        assert info.value.message == "sources are still loading"
        sources = client.list_sources()
    assert sources.sources[0].state == pb.SOURCE_STATE_LOADING


def test_reflection_lists_the_services(fastapi_corpus, tmp_path: Path, start) -> None:
    port = start(FakeEngine(tmp_path))
    with channel(port) as ch:
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        responses = list(stub.ServerReflectionInfo(iter([request]), timeout=WAIT))
    names = {s.name for r in responses for s in r.list_services_response.service}
    assert {SERVICE, "grpc.health.v1.Health"} <= names


def test_concurrency_limit_refuses_beyond_the_limit(fastapi_corpus, tmp_path: Path, start) -> None:
    engine = FakeEngine(tmp_path)
    port = start(engine, max_concurrent_rpcs=1)
    target = f"127.0.0.1:{port}"
    with Client(target, timeout=WAIT) as client, ThreadPoolExecutor(1) as pool:
        held = pool.submit(client.search, "block")
        assert engine.entered.wait(WAIT)
        with pytest.raises(ScriptoriumError) as info:
            client.search("first steps")
        assert info.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert info.value.message == "server is at its concurrency limit (1)"
        # Health probes are exempt from the limit.
        assert health_status(port) == health_pb2.HealthCheckResponse.NOT_SERVING
        engine.release.set()
        assert held.result(WAIT).results
        assert client.search("first steps").results


def test_cancelled_call_cancels_the_engine_and_frees_its_slot(
    fastapi_corpus, tmp_path: Path, start
) -> None:
    engine = FakeEngine(tmp_path)
    port = start(engine, max_concurrent_rpcs=1)
    with Client(f"127.0.0.1:{port}", attempts=1) as client:
        # The engine holds the call until released, so its deadline always expires; should it
        # expire before the call reached the engine, a longer one is tried.
        for timeout in (0.5, 2.0, 8.0, 32.0):
            with pytest.raises(ScriptoriumError) as info:
                client.search("block", timeout=timeout)
            assert info.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
            if engine.entered.is_set():
                break
        assert engine.entered.is_set(), "the call never reached the engine"
        assert engine.cancelled.wait(WAIT)
        engine.release.set()
        assert client.search("first steps", timeout=WAIT).results


def test_bearer_token_is_required_except_for_health_and_reflection(
    fastapi_corpus, tmp_path: Path, start, caplog
) -> None:
    caplog.set_level(logging.INFO)
    port = start(FakeEngine(tmp_path), auth_token="s3cret-token")
    target = f"127.0.0.1:{port}"
    for token in (None, "wrong-token"):
        with Client(target, token=token, timeout=WAIT) as client:
            with pytest.raises(ScriptoriumError) as info:
                client.search("first steps")
            assert info.value.code is grpc.StatusCode.UNAUTHENTICATED
            assert client.health().status == health_pb2.HealthCheckResponse.NOT_SERVING
    with Client(target, token="s3cret-token", timeout=WAIT) as client:
        assert client.search("first steps").results
    with channel(port) as ch:
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        assert list(stub.ServerReflectionInfo(iter([request]), timeout=WAIT))
    assert "no bearer token" in caplog.text
    assert "wrong bearer token" in caplog.text
    assert "s3cret" not in caplog.text
    assert "wrong-token" not in caplog.text


# -- lifecycle -----------------------------------------------------------------------------------


def test_health_turns_serving_after_start_and_shutdown_drains(
    fastapi_corpus, tmp_path: Path, loop_thread
) -> None:
    engine = FakeEngine(tmp_path, ready=False)
    engine.start_gate.clear()
    port = free_port()
    ready_file = tmp_path / "run" / "ready"
    settings = Settings(listen=f"127.0.0.1:{port}", grace_seconds=5.0)
    shutdown = loop_thread.run(_make_shutdown())
    done = loop_thread.submit(run_server(settings, engine, shutdown, ready_file=ready_file))

    _wait(lambda: _reachable(port))
    assert health_status(port) == health_pb2.HealthCheckResponse.NOT_SERVING
    assert health_status(port, SERVICE) == health_pb2.HealthCheckResponse.NOT_SERVING
    assert not ready_file.exists()

    engine.start_gate.set()
    _wait(ready_file.exists)
    assert ready_file.read_text().strip() == str(port)
    assert health_status(port) == health_pb2.HealthCheckResponse.SERVING
    assert health_status(port, SERVICE) == health_pb2.HealthCheckResponse.SERVING

    with Client(f"127.0.0.1:{port}", timeout=WAIT) as client, ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(client.search, "block")
        assert engine.entered.wait(WAIT)
        loop_thread.loop.call_soon_threadsafe(shutdown.request)
        _wait(lambda: not ready_file.exists())
        assert not engine.stopped.is_set()
        engine.release.set()
        # The call that was in flight when shutdown began still completes.
        assert in_flight.result(WAIT).results
    assert done.result(WAIT) == 0
    assert engine.stopped.is_set()


async def _make_shutdown() -> Shutdown:
    return Shutdown()


def _reachable(port: int) -> bool:
    try:
        health_status(port)
        return True
    except grpc.RpcError:
        return False


def _wait(condition, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


def test_serve_handles_sigterm_and_writes_the_bound_port(
    fastapi_corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = FakeEngine(tmp_path, ready=False)
    fake = types.ModuleType("scriptorium.engine.local")
    fake.LocalEngine = lambda settings, registry: engine
    monkeypatch.setitem(sys.modules, "scriptorium.engine.local", fake)
    ready_file = tmp_path / "ready"
    observed: dict[str, int] = {}

    def probe_then_terminate() -> None:
        _wait(ready_file.exists)
        port = int(ready_file.read_text())
        observed["port"] = port
        observed["status"] = health_status(port)
        os.kill(os.getpid(), signal.SIGTERM)

    stray: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: stray.append(signum))
    try:
        prober = threading.Thread(target=probe_then_terminate)
        prober.start()
        status = asyncio.run(
            serve(Settings(listen="127.0.0.1:0"), registry=Registry(), ready_file=ready_file)
        )
        prober.join(WAIT)
        # serve put the handler that was installed before it back.
        os.kill(os.getpid(), signal.SIGTERM)
        _wait(lambda: bool(stray))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert status == 0
    assert observed["port"] > 0
    assert observed["status"] == health_pb2.HealthCheckResponse.SERVING
    assert engine.stopped.is_set()
    assert stray == [signal.SIGTERM]


def test_serve_refuses_unknown_kinds_and_exposed_addresses(tmp_path: Path) -> None:
    registry = Registry(source_kinds={"markdown": lambda c, ctx: None, "code": lambda c, ctx: None})
    settings = Settings(sources=[SourceConfig("wiki", "confluence", tmp_path)])
    with pytest.raises(ConfigError, match="unknown kind 'confluence'; known kinds: code, markdown"):
        validate_source_kinds(settings, registry)
    with pytest.raises(ConfigError, match="unknown kind 'confluence'"):
        asyncio.run(serve(settings, registry=registry))
    with pytest.raises(ConfigError, match="refusing to listen on non-loopback"):
        check_listen_address(Settings(listen="0.0.0.0:50051"))
    check_listen_address(Settings(listen="0.0.0.0:50051", listen_explicit=True))
    assert is_loopback("[::1]:1") and is_loopback("localhost:1") and is_loopback("127.0.0.2:1")
    assert not is_loopback("[::]:1") and not is_loopback("example.test:1")


def test_resolution_error_from_client(fastapi_corpus, tmp_path: Path, start) -> None:
    port = start(FakeEngine(tmp_path))
    with (
        Client(f"127.0.0.1:{port}", timeout=WAIT) as client,
        pytest.raises(ResolutionError) as info,
    ):
        client.get_content(location="first-step")
    assert info.value.code is grpc.StatusCode.NOT_FOUND
    assert info.value.reason == "not_found"
    assert info.value.candidates == ["tutorial/first-steps.md"]
