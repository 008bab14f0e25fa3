"""What the HTTP door refuses, against a real daemon (and the gRPC door, where it shares the
finding): clients too slow to finish a request, more connections than the cap, a Host it does
not answer to (DNS rebinding), a body not declared JSON (a cross-origin simple request), a
deadline already past; and what a caller cannot make it do: grow the log by the line (bad
tokens, bodies abandoned midway, gRPC answers left unread) or the error message by the name (a
huge list of unknown sources, on both doors).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import resource
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support import h2raw
from tests.support.daemon import CORPUS
from tests.support.http import HttpDaemon, config_text, post, write
from tests.support.waiting import wait_for

TOKEN = "s3cret"
AUTH = {"authorization": f"Bearer {TOKEN}"}
# Bounds a broken daemon would hang on; nothing asserts how soon anything happened.
GENEROUS = 120.0
POLL = 0.25


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-door-tree")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "docs/tutorial")
    write(root / "code/app.py", "def handler():\n    return 1\n")
    return root


def _door(tree: Path, work: Path, *lines: str) -> HttpDaemon:
    server = "\n".join(["watch = false", f'auth_token = "{TOKEN}"', *lines])
    config = write(work / "c.toml", config_text(tree, server))
    return HttpDaemon(["--config", str(config), "--log-level", "debug"], work / "state")


@pytest.fixture(scope="module")
def door(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpDaemon]:
    """Default deadlines, two more Host names allowed."""
    allowed = 'http_allowed_hosts = ["docs.internal", "proxy.internal:8443"]'
    d = _door(tree, tmp_path_factory.mktemp("http-door"), allowed)
    d.start()
    yield d
    d.terminate()


@pytest.fixture(scope="module")
def slow_door(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpDaemon]:
    """Deadlines of a second for headers and body, for the tests that trickle them."""
    work = tmp_path_factory.mktemp("http-slow-door")
    d = _door(tree, work, "http_header_timeout_seconds = 1", "http_body_timeout_seconds = 1")
    d.start()
    yield d
    d.terminate()


def _log_since(daemon: HttpDaemon, offset: int) -> str:
    return daemon.log_path.read_bytes()[offset:].decode("utf-8", "replace")


def _connect(daemon: HttpDaemon) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", daemon.http_port), timeout=GENEROUS)
    sock.settimeout(POLL)
    return sock


def _trickle_until_closed(sock: socket.socket, stream: Iterator[bytes]) -> bytes:
    """Send a byte whenever POLL seconds pass without an answer, until the daemon closes the
    connection; what it answered meanwhile."""
    answer = b""
    for byte in itertools.islice(stream, int(GENEROUS / POLL)):
        try:
            sock.sendall(byte)
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return answer
        if not chunk:
            return answer
        answer += chunk
    raise AssertionError(f"the daemon kept a byte-a-tick client for {GENEROUS}s: {answer!r}")


def _forever(head: bytes, filler: bytes) -> Iterator[bytes]:
    for i in range(len(head)):
        yield head[i : i + 1]
    while True:
        yield filler


def test_headers_sent_a_byte_at_a_time_are_cut_off(slow_door):
    door = slow_door
    with _connect(door) as sock:
        head = b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: "
        answer = _trickle_until_closed(sock, _forever(head, b"a"))
    assert answer.startswith(b"HTTP/1.1 408"), answer
    with door.client() as client:
        assert client.get("/healthz").json() == {"status": "SERVING"}


def test_a_body_sent_a_byte_at_a_time_is_cut_off(slow_door):
    door = slow_door
    offset = door.log_path.stat().st_size
    with _connect(door) as sock:
        head = (
            b"POST /v1/Search HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer s3cret\r\n"
            b"content-type: application/json\r\ncontent-length: 100000\r\n\r\n"
        )
        sock.sendall(head)
        answer = _trickle_until_closed(sock, _forever(b'{"query": "', b" "))
    assert answer.startswith(b"HTTP/1.1 408"), answer
    # The app saw the client leave mid-body: one INFO line, no traceback, no ERROR.
    gone = "went away before its request body was in"
    assert wait_for(lambda: gone in _log_since(door, offset), GENEROUS), door.log()
    since = _log_since(door, offset)
    assert "Traceback" not in since and " ERROR " not in since, since
    with door.client(headers=AUTH) as client:
        assert post(client, "Search", {"query": "path parameters"}).json()["results"]


def test_a_client_leaving_mid_body_is_one_line_without_a_traceback(door):
    offset = door.log_path.stat().st_size
    with _connect(door) as sock:
        sock.sendall(
            b"POST /v1/Search HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer s3cret\r\n"
            b"content-type: application/json\r\ncontent-length: 1000\r\n\r\n"
            b'{"query": "par'
        )
    gone = "went away before its request body was in"
    assert wait_for(lambda: gone in _log_since(door, offset), GENEROUS), door.log()
    since = _log_since(door, offset)
    assert since.count(gone) == 1
    assert "Traceback" not in since and " ERROR " not in since, since


@pytest.fixture
def capped(tree: Path, tmp_path: Path) -> Iterator[HttpDaemon]:
    """Three connections at most, and deadlines long enough never to end one here."""
    server = "\n".join(
        [
            "watch = false",
            "http_max_connections = 3",
            "http_header_timeout_seconds = 600",
            "http_body_timeout_seconds = 600",
        ]
    )
    config = write(tmp_path / "c.toml", config_text(tree, server))
    d = HttpDaemon(["--config", str(config)], tmp_path / "state")
    d.start()
    yield d
    d.terminate()


def _closed_answer(sock: socket.socket) -> bytes:
    """All the daemon sends until it closes the connection."""
    sock.settimeout(GENEROUS)
    return b"".join(iter(lambda: sock.recv(4096), b""))


def test_at_the_cap_a_new_client_pushes_out_the_longest_waiting_one(capped):
    held = [_connect(capped) for _ in range(3)]
    try:
        for sock in held:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # never finished
        with capped.client() as client:
            assert client.get("/healthz").json() == {"status": "SERVING"}
        assert _closed_answer(held[0]).startswith(b"HTTP/1.1 503"), "the oldest made room"
    finally:
        for sock in held:
            sock.close()


def test_connections_beyond_the_cap_are_refused_when_all_have_a_request(capped):
    body_under_way = (
        b"POST /v1/Search HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: 100\r\nexpect: 100-continue\r\n\r\n"
    )
    held = [_connect(capped) for _ in range(3)]
    try:
        for sock in held:
            sock.sendall(body_under_way)
            sock.settimeout(GENEROUS)
            # The app asks for the body: the request is under way on this connection.
            assert sock.recv(4096).startswith(b"HTTP/1.1 100")
        with _connect(capped) as extra:
            assert _closed_answer(extra).startswith(b"HTTP/1.1 503")
        # gRPC is another door and keeps answering while HTTP is full.
        assert capped.stub.ListSources(pb.ListSourcesRequest(), timeout=GENEROUS).sources
    finally:
        for sock in held:
            sock.close()
    with capped.client() as client:
        assert wait_for(lambda: _healthz(client) == 200, GENEROUS), capped.log()


@contextlib.contextmanager
def _descriptor_limit(soft: int) -> Iterator[None]:
    """This process's soft descriptor limit lowered to ``soft`` (a daemon started meanwhile
    inherits it), then put back."""
    before, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (before, hard))


def test_a_flood_of_half_sent_requests_under_a_1024_descriptor_limit_leaves_health_up(
    tree, tmp_path
):
    """The probe's finding: 1,100 half-sent requests against a daemon allowed 1,024 files."""
    flood = 1100
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < flood + 200:
        pytest.skip(f"needs a descriptor limit of {flood + 200} for the flood's own sockets")
    config = write(tmp_path / "c.toml", config_text(tree))
    d = HttpDaemon(["--config", str(config)], tmp_path / "state")
    with _descriptor_limit(1024):
        d.start_process()
    try:
        d.wait_serving()
        offset = d.log_path.stat().st_size
        wanted = flood + 200 if hard == resource.RLIM_INFINITY else hard
        with _descriptor_limit(max(wanted, resource.getrlimit(resource.RLIMIT_NOFILE)[0])):
            held = []
            try:
                for _ in range(flood):
                    held.append(_connect(d))
                    held[-1].sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")
                with d.client() as client:
                    assert client.get("/healthz").json() == {"status": "SERVING"}
            finally:
                for sock in held:
                    sock.close()
        since = _log_since(d, offset)
        assert "out of system resource" not in since, since[-3000:]
        assert len(since.splitlines()) < 100, len(since.splitlines())
    finally:
        d.terminate()


def _healthz(client) -> int:
    try:
        return client.get("/healthz").status_code
    except Exception:  # a connection refused while the held ones close
        return 0


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "docs.internal.evil", ""],
)
def test_a_foreign_host_header_is_refused(door, host):
    with door.client(headers={**AUTH, "host": host}) as client:
        for reply in (
            post(client, "Search", {"query": "path parameters"}),
            client.get("/v1/search", params={"q": "path parameters"}),
            client.get("/"),
        ):
            assert reply.status_code == 403, reply.text
            assert reply.json()["status"] == "PERMISSION_DENIED"
        # Probes address pods by IP: health answers whatever the Host.
        assert client.get("/readyz").status_code == 200


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",
        "LOCALHOST:8080",
        "[::1]",
        "[::1]:8080",
        "docs.internal",
        "docs.internal:443",
        "proxy.internal:8443",
    ],
)
def test_loopback_and_configured_hosts_are_answered(door, host):
    with door.client(headers={**AUTH, "host": host}) as client:
        assert post(client, "Search", {"query": "path parameters"}).json()["results"]


def test_a_host_allowed_with_a_port_is_answered_on_that_port_only(door):
    with door.client(headers={**AUTH, "host": "proxy.internal:9999"}) as client:
        assert post(client, "ListSources").status_code == 403


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded"],
)
def test_a_body_not_declared_json_is_refused_415(door, content_type):
    headers = {**AUTH, **({"content-type": content_type} if content_type else {})}
    body = json.dumps({"query": "path parameters"}).encode()
    with door.client() as client:
        reply = client.post("/v1/Search", content=body, headers=headers)
    assert reply.status_code == 415, reply.text
    assert reply.json()["status"] == "INVALID_ARGUMENT"
    assert "application/json" in reply.json()["message"]


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON; charset=utf-8"])
def test_a_json_body_declared_json_is_answered(door, content_type):
    body = json.dumps({"query": "path parameters"}).encode()
    with door.client() as client:
        reply = client.post(
            "/v1/Search", content=body, headers={**AUTH, "content-type": content_type}
        )
    assert reply.status_code == 200 and reply.json()["results"], reply.text


def test_an_empty_body_needs_no_content_type(door):
    with door.client(headers=AUTH) as client:
        assert client.post("/v1/ListSources").json()["sources"]


def test_a_flood_of_bad_tokens_logs_a_bounded_number_of_lines(door):
    calls = 400
    offset = door.log_path.stat().st_size
    with door.client(headers={"authorization": "Bearer wrong"}) as client:
        for _ in range(calls):
            assert post(client, "ListSources").status_code == 401
    channel = grpc.insecure_channel(door.address)
    try:
        stub = pb_stub(channel)
        for _ in range(calls):
            with pytest.raises(grpc.RpcError) as refused:
                stub.ListSources(
                    pb.ListSourcesRequest(), metadata=[("authorization", "Bearer wrong")]
                )
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        channel.close()
    lines = [line for line in _log_since(door, offset).splitlines() if "bearer token" in line]
    # Five a minute per kind of line (two kinds here); a slow run spans a few minutes at most.
    assert 2 <= len(lines) <= 40, len(lines)


def pb_stub(channel: grpc.Channel):
    from scriptorium.v1 import retrieval_pb2_grpc

    return retrieval_pb2_grpc.RetrievalServiceStub(channel)


UNKNOWN = [f"nosuch-{i}" for i in range(100_000)]


def test_a_huge_unknown_source_list_is_invalid_argument_with_a_short_message(door):
    with pytest.raises(grpc.RpcError) as refused:
        door.stub.Search(
            pb.SearchRequest(query="path parameters", sources=UNKNOWN),
            metadata=list(AUTH.items()),
            timeout=GENEROUS,
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    message = refused.value.details()
    assert len(message) < 1000, len(message)
    assert "'nosuch-0'" in message and "99995 more" in message
    with door.client(headers=AUTH) as client:
        reply = post(client, "Search", {"query": "path parameters", "sources": UNKNOWN})
    assert reply.status_code == 400
    assert reply.json()["status"] == "INVALID_ARGUMENT"
    assert reply.json()["message"] == message
    with door.client(headers=AUTH) as client:
        odd = client.get("/v1/search", params={"q": "x", "k" * 8000: "1"})
    assert odd.status_code == 400 and len(odd.json()["message"]) < 1000, odd.text


@pytest.mark.parametrize("timeout", ["1n", "1u", "1m"])
def test_a_deadline_in_nanoseconds_is_exceeded_at_once(door, timeout):
    method = "/scriptorium.v1.RetrievalService/ListSources"
    message = pb.ListSourcesRequest().SerializeToString()
    headers = {"grpc-timeout": timeout, **AUTH}
    reply = h2raw.call(door.port, method, message, headers, GENEROUS)
    assert not reply.answered and reply.kinds, reply
    with door.client(headers={**AUTH, "grpc-timeout": timeout}) as client:
        answer = post(client, "ListSources")
    assert answer.status_code == 504, answer.text
    assert answer.json()["status"] == "DEADLINE_EXCEEDED"
    # A deadline with room is kept as before.
    reply = h2raw.call(door.port, method, message, {"grpc-timeout": "60S", **AUTH}, GENEROUS)
    assert reply.answered, reply


def test_grpc_clients_that_leave_their_answers_unread_are_a_few_lines_without_tracebacks(door):
    offset = door.log_path.stat().st_size
    method = "/scriptorium.v1.RetrievalService/Search"
    message = pb.SearchRequest(query="path parameters").SerializeToString()
    for _ in range(40):
        h2raw.leave_unread(door.port, method, message, AUTH, GENEROUS)
    gone = "went away before its answer was sent"

    def noticed() -> bool:
        since = _log_since(door, offset)
        return gone in since or "ExecuteBatchError" in since

    assert wait_for(noticed, GENEROUS), door.log()
    since = _log_since(door, offset)
    assert "Traceback" not in since and "ExecuteBatchError" not in since, since[-3000:]
    assert gone in since
    assert since.count(gone) <= 15  # five a minute, however many clients leave
