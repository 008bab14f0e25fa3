"""Replays evaluation cases against a live daemon over gRPC and records what came back.

The harness talks to the daemon only through the public contract (generated stubs and the
standard health service), so it measures exactly what an agent would see. Every case failure is
recorded on the case and the run goes on; only a daemon that cannot be reached stops a run.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from scriptorium import launcher
from scriptorium.client._wire import resolution_from_error
from scriptorium.evaluation import scoring
from scriptorium.evaluation.evalset import Case
from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc as pb_grpc

RPC_TIMEOUT_S = 30.0
PREVIEW_DEPTH = 5
STARTUP_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
_CORPORA = {"docs": pb.CORPUS_DOCS, "code": pb.CORPUS_CODE}


class DaemonError(RuntimeError):
    """The daemon could not be started or reached; no case can be measured."""


def free_port() -> int:
    """A loopback port that was free a moment ago (the daemon binds it right after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_serving(
    channel: grpc.Channel,
    timeout_s: float,
    alive: Callable[[], bool] = lambda: True,
) -> None:
    """Poll the standard health check for service "" until it reports SERVING."""
    stub = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if not alive():
            raise DaemonError("the daemon exited before it reported SERVING")
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2.0)
            if reply.status == health_pb2.HealthCheckResponse.SERVING:
                return
            last = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        except grpc.RpcError as exc:
            last = exc.code().name if hasattr(exc, "code") else str(exc)
        time.sleep(0.25)
    raise DaemonError(f"the daemon was not SERVING within {timeout_s:.0f}s (last: {last})")


@dataclass
class DaemonProcess:
    """A daemon subprocess serving one config on a free loopback port, with a private state dir."""

    config: Path
    startup_timeout_s: float = STARTUP_TIMEOUT_S
    # A state dir to use and keep (its index generations serve the next run); default: a
    # private temporary one, removed on stop.
    state_dir: Path | None = None
    target: str = ""
    _process: launcher.DaemonProcess | None = None

    def command(self, port: int) -> list[str]:
        """The command line, for a daemon listening on ``port`` (0: any free one)."""
        process = self._launcher(port)
        process.stop()  # nothing was spawned: this only removes its scratch folder
        return process.cmd

    def _launcher(self, port: int = 0) -> launcher.DaemonProcess:
        process = launcher.DaemonProcess(
            config=self.config,
            state_dir=self.state_dir,
            listen=f"127.0.0.1:{port}",
            prefix="scriptorium-eval-",
        )
        process.log = (self.state_dir or process.work) / "daemon.log"
        return process

    def start(self) -> str:
        """Start the daemon and return its target once health reports SERVING."""
        self._process = self._launcher()
        try:
            self.target = self._process.start(self.startup_timeout_s)
        except launcher.DaemonExited as exc:
            raise DaemonError(
                "the daemon exited before it reported SERVING"
                f"\n--- daemon log (tail) ---\n{exc.tail or '(no log)'}"
            ) from None
        except launcher.DaemonNotReady as exc:
            raise DaemonError(
                f"the daemon was not SERVING within {self.startup_timeout_s:.0f}s"
                f"\n--- daemon log (tail) ---\n{exc.tail or '(no log)'}"
            ) from None
        return self.target

    def alive(self) -> bool:
        return self._process is not None and self._process.alive()

    def log_tail(self, lines: int = 40) -> str:
        tail = self._process.log_tail(lines) if self._process is not None else ""
        return tail or "(no log)"

    def stop(self) -> None:
        """SIGTERM, wait for the drain, kill only if it does not exit; remove the state dir."""
        if self._process is not None:
            self._process.stop(STOP_TIMEOUT_S)
        self._process = None


@contextlib.contextmanager
def running_daemon(config: Path, startup_timeout_s: float = STARTUP_TIMEOUT_S) -> Iterator[str]:
    """Context manager: a started daemon's target, stopped on exit whatever happened."""
    daemon = DaemonProcess(config=config, startup_timeout_s=startup_timeout_s)
    try:
        yield daemon.start()
    finally:
        daemon.stop()


def _error_record(exc: grpc.RpcError, started: float) -> dict[str, Any]:
    """A run record's fields for a call that failed."""
    return {
        "status": "error",
        "code": _status_name(exc),
        "error": _error_text(exc),
        "latency_ms": _elapsed_ms(started),
        "returned": [],
    }


def _status_name(exc: grpc.RpcError) -> str:
    code = exc.code() if hasattr(exc, "code") else None
    return code.name if code is not None else "UNKNOWN"


def _error_text(exc: grpc.RpcError) -> str:
    details = exc.details() if hasattr(exc, "details") else None
    return str(details or exc)


class RetrievalClient:
    """Thin typed wrapper over the generated stubs, returning plain dicts for the run record."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.channel = grpc.insecure_channel(target)
        self.stub = pb_grpc.RetrievalServiceStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def wait_ready(self, timeout_s: float) -> None:
        wait_until_serving(self.channel, timeout_s)

    def list_sources(self) -> pb.ListSourcesResponse:
        return self.stub.ListSources(pb.ListSourcesRequest(), timeout=RPC_TIMEOUT_S)

    def search(self, case: Case, top_k: int) -> tuple[dict[str, Any], list[pb.SearchResult]]:
        request = pb.SearchRequest(
            query=case.query or "",
            top_k=top_k,
            kinds=[_CORPORA[k] for k in case.kinds],
            mode=case.mode,
            surface=case.surface,
        )
        started = time.perf_counter()
        try:
            response = self.stub.Search(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError as exc:
            return {**_error_record(exc, started), "results": []}, []
        results = list(response.results)
        return {
            "status": "ok" if results else "empty",
            "code": "OK",
            "error": "",
            "latency_ms": _elapsed_ms(started),
            "returned": [r.location for r in results],
            "results": [
                {
                    "location": r.location,
                    "kind": pb.RefKind.Name(r.kind),
                    "source": r.source,
                    "title": r.title,
                    "score": round(r.score, 6),
                }
                for r in results
            ],
            "abstained": response.abstained,
            "abstain_reason": pb.AbstainReason.Name(response.abstain_reason),
            "provider": response.provider,
        }, results

    def related(self, location: str, top_k: int) -> dict[str, Any]:
        """ExpandRelated from ``location`` (resolved to its ref by GetContent, as the CLI does)."""
        started = time.perf_counter()
        try:
            seed = self.stub.GetContent(
                pb.GetContentRequest(location=location, max_lines=1), timeout=RPC_TIMEOUT_S
            )
            response = self.stub.ExpandRelated(
                pb.ExpandRelatedRequest(ref_ids=[seed.ref_id], top_k=top_k),
                timeout=RPC_TIMEOUT_S,
            )
        except grpc.RpcError as exc:
            return _error_record(exc, started)
        returned = [r.location for r in response.related]
        return {
            "status": "ok" if returned else "empty",
            "code": "OK",
            "error": "",
            "latency_ms": _elapsed_ms(started),
            "returned": returned,
            "reasons": [[reason.name for reason in r.reasons] for r in response.related],
        }

    def fetch(self, location: str) -> dict[str, Any]:
        """GetContent(location, FULL), reduced to what the record needs (never the content)."""
        started = time.perf_counter()
        try:
            response = self.stub.GetContent(
                pb.GetContentRequest(location=location, mode=pb.CONTENT_MODE_FULL),
                timeout=RPC_TIMEOUT_S,
            )
        except grpc.RpcError as exc:
            resolution = resolution_from_error(exc)
            return {
                "requested": location,
                "status": _status_name(exc),
                "error": _error_text(exc),
                "latency_ms": _elapsed_ms(started),
                "resolved_location": "",
                "content_chars": 0,
                "reason": resolution.reason if resolution else "",
                "rule": resolution.rule if resolution else "",
                "candidates": list(resolution.candidates) if resolution else [],
                "_content": "",
            }
        return {
            "requested": location,
            "status": "OK",
            "error": "",
            "latency_ms": _elapsed_ms(started),
            "resolved_location": response.location,
            "content_chars": len(response.content),
            "truncated": response.truncated,
            "reason": response.resolution.reason,
            "rule": response.resolution.rule,
            "candidates": list(response.resolution.candidates),
            "_content": response.content,
        }


def _elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 2)


def _case_header(case: Case) -> dict[str, Any]:
    header: dict[str, Any] = {"id": case.id, "tag": case.tag, "lang": case.lang}
    for name in ("query", "fetch_location", "expect_fetch", "related"):
        value = getattr(case, name)
        if value is not None:
            header[name] = value
    header["acceptable"] = list(case.acceptable)
    if case.sections:
        header["sections"] = list(case.sections)
    header["kinds"] = list(case.kinds)
    header["mode"] = case.mode
    if case.expect_abstain:
        header["expect_abstain"] = True
    header["surface"] = case.surface
    if case.expected_preview_terms:
        header["expected_preview_terms"] = list(case.expected_preview_terms)
    return header


def run_search_case(client: RetrievalClient, case: Case, top_k: int) -> dict[str, Any]:
    """Search, score, record previews, then fetch the location search actually ranked first."""
    record: dict[str, Any] = {}
    search, results = client.search(case, top_k)
    record["search"] = search
    if case.expect_abstain:
        # Unanswerable on purpose: only whether the search abstained is scored.
        record["abstain_correct"] = bool(search.get("abstained"))
        return record
    score = scoring.score_search(search["returned"], case.acceptable, case.sections, top_k)
    record.update(score.as_dict())
    record["redundant"] = scoring.redundant_results([r.snippet for r in results])

    previews = [r.preview for r in results[:PREVIEW_DEPTH]]
    record["previews"] = previews
    record["preview_lengths"] = [scoring.preview_chars(p) for p in previews]
    record["preview_terms_found"] = scoring.preview_terms_found(
        case.expected_preview_terms, previews
    )
    record["preview_terms_found_top1"] = scoring.preview_terms_found(
        case.expected_preview_terms, previews[:1]
    )

    if results:
        fetched = client.fetch(results[0].location)
        content = fetched.pop("_content")
        record["fetch"] = fetched
        record["fetch_success"] = scoring.fetch_succeeded(fetched["status"], content)
    else:
        record["fetch"] = None
        record["fetch_success"] = None
    return record


def run_fetch_case(client: RetrievalClient, case: Case) -> dict[str, Any]:
    """Fetch a stale or variant location directly and compare the outcome to the expectation."""
    assert case.fetch_location is not None and case.expect_fetch is not None
    fetched = client.fetch(case.fetch_location)
    content = fetched.pop("_content")
    outcome = scoring.classify_fetch_outcome(fetched["status"], content, fetched["candidates"])
    fetched["expect"] = case.expect_fetch
    fetched["outcome"] = outcome
    fetched["passed"] = scoring.stale_location_passed(
        case.expect_fetch, outcome, fetched["resolved_location"], case.acceptable
    )
    return fetched


def run_related_case(client: RetrievalClient, case: Case, top_k: int) -> dict[str, Any]:
    """ExpandRelated from the case's location, scored at page / file level like a search."""
    assert case.related is not None
    found = client.related(case.related, top_k)
    score = scoring.score_search(found["returned"], case.acceptable, (), top_k)
    return {
        "related_search": found,
        "related_rank": score.rank,
        "related_hits": score.hits,
        "related_rr": score.rr,
    }


def run_case(client: RetrievalClient, case: Case, top_k: int) -> dict[str, Any]:
    """One case's record; an unexpected failure is recorded instead of ending the run."""
    record = _case_header(case)
    try:
        if case.related is not None:
            record.update(run_related_case(client, case, top_k))
        if case.query is not None:
            record.update(run_search_case(client, case, top_k))
        if case.fetch_location is not None:
            record["stale"] = run_fetch_case(client, case)
    except Exception as exc:  # the run must survive any single case
        record["harness_error"] = f"{type(exc).__name__}: {exc}"
        if case.query is not None and "hits" not in record and not case.expect_abstain:
            record.update(scoring.score_search([], case.acceptable, case.sections, top_k).as_dict())
            record["search"] = {"status": "error", "code": "HARNESS", "error": str(exc)}
            record.setdefault("fetch_success", None)
        if case.fetch_location is not None and "stale" not in record:
            record["stale"] = {"outcome": "error:HARNESS", "passed": False, "error": str(exc)}
    return record


def run_cases(
    client: RetrievalClient,
    cases: Sequence[Case],
    top_k: int,
    progress: Callable[[int, int, dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every case in order and return their records."""
    records = []
    for index, case in enumerate(cases, start=1):
        record = run_case(client, case, top_k)
        records.append(record)
        if progress is not None:
            progress(index, len(cases), record)
    return records


def describe_sources(response: pb.ListSourcesResponse) -> list[dict[str, Any]]:
    """The corpus as the daemon reports it, for attribution in the run record."""
    return [
        {
            "name": s.name,
            "kind": s.kind,
            "state": pb.SourceState.Name(s.state),
            "document_count": s.document_count,
            "block_count": s.block_count,
            "generation": s.generation,
            "last_error": s.last_error,
        }
        for s in response.sources
    ]
