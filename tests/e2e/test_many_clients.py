"""Many callers at once: every call is answered or refused with a clear status, none hangs.

Agents call Search in parallel. 64 independent clients (each on its own connection, as
separate processes are) fit the default ``max_concurrent_rpcs`` (64) and are all answered;
callers past a smaller ``max_concurrent_rpcs`` are refused at once with RESOURCE_EXHAUSTED and
a sentence.
Every call has a deadline, so a hang fails the test rather than holding it.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc
from tests.support.daemon import running
from tests.support.trees import markdown_config, write_tree

CLIENTS = 64
CALLS = 5


def _config(tmp_path: Path) -> Path:
    docs = write_tree(
        tmp_path / "docs",
        {f"page{i}.md": f"# Page {i}\n\nOtters and beavers, page {i}.\n" for i in range(8)},
    )
    return markdown_config(tmp_path / "scriptorium.toml", {"docs": docs}, server="watch = false")


def _own_connection(address: str) -> grpc.Channel:
    """A channel with a connection of its own (channels with equal options share one)."""
    return grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])


def _burst(channels: list[grpc.Channel], calls: int) -> Counter[str]:
    """``calls`` searches from each of ``CLIENTS`` threads (thread i on ``channels[i]``),
    started together; how each call ended, by status code."""
    start = threading.Barrier(CLIENTS)
    ended: list[Counter[str]] = [Counter() for _ in range(CLIENTS)]

    def client(slot: int) -> None:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channels[slot])
        start.wait()
        for i in range(calls):
            try:
                found = stub.Search(pb.SearchRequest(query=f"otters page {i % 8}"), timeout=120)
                ended[slot]["OK" if found.results else "EMPTY"] += 1
            except grpc.RpcError as err:
                ended[slot][f"{err.code().name}: {err.details()}"] += 1

    threads = [threading.Thread(target=client, args=(slot,)) for slot in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(ended, Counter())


def test_64_independent_clients_are_all_answered(tmp_path):
    with running(["--config", str(_config(tmp_path))], tmp_path / "state") as daemon:
        channels = [_own_connection(daemon.address) for _ in range(CLIENTS)]
        try:
            assert _burst(channels, CALLS) == Counter({"OK": CLIENTS * CALLS})
            health = health_pb2_grpc.HealthStub(channels[0])
            status = health.Check(health_pb2.HealthCheckRequest(), timeout=120).status
            assert status == health_pb2.HealthCheckResponse.SERVING
        finally:
            for channel in channels:
                channel.close()


def test_past_max_concurrent_rpcs_the_excess_is_refused_with_a_sentence(tmp_path):
    """With fewer slots than callers, every call is answered or refused at once, never held."""
    config = markdown_config(
        tmp_path / "limited.toml",
        {"docs": _config(tmp_path).parent / "docs"},
        server="watch = false\nmax_concurrent_rpcs = 4",
    )
    with running(["--config", str(config)], tmp_path / "state") as daemon:
        channels = [_own_connection(daemon.address) for _ in range(CLIENTS)]
        try:
            ended = _burst(channels, CALLS)
        finally:
            for channel in channels:
                channel.close()
    refused = "RESOURCE_EXHAUSTED: server is at its concurrency limit (4)"
    assert set(ended) <= {"OK", refused}, ended
    assert ended["OK"] >= 1 and ended["OK"] + ended[refused] == CLIENTS * CALLS, ended
