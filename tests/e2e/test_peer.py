"""A second daemon as a peer: its results re-ranked through the front daemon, its fetches served,
and every failure (wrong token, peer gone) falling through, with a cool-down for dead peers.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, Daemon, free_port, running

TOKEN = "peer-secret-token"
# The front daemon's deadline for a call to its peer: generous, so a busy machine never makes a
# healthy peer look dead. The cool-down test, whose peer never answers, sets a short one.
TIMEOUT = 30.0
# Only the peer's documents (the advanced guide) can answer this with confidence.
QUERY = "handle websocket disconnections"


def peer_config(work: Path, server_extra: str = "") -> Path:
    """The peer: the FastAPI "advanced" guide as its default source, behind a bearer token."""
    root = work / "advanced"
    shutil.copytree(CORPUS / "docs/en/docs/advanced", root)
    path = work / "peer.toml"
    path.write_text(
        f'[server]\nwatch = false\nauth_token = "{TOKEN}"\n{server_extra}\n'
        f'[[sources]]\nname = "adv"\nkind = "markdown"\nroot = "{root}"\ndefault = true\n',
        "utf-8",
    )
    return path


def front_config(work: Path, target: str, **peer) -> Path:
    """The front daemon: two local pages first, then the peer as source ``upstream``."""
    notes = work / "notes"
    for page in ("tutorial/cors.md", "tutorial/first-steps.md"):
        (notes / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS / "docs/en/docs" / page, notes / page)
    options = {"target": target, "token": TOKEN, "timeout_seconds": TIMEOUT, **peer}
    table = "\n".join(f"{key} = {json.dumps(value)}" for key, value in options.items())
    path = work / "front.toml"
    path.write_text(
        "[server]\nwatch = false\n\n"
        f'[[sources]]\nname = "notes"\nkind = "markdown"\nroot = "{notes}"\ndefault = true\n\n'
        f'[[sources]]\nname = "upstream"\nkind = "peer"\n{table}\n',
        "utf-8",
    )
    return path


def search(stub, query: str, **kw) -> pb.SearchResponse:
    return stub.Search(pb.SearchRequest(query=query, **kw), timeout=30)


def upstream_status(stub) -> pb.SourceStatus:
    reply = stub.ListSources(pb.ListSourcesRequest(), timeout=10)
    return next(s for s in reply.sources if s.name == "upstream")


@pytest.fixture(scope="module")
def peer(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    work = tmp_path_factory.mktemp("peer")
    with running(["--config", str(peer_config(work))], work / "state") as daemon:
        yield daemon


@pytest.fixture(scope="module")
def front(
    fastapi_corpus, peer: Daemon, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Daemon]:
    work = tmp_path_factory.mktemp("front")
    with running(["--config", str(front_config(work, peer.address))], work / "state") as daemon:
        yield daemon


def test_peer_results_are_reranked_and_qualified(fastapi_corpus, front: Daemon) -> None:
    stub = front.stub
    assert upstream_status(stub).state == pb.SOURCE_STATE_LOADING
    response = search(stub, QUERY, explain=True)
    assert response.provider == "upstream"
    assert response.results
    for result in response.results:
        assert result.source == "upstream"
        assert result.location.startswith("upstream/")
        assert result.snippet and result.preview and result.doc_version
        assert "peer" in [r.name for r in result.reasons]
    top = response.results[0]
    assert top.location == "upstream/websockets#handling-disconnections-and-multiple-clients"
    stages = [s.stage for s in response.stages]
    assert "priors" in stages and "diversify" in stages
    status = upstream_status(stub)
    assert status.state == pb.SOURCE_STATE_READY
    assert status.document_count == len(list((CORPUS / "docs/en/docs/advanced").rglob("*.md")))


def test_local_answers_first_when_it_can(front: Daemon) -> None:
    response = search(front.stub, "CORS allow origins middleware")
    assert response.provider == "local"
    assert all(r.source == "notes" for r in response.results)


def test_peer_locations_fetch_through_the_peer(front: Daemon) -> None:
    stub = front.stub
    hit = search(stub, QUERY).results[0]
    reply = stub.GetContent(
        pb.GetContentRequest(
            location=hit.location, mode=pb.CONTENT_MODE_FULL, seen_doc_version=hit.doc_version
        ),
        timeout=30,
    )
    assert (reply.provider, reply.source) == ("upstream", "upstream")
    assert reply.location == hit.location
    assert reply.requested_location == hit.location
    assert reply.resolution.reason == "resolved"
    assert reply.resolution.resolved_location.startswith("upstream/")
    assert reply.doc_version == hit.doc_version and not reply.revision_skew
    assert reply.content.lstrip().startswith("#")
    by_ref = stub.GetContent(pb.GetContentRequest(ref_id=hit.ref_id), timeout=30)
    assert by_ref.provider == "upstream" and by_ref.content.strip()
    assert by_ref.location.split("#")[0] == hit.location.split("#")[0]
    # The local provider still serves its own pages.
    local = stub.GetContent(pb.GetContentRequest(location="tutorial/cors"), timeout=30)
    assert local.provider == "local"
    traces = {r.trace_id for r in (reply, by_ref, local)}
    assert len(traces) == 3 and all(re.fullmatch(r"[0-9a-f]{32}", t) for t in traces)


def test_a_peer_page_comes_in_parts_cut_here_and_has_no_outline(front: Daemon) -> None:
    stub = front.stub
    page = search(stub, QUERY).results[0].location.split("#")[0]
    whole = stub.GetContent(pb.GetContentRequest(location=page, mode=pb.CONTENT_MODE_FULL))
    request = pb.GetContentRequest(location=page, mode=pb.CONTENT_MODE_FULL, max_chars=1500)
    parts = [stub.GetContent(request, timeout=30)]
    while parts[-1].next_cursor:
        request.cursor = parts[-1].next_cursor
        parts.append(stub.GetContent(request, timeout=30))
    assert len(parts) > 1 and all(p.provider == "upstream" for p in parts)
    assert "".join(p.content for p in parts) == whole.content
    assert all(len(p.content) <= 1500 for p in parts)
    with pytest.raises(grpc.RpcError) as info:
        stub.GetContent(
            pb.GetContentRequest(location=page, mode=pb.CONTENT_MODE_OUTLINE), timeout=30
        )
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "locally indexed" in info.value.details()


def test_a_peer_miss_keeps_the_peers_resolution(front: Daemon) -> None:
    with pytest.raises(grpc.RpcError) as err:
        front.stub.GetContent(pb.GetContentRequest(location="upstream/no/such/page"), timeout=30)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    resolution = resolution_from_error(err.value)
    assert resolution.reason == "not_found"
    assert "upstream" in resolution.detail


def test_a_wrong_token_falls_through(fastapi_corpus, peer: Daemon, tmp_path: Path) -> None:
    config = front_config(tmp_path, peer.address, token="wrong-token")
    with running(["--config", str(config)], tmp_path / "state") as daemon:
        response = search(daemon.stub, QUERY)
        assert response.provider != "upstream"
        failures = {f.source: f.detail for f in response.failed_sources}
        assert "unauthenticated" in failures["upstream"]
        with pytest.raises(grpc.RpcError) as err:
            daemon.stub.GetContent(pb.GetContentRequest(location="upstream/websockets"))
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert resolution_from_error(err.value).reason == "site_unavailable"
        status = upstream_status(daemon.stub)
        assert status.state == pb.SOURCE_STATE_FAILED and "unauthenticated" in status.last_error


def test_a_stopped_peer_is_skipped_quickly_during_the_cool_down(
    fastapi_corpus, tmp_path: Path
) -> None:
    port = free_port()
    front_dir = tmp_path / "f"
    front_dir.mkdir()
    # The cool-down outlasts the test, and the peer's deadline is short: nothing answers it.
    config = front_config(
        front_dir, f"127.0.0.1:{port}", timeout_seconds=2.0, retry_cooldown_seconds=3600
    )
    # Something accepts connections on the peer's port but never answers, so a call has to
    # wait for its deadline: the expensive case the cool-down avoids.
    with (
        silent_listener(port),
        running(["--config", str(config)], front_dir / "state") as daemon,
    ):
        first = search(daemon.stub, QUERY)
        second = search(daemon.stub, QUERY)
        status = upstream_status(daemon.stub)
    assert status.state == pb.SOURCE_STATE_FAILED
    assert "deadline_exceeded" in status.last_error
    assert first.provider != "upstream" and second.provider != "upstream"
    first_detail = {f.source: f.detail for f in first.failed_sources}["upstream"]
    second_detail = {f.source: f.detail for f in second.failed_sources}["upstream"]
    # The first call waited for its deadline; the second was skipped without asking the peer
    # (only a skip says when the next attempt is due).
    assert "deadline_exceeded" in first_detail
    assert "retrying in" in second_detail
    assert "peer unavailable (deadline_exceeded" in second_detail


@contextlib.contextmanager
def silent_listener(port: int) -> Iterator[socket.socket]:
    """A socket that accepts TCP connections into its backlog and never speaks."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(16)
    try:
        yield sock
    finally:
        sock.close()


# -- TLS ---------------------------------------------------------------------------------------


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def certificates(tmp: Path) -> Path:
    """A throwaway CA and a server certificate for 127.0.0.1."""
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
            "-subj", "/CN=peer-test-ca", cwd=tmp)  # fmt: skip
    (tmp / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=peer",
            cwd=tmp)  # fmt: skip
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "san.ext",
            cwd=tmp)  # fmt: skip
    return tmp


class TlsDaemon(Daemon):
    """A daemon serving TLS, health-checked over a channel that trusts the test CA."""

    def __init__(self, *args, ca: Path, **kw) -> None:
        super().__init__(*args, **kw)
        self.ca = ca

    def connect(self) -> grpc.Channel:
        return self.process.connect(grpc.ssl_channel_credentials(self.ca.read_bytes()))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_a_tls_peer_is_reached_with_the_configured_ca(fastapi_corpus, tmp_path: Path) -> None:
    certs = certificates(tmp_path)
    tls = f'tls_cert = "{certs / "server.pem"}"\ntls_key = "{certs / "server.key"}"\n'
    peer = TlsDaemon(
        ["--config", str(peer_config(tmp_path / "p", tls))],
        tmp_path / "p-state",
        ca=certs / "ca.pem",
    )
    peer.start()
    try:
        trusting = tmp_path / "trusting"
        trusting.mkdir()
        config = front_config(trusting, peer.address, tls_ca=str(certs / "ca.pem"))
        with running(["--config", str(config)], trusting / "state") as daemon:
            response = search(daemon.stub, QUERY)
            assert response.provider == "upstream" and not response.failed_sources
        plain = tmp_path / "plain"
        plain.mkdir()
        with running(["--config", str(front_config(plain, peer.address))], plain / "state") as d:
            response = search(d.stub, QUERY)
            assert response.provider != "upstream"
            assert "upstream" in {f.source for f in response.failed_sources}
    finally:
        peer.terminate()
