"""What one connection can make the daemon hold: streams per connection, bytes per response.

A client that opens many streams and never reads their answers pins each response in the
daemon until it reads. ``max_concurrent_streams`` caps the streams one connection may have
open (the daemon advertises it in its HTTP/2 SETTINGS, and refuses a stream past it), and
``max_send_message_bytes`` caps one response. A raw HTTP/2 peer (``tests/support/http2.py``)
shows the first, since a gRPC client queues its streams past the limit itself.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support import http2
from tests.support.daemon import running
from tests.support.trees import markdown_config, write_tree

WATCH = "/grpc.health.v1.Health/Watch"


def _config(tmp_path: Path, server: str) -> Path:
    docs = write_tree(
        tmp_path / "docs",
        {
            "small.md": "# Small\n\nA short page about otters.\n",
            "large.md": "# Large\n\n" + "A long page about beavers and their dams.\n" * 200,
        },
    )
    return markdown_config(tmp_path / "scriptorium.toml", {"docs": docs}, server=server)


def _until(peer: http2.RawHttp2, answered: set[int], refused: dict[int, int], done) -> None:
    """Read frames, noting streams answered and reset, until ``done()`` (a socket timeout
    bounds a server that never gets there)."""
    while not done():
        frame = peer.read()
        if frame.kind in (http2.HEADERS, http2.DATA) and frame.stream:
            answered.add(frame.stream)
        elif frame.kind == http2.RST_STREAM:
            refused[frame.stream] = int.from_bytes(frame.payload, "big")


def test_a_connection_past_max_concurrent_streams_gets_no_more_streams(tmp_path):
    config = _config(tmp_path, "watch = false\nmax_concurrent_streams = 2")
    with running(["--config", str(config)], tmp_path / "state") as daemon:
        peer = http2.RawHttp2("127.0.0.1", daemon.port)
        try:
            assert peer.handshake().get(http2.MAX_CONCURRENT_STREAMS) == 2
            watch = health_pb2.HealthCheckRequest(service="").SerializeToString()
            # Health/Watch streams stay open: two fill the connection, a third is refused.
            for stream in (1, 3, 5):
                peer.call(stream, WATCH, watch)
            answered: set[int] = set()
            refused: dict[int, int] = {}
            _until(
                peer,
                answered,
                refused,
                lambda: {1, 3} <= answered and (5 in refused or 5 in answered),
            )
            assert refused == {5: http2.REFUSED_STREAM}
            assert 5 not in answered
            # A stream that ends gives its place to the next one.
            peer.cancel(1)
            peer.call(7, WATCH, watch)
            _until(peer, answered, refused, lambda: 7 in answered or 7 in refused)
            assert 7 in answered and 7 not in refused
        finally:
            peer.close()
        # A gRPC client waits for a place instead: all of its calls are answered.
        with grpc.insecure_channel(daemon.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            watches = [stub.Watch(health_pb2.HealthCheckRequest()) for _ in range(2)]
            assert [next(w).status for w in watches] == [health_pb2.HealthCheckResponse.SERVING] * 2
            waiting = stub.Check.future(health_pb2.HealthCheckRequest(), timeout=60)
            watches[0].cancel()
            assert waiting.result().status == health_pb2.HealthCheckResponse.SERVING
            watches[1].cancel()


def test_a_response_past_max_send_message_bytes_is_refused(tmp_path):
    config = _config(tmp_path, "watch = false\nmax_send_message_bytes = 4096")
    with running(["--config", str(config)], tmp_path / "state") as daemon:
        small = daemon.stub.GetContent(
            pb.GetContentRequest(location="small", mode=pb.CONTENT_MODE_FULL), timeout=30
        )
        assert "otters" in small.content
        with pytest.raises(grpc.RpcError) as refused:
            daemon.stub.GetContent(
                pb.GetContentRequest(location="large", mode=pb.CONTENT_MODE_FULL), timeout=30
            )
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        # The daemon serves on.
        assert daemon.stub.Search(pb.SearchRequest(query="otters"), timeout=30).results
