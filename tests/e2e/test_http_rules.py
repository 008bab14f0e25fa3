"""The rules HTTP shares with gRPC, against a real daemon: the bearer token, the concurrency
limit counted across both doors, cancellation when the client goes away, the Grpc-Timeout
deadline, TLS and mutual TLS with the daemon's certificate, and one port when HTTP is off.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS
from tests.support.http import HttpDaemon, config_text, post, write
from tests.support.waiting import wait_for


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("http-rules-tree")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "docs/tutorial")
    shutil.copytree(CORPUS / "fastapi", root / "code/fastapi")
    return root


# -- the shared rules ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def auth_daemon(tree: Path, tmp_path_factory) -> Iterator[HttpDaemon]:
    work = tmp_path_factory.mktemp("http-auth")
    config = write(work / "c.toml", config_text(tree, 'watch = false\nauth_token = "s3cret"'))
    d = HttpDaemon(["--config", str(config)], work / "state")
    d.start()
    yield d
    d.terminate()


@pytest.mark.parametrize("presented", [None, "Bearer wrong", "s3cret", "Basic czNjcmV0"])
def test_every_call_needs_the_bearer_token(auth_daemon, presented):
    headers = {"authorization": presented} if presented else {}
    with auth_daemon.client(headers=headers) as client:
        for name in ("Search", "GetContent", "ListSources"):
            reply = post(client, name, {"query": "x"} if name == "Search" else {})
            assert reply.status_code == 401, name
            assert reply.json()["status"] == "UNAUTHENTICATED"
            assert reply.headers["www-authenticate"] == "Bearer"
        assert client.get("/v1/search", params={"q": "x"}).status_code == 401
        # Health, the console and the description stay open, as health is over gRPC.
        assert client.get("/readyz").status_code == 200
        assert client.get("/").status_code == 200
        assert client.get("/openapi.json").status_code == 200


def test_the_right_token_opens_the_api(auth_daemon):
    with auth_daemon.client(headers={"authorization": "Bearer s3cret"}) as client:
        assert post(client, "Search", {"query": "path parameters"}).json()["results"]
        assert client.get("/v1/search", params={"q": "path parameters"}).json()["results"]


def test_http_and_grpc_share_the_concurrency_limit(tree, tmp_path):
    release = tmp_path / "release-search"
    config = write(tmp_path / "c.toml", config_text(tree, "watch = false\nmax_concurrent_rpcs = 1"))
    d = HttpDaemon(
        ["--config", str(config)], tmp_path / "state", env={FAULT_PAUSE: f"rpc.search={release}"}
    )
    d.start()
    try:
        held = d.stub.Search.future(pb.SearchRequest(query="path parameters"), timeout=120)
        assert wait_for(reached_marker(release).exists, 60)
        with d.client() as client:
            refused = post(client, "Search", {"query": "path parameters"})
            assert refused.status_code == 429, refused.text
            assert refused.json()["status"] == "RESOURCE_EXHAUSTED"
            release.touch()
            assert held.result(60).results
            assert post(client, "Search", {"query": "path parameters"}).json()["results"]
    finally:
        release.touch()
        d.terminate()


STOPPED = "stopped at a checkpoint: call cancelled"
GUIDE = {"topic": "oauth2 password bearer security scopes", "framework": "fastapi"}


def test_a_client_that_goes_away_cancels_its_call(tree, tmp_path):
    release = tmp_path / "release-guide"
    config = write(tmp_path / "c.toml", config_text(tree))
    d = HttpDaemon(
        ["--config", str(config), "--log-level", "debug"],
        tmp_path / "state",
        env={FAULT_PAUSE: f"rpc.guide={release}"},
    )
    d.start()
    try:
        offset = d.log_path.stat().st_size
        with socket.create_connection(("127.0.0.1", d.http_port)) as sock:
            body = json.dumps(GUIDE).encode()
            sock.sendall(
                b"POST /v1/GuideImplementation HTTP/1.1\r\nhost: 127.0.0.1\r\n"
                b"content-type: application/json\r\ncontent-length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            assert wait_for(reached_marker(release).exists, 60)

        # The handler's work stops at its next checkpoint instead of going on.
        def cancelled() -> bool:
            return STOPPED in d.log_path.read_bytes()[offset:].decode("utf-8", "replace")

        assert wait_for(cancelled, 60), d.log()
        release.touch()
        with d.client() as client:
            assert post(client, "Search", {"query": "path parameters"}).json()["results"]
    finally:
        release.touch()
        d.terminate()


def test_without_http_the_daemon_listens_on_one_port_only(tree, tmp_path):
    from tests.e2e.test_security import _listening
    from tests.support.daemon import Daemon

    config = write(tmp_path / "c.toml", config_text(tree))
    d = Daemon(["--config", str(config)], tmp_path / "state")
    d.start()
    try:
        assert [port for _host, port in _listening(d.proc.pid)] == [d.port]
    finally:
        d.terminate()


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    from tests.e2e.test_security import _make_ca, _make_leaf

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    cwd = tmp_path_factory.mktemp("http-pki")
    _make_ca(cwd, "ca")
    _make_leaf(cwd, "ca", "server", "serverAuth")
    _make_leaf(cwd, "ca", "client", "clientAuth")
    return cwd


@pytest.mark.parametrize("mutual", [False, True])
def test_https_uses_the_daemons_certificate_and_client_ca(tree, tmp_path, pki, mutual):
    client_ca = f'tls_client_ca = "{pki / "ca.pem"}"' if mutual else ""
    server = f'watch = false\ntls_cert = "{pki / "server.pem"}"\ntls_key = "{pki / "server.key"}"'
    config = write(tmp_path / "c.toml", config_text(tree, f"{server}\n{client_ca}"))
    credentials = grpc.ssl_channel_credentials(
        root_certificates=(pki / "ca.pem").read_bytes(),
        private_key=(pki / "client.key").read_bytes() if mutual else None,
        certificate_chain=(pki / "client.pem").read_bytes() if mutual else None,
    )

    class TlsHttpDaemon(HttpDaemon):
        scheme = "https"

        def connect(self) -> grpc.Channel:
            return self.process.connect(credentials)

    d = TlsHttpDaemon(["--config", str(config)], tmp_path / "state")
    d.start()
    try:
        cert = (str(pki / "client.pem"), str(pki / "client.key")) if mutual else None
        context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        if cert:
            context.load_cert_chain(*cert)
        with d.client(verify=context) as client:
            assert post(client, "Search", {"query": "path parameters"}).json()["results"]
        with pytest.raises(httpx.HTTPError), httpx.Client(timeout=30) as plain:
            plain.get(f"http://127.0.0.1:{d.http_port}/readyz")
        if mutual:
            anonymous = ssl.create_default_context(cafile=str(pki / "ca.pem"))
            with pytest.raises(httpx.HTTPError), d.client(verify=anonymous) as client:
                client.get("/readyz")
    finally:
        d.terminate()


def test_a_grpc_timeout_header_is_a_deadline_that_cancels_the_call(tree, tmp_path):
    release = tmp_path / "release-guide"
    config = write(tmp_path / "c.toml", config_text(tree))
    d = HttpDaemon(
        ["--config", str(config), "--log-level", "debug"],
        tmp_path / "state",
        env={FAULT_PAUSE: f"rpc.guide={release}"},
    )
    d.start()
    try:
        offset = d.log_path.stat().st_size
        with d.client() as client:
            # Held at the pause, the call cannot be answered before its deadline.
            # Should a deadline pass before the call reached its worker thread, a longer one is
            # tried, so the work is always held (the marker) when the deadline expires.
            for timeout in ("300m", "2S", "8S", "32S"):
                expired = post(
                    client, "GuideImplementation", GUIDE, headers={"grpc-timeout": timeout}
                )
                assert expired.status_code == 504, expired.text
                assert expired.json()["status"] == "DEADLINE_EXCEEDED"
                if reached_marker(release).exists():
                    break
            assert reached_marker(release).exists()

            def cancelled() -> bool:
                return STOPPED in d.log_path.read_bytes()[offset:].decode("utf-8", "replace")

            assert wait_for(cancelled, 60), d.log()
            for bad in ("soon", "10", "123456789S", "5X"):
                refused = post(client, "Search", {"query": "x"}, headers={"grpc-timeout": bad})
                assert refused.status_code == 400 and "Grpc-Timeout" in refused.json()["message"]
            release.touch()
            answered = post(client, "GuideImplementation", GUIDE, headers={"grpc-timeout": "60S"})
            assert answered.status_code == 200 and answered.json()["docs"]
    finally:
        release.touch()
        d.terminate()
