"""What the HTTP/JSON door costs: Search over HTTP against the same Search over gRPC.

One daemon serves both (``serve --http``), so the index, the engine and the servicer are the
same; only the transport and the JSON mapping differ. The calls alternate in rounds (see
``bench.ranking_cost.alternating``), and the trivial floors (gRPC health Check, HTTP
/healthz) are measured the same way, so the ratios compare like with like in one run.
"""

from __future__ import annotations

from pathlib import Path

import httpx
from grpc_health.v1 import health_pb2

from bench.measure import ratio
from bench.queries import QUERIES
from bench.ranking_cost import alternating
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.http import HttpDaemon


def http_cost(config: Path, state: Path, quick: bool) -> dict:
    rounds, per_round = (3, 60) if quick else (6, 200)
    with HttpDaemon(["--config", str(config)], state) as daemon:
        stub, health = daemon.stub, daemon.health
        with httpx.Client(base_url=daemon.base, timeout=60) as client:

            def query(i: int) -> str:
                return QUERIES[i % len(QUERIES)]

            calls = {
                "grpc_search": lambda i: stub.Search(pb.SearchRequest(query=query(i))),
                "http_search": lambda i: client.post(
                    "/v1/Search", json={"query": query(i)}
                ).raise_for_status(),
                "http_get_search": lambda i: client.get(
                    "/v1/search", params={"q": query(i)}
                ).raise_for_status(),
                "grpc_health": lambda i: health.Check(health_pb2.HealthCheckRequest()),
                "http_healthz": lambda i: client.get("/healthz").raise_for_status(),
            }
            measured = alternating(calls, rounds, per_round)
    out: dict = {"calls": measured, "rounds": rounds, "per_round": per_round}
    out["ratios"] = {
        "search p50 http/grpc": ratio(
            measured["http_search"]["p50_ms"], measured["grpc_search"]["p50_ms"]
        ),
        "search p90 http/grpc": ratio(
            measured["http_search"]["p90_ms"], measured["grpc_search"]["p90_ms"]
        ),
        "GET search p50 http/grpc": ratio(
            measured["http_get_search"]["p50_ms"], measured["grpc_search"]["p50_ms"]
        ),
        "floor p50 healthz/health": ratio(
            measured["http_healthz"]["p50_ms"], measured["grpc_health"]["p50_ms"]
        ),
    }
    return out


def render_http_cost(cost: dict) -> list[str]:
    if "calls" not in cost:
        return []
    lines = [f"HTTP against gRPC   (one daemon, {cost['rounds']} alternating rounds)"]
    for name, m in cost["calls"].items():
        lines.append(f"  {name:<18} p50 {m['p50_ms']} ms, p90 {m['p90_ms']} ms (n={m['n']})")
    for name, value in cost["ratios"].items():
        lines.append(f"  ratio {name:<28} {value:>6}x")
    return lines
