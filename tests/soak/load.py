"""A bounded load generator for a running daemon: loopback only, capped in time and in calls.

Concurrent workers, each with its own channel (as separate clients would have), mix all six
RPCs with fixed weights; every Nth call is a deliberately invalid Search that must answer
INVALID_ARGUMENT. A sampler reads the daemon's resident memory from ``/proc`` while the load
runs. The report holds p50/p99 latency and errors per RPC and the RSS trend.

    python -m tests.soak.load --target 127.0.0.1:50051 --pid 12345 --seconds 60

The exit status is 1 when any call failed unexpectedly, so the module doubles as a smoke check.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import random
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc

RPCS = (
    "Search",
    "GetContent",
    "ExpandRelated",
    "SummarizeFlow",
    "GuideImplementation",
    "ListSources",
)
# Relative weights: agents search and fetch far more often than they ask for guides.
WEIGHTS = (8, 5, 2, 2, 1, 2)
DELIBERATE = "deliberate"
DELIBERATE_CODE = grpc.StatusCode.INVALID_ARGUMENT
DEFAULT_QUERIES = (
    "declare path parameters with types",
    "request body pydantic model",
    "dependencies with yield",
    "background tasks after response",
    "OAuth2PasswordBearer",
    "CORS middleware allow origins",
    "upload files with form data",
    "query parameters default values",
    "APIRouter include_router",
    "response_model exclude unset",
)
MAX_REFS = 200
_CONTENT_MODES = (pb.CONTENT_MODE_SNIPPET, pb.CONTENT_MODE_FULL, pb.CONTENT_MODE_MULTI_RANGE)
_KINDS = ((), (pb.CORPUS_DOCS,), (pb.CORPUS_CODE,))


def check_loopback(target: str) -> None:
    """Refuse any target that is not a loopback address: this tool never leaves the machine."""
    body = target
    for scheme in ("ipv4:", "ipv6:"):
        if body.startswith(scheme):
            body = body[len(scheme) :]
    for address in body.split(","):
        host, sep, port = address.strip().rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError(f"not a host:port target: {address!r}")
        host = host.strip("[]")
        if host == "localhost":
            continue
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"refusing non-loopback target {address!r}")


def rss_kib(pid: int) -> int | None:
    """Resident set size of ``pid`` in KiB, or None once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(len(ordered), rank) - 1]


@dataclass(frozen=True)
class LoadSpec:
    """What to run. ``seconds`` and ``max_calls`` both bound the run; the first reached wins.
    ``until`` (given the run so far: ``issued`` calls, ``rss`` samples) can end it earlier, on
    an event rather than a clock.

    RSS samples from the first ``warmup`` seconds are kept but left out of the growth figure:
    caches fill while the first calls arrive, which is not a leak.
    """

    target: str
    seconds: float
    max_calls: int
    workers: int = 4
    pid: int | None = None
    sample_every: float = 0.25
    warmup: float = 0.0
    call_timeout: float = 30.0
    deliberate_every: int = 50
    queries: tuple[str, ...] = DEFAULT_QUERIES
    token: str | None = None
    seed: int = 7
    until: Callable[[_Run], bool] | None = None

    def __post_init__(self) -> None:
        check_loopback(self.target)
        if self.seconds <= 0 or self.max_calls < 1 or self.workers < 1:
            raise ValueError("seconds, max_calls and workers must be positive")
        if not 0 <= self.warmup < self.seconds:
            raise ValueError("warmup must be shorter than the run")
        if not self.queries:
            raise ValueError("at least one query is needed")


@dataclass
class RpcStats:
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)

    @property
    def calls(self) -> int:
        return len(self.latencies)

    @property
    def ok(self) -> int:
        return self.calls - sum(self.errors.values())


@dataclass
class LoadReport:
    stats: dict[str, RpcStats]
    deliberate: Counter[str]
    rss: list[tuple[float, int]]
    elapsed: float
    warmup: float = 0.0

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.stats.values()) + sum(self.deliberate.values())

    @property
    def unexpected(self) -> Counter[str]:
        """Every failure that was not asked for, as ``"Rpc:STATUS"`` counts."""
        out: Counter[str] = Counter()
        for name, stats in self.stats.items():
            for code, n in stats.errors.items():
                out[f"{name}:{code}"] += n
        for code, n in self.deliberate.items():
            if code != DELIBERATE_CODE.name:
                out[f"{DELIBERATE}:{code}"] += n
        return out

    def rss_quarters(self) -> tuple[float, float] | None:
        """Median RSS (KiB) of the first and the last quarter of the samples after warm-up."""
        values = [kib for t, kib in self.rss if t >= self.warmup]
        if len(values) < 8:
            return None
        quarter = len(values) // 4
        return statistics.median(values[:quarter]), statistics.median(values[-quarter:])

    def rss_growth(self) -> float | None:
        quarters = self.rss_quarters()
        return None if quarters is None else quarters[1] / quarters[0]

    def table(self) -> str:
        lines = [f"{'rpc':<20} {'calls':>7} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}"]
        for name in RPCS:
            s = self.stats[name]
            lines.append(
                f"{name:<20} {s.calls:>7} {percentile(s.latencies, 0.5) * 1000:>8.1f}"
                f" {percentile(s.latencies, 0.99) * 1000:>8.1f} {sum(s.errors.values()):>7}"
            )
        deliberate = ", ".join(f"{c} x{n}" for c, n in sorted(self.deliberate.items())) or "none"
        lines.append(f"deliberate bad calls: {deliberate}")
        rate = self.calls / self.elapsed if self.elapsed else 0.0
        lines.append(f"{self.calls} calls in {self.elapsed:.1f} s ({rate:.0f}/s)")
        quarters = self.rss_quarters()
        if quarters is not None:
            first, last = quarters
            peak = max(kib for _, kib in self.rss)
            lines.append(
                f"rss: first-quarter median {first / 1024:.1f} MiB, last-quarter median "
                f"{last / 1024:.1f} MiB (x{last / first:.2f}), peak {peak / 1024:.1f} MiB, "
                f"{len(self.rss)} samples, first {self.warmup:.0f} s not compared"
            )
        unexpected = self.unexpected
        if unexpected:
            lines.append(
                "UNEXPECTED: " + ", ".join(f"{k} x{n}" for k, n in sorted(unexpected.items()))
            )
        return "\n".join(lines)


class _Run:
    """Shared state of one run: the call budget, the ref pool and the results."""

    def __init__(self, spec: LoadSpec) -> None:
        self.spec = spec
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.deadline = self.started + spec.seconds
        self.issued = 0
        self.refs: list[str] = []
        self.stats = {name: RpcStats() for name in RPCS}
        self.deliberate: Counter[str] = Counter()
        self.rss: list[tuple[float, int]] = []
        self.done = threading.Event()

    def claim(self) -> int | None:
        """The next call number, or None when the time or the call budget is spent."""
        with self.lock:
            if self.issued >= self.spec.max_calls or time.monotonic() >= self.deadline:
                return None
            if self.spec.until is not None and self.spec.until(self):
                return None
            self.issued += 1
            return self.issued

    def add_refs(self, refs: Sequence[str]) -> None:
        with self.lock:
            for ref in refs:
                if len(self.refs) < MAX_REFS and ref not in self.refs:
                    self.refs.append(ref)

    def pick_refs(self, rng: random.Random, n: int) -> list[str]:
        with self.lock:
            if not self.refs:
                return []
            return rng.sample(self.refs, min(n, len(self.refs)))

    def record(self, name: str, seconds: float, error: str | None) -> None:
        with self.lock:
            if name == DELIBERATE:
                self.deliberate[error or "OK"] += 1
                return
            stats = self.stats[name]
            stats.latencies.append(seconds)
            if error is not None:
                stats.errors[error] += 1


def _makers(run: _Run, rng: random.Random) -> dict[str, Callable[[], object | None]]:
    """For each RPC, a maker of its next request; None means "no refs yet, search instead"."""
    spec = run.spec

    def search():
        kinds = rng.choice(_KINDS)
        return pb.SearchRequest(
            query=rng.choice(spec.queries), top_k=rng.choice((5, 10)), kinds=kinds
        )

    def get_content():
        refs = run.pick_refs(rng, 1)
        return (
            pb.GetContentRequest(ref_id=refs[0], mode=rng.choice(_CONTENT_MODES)) if refs else None
        )

    def expand_related():
        refs = run.pick_refs(rng, rng.choice((1, 2)))
        return pb.ExpandRelatedRequest(ref_ids=refs, top_k=8) if refs else None

    def summarize_flow():
        refs = run.pick_refs(rng, rng.choice((1, 2)))
        return pb.SummarizeFlowRequest(ref_ids=refs, topic=rng.choice(spec.queries))

    return {
        "Search": search,
        "GetContent": get_content,
        "ExpandRelated": expand_related,
        "SummarizeFlow": summarize_flow,
        "GuideImplementation": lambda: pb.GuideImplementationRequest(
            topic=rng.choice(spec.queries)
        ),
        "ListSources": pb.ListSourcesRequest,
    }


def _worker(run: _Run, index: int) -> None:
    spec = run.spec
    rng = random.Random(spec.seed * 1000 + index)
    metadata = (("authorization", f"Bearer {spec.token}"),) if spec.token else ()
    makers = _makers(run, rng)
    with grpc.insecure_channel(spec.target) as channel:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        methods = {name: getattr(stub, name) for name in RPCS}
        while (number := run.claim()) is not None:
            if spec.deliberate_every and number % spec.deliberate_every == 0:
                name = DELIBERATE
                request = pb.SearchRequest(query="deliberately bad", mode="no-such-mode")
                method = methods["Search"]
            else:
                name = rng.choices(RPCS, weights=WEIGHTS)[0]
                request = makers[name]()
                if request is None:
                    name = "Search"
                    request = makers[name]()
                method = methods[name]
            started = time.monotonic()
            error = None
            try:
                reply = method(request, timeout=spec.call_timeout, metadata=metadata)
            except grpc.RpcError as err:
                error = err.code().name
                reply = None
            run.record(name, time.monotonic() - started, error)
            if name == "Search" and reply is not None:
                run.add_refs([r.ref_id for r in reply.results[:3]])


def _sampler(run: _Run) -> None:
    pid = run.spec.pid
    if pid is None:
        return
    while True:
        kib = rss_kib(pid)
        if kib is not None:
            with run.lock:
                run.rss.append((time.monotonic() - run.started, kib))
        if run.done.wait(run.spec.sample_every):
            return


def run_load(spec: LoadSpec) -> LoadReport:
    """Run the load described by ``spec`` to completion and report on it."""
    run = _Run(spec)
    sampler = threading.Thread(target=_sampler, args=(run,), name="rss-sampler", daemon=True)
    sampler.start()
    workers = [
        threading.Thread(target=_worker, args=(run, i), name=f"load-{i}", daemon=True)
        for i in range(spec.workers)
    ]
    for thread in workers:
        thread.start()
    # Every call carries its own deadline, so a worker ends within one call of the run's end.
    join_by = run.deadline + spec.call_timeout + 5.0
    for thread in workers:
        thread.join(max(0.0, join_by - time.monotonic()))
    elapsed = time.monotonic() - run.started
    run.done.set()
    sampler.join(5.0)
    hung = [t.name for t in workers if t.is_alive()]
    if hung:
        raise RuntimeError(f"load workers did not finish: {', '.join(hung)}")
    with run.lock:
        return LoadReport(run.stats, run.deliberate, list(run.rss), elapsed, spec.warmup)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="127.0.0.1:50051", help="loopback host:port")
    parser.add_argument("--pid", type=int, default=None, help="daemon pid, to sample its RSS")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--max-calls", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--token", default=None, help="bearer token, when the daemon needs one")
    parser.add_argument("--deliberate-every", type=int, default=50)
    parser.add_argument("--warmup", type=float, default=0.0, help="seconds of RSS not compared")
    args = parser.parse_args(argv)
    try:
        spec = LoadSpec(
            target=args.target,
            seconds=args.seconds,
            max_calls=args.max_calls,
            workers=args.workers,
            pid=args.pid,
            token=args.token,
            deliberate_every=args.deliberate_every,
            warmup=args.warmup,
        )
    except ValueError as exc:
        parser.error(str(exc))
    report = run_load(spec)
    print(report.table())
    return 1 if report.unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
