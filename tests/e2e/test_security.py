"""Security of a real daemon: loopback by default, TLS and mutual TLS, bearer tokens, and
nothing outside a source root is ever readable.

Certificates are made per test session with the ``openssl`` command-line tool (no Python
dependency is needed for it); the module is skipped when the tool is missing.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from scriptorium.client import Client, ScriptoriumError
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, Daemon, running
from tests.support.trees import write
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")

SERVICE = "scriptorium.v1.RetrievalService"
SERVING = health_pb2.HealthCheckResponse.SERVING
DEFAULT_PORT = 50051
TOKEN_ENV = "SCRIPTORIUM_E2E_TOKEN"
TOKEN = "tok-7f3a9c1e-d00d-4b1d-b00b-5ca1ab1e0001"
WRONG_TOKEN = "tok-wrong-0000-1111-2222-333344445555"
QUERY_MARKER = "zeppelin marmalade"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def docs(fastapi_corpus, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("security-docs")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "public" / "tutorial")
    write(root / "private" / "handbook.md", "# Handbook\n\n## Payroll\n\nThe payroll ledger.\n")
    write(root / "outside" / "secret.md", "# Secret\n\nquuxplughsecret\n")
    return root


# -- loopback by default ---------------------------------------------------------------------------


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def _listening(pid: int) -> list[tuple[str, int]]:
    """(hex local address, port) of every TCP socket ``pid`` listens on, from /proc/net."""
    inodes = _socket_inodes(pid)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # 0A is LISTEN
                address, port = local.rsplit(":", 1)
                found.append((address, int(port, 16)))
    return found


LOOPBACK_HEX = {
    "0100007F",  # 127.0.0.1 in /proc/net/tcp (little-endian)
    "00000000000000000000000001000000",  # ::1
    "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1
}


def test_serve_without_listen_binds_loopback_only(tmp_path, docs):
    ready = tmp_path / "ready"
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "scriptorium", "serve", str(docs / "public")),
                *("--state-dir", str(tmp_path / "state"), "--ready-file", str(ready)),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        assert wait_for(lambda: ready.exists() or proc.poll() is not None, 60)
        text = log_path.read_text("utf-8", "replace")
        if proc.poll() is not None:
            # Another process holds the default port: the daemon still tried loopback only.
            assert f"cannot listen on 127.0.0.1:{DEFAULT_PORT}" in text, text
            pytest.skip(f"port {DEFAULT_PORT} is in use on this machine")
        assert f"listening on 127.0.0.1:{DEFAULT_PORT}" in text
        sockets = _listening(proc.pid)
        assert sockets, "the daemon listens on nothing"
        assert {port for _, port in sockets} == {DEFAULT_PORT}
        assert {address for address, _ in sockets} <= LOOPBACK_HEX, sockets
        with grpc.insecure_channel(f"127.0.0.1:{DEFAULT_PORT}") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=SERVICE), timeout=5
            )
            assert reply.status == SERVING
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0


# -- certificates ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    rogue_ca: Path
    rogue_client_cert: Path
    rogue_client_key: Path


def _openssl(cwd: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


_EC = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")


def _make_ca(cwd: Path, name: str) -> None:
    _openssl(
        cwd,
        "req",
        "-x509",
        *_EC,
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.pem",
        "-days",
        "2",
        "-subj",
        f"/CN={name}",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    )


def _make_leaf(cwd: Path, ca: str, name: str, usage: str) -> None:
    _openssl(
        cwd, "req", *_EC, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}"
    )
    write(
        cwd / f"{name}.ext",
        f"basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
        f"extendedKeyUsage={usage}\n",
    )
    _openssl(
        cwd,
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        f"{ca}.pem",
        "-CAkey",
        f"{ca}.key",
        "-set_serial",
        str(int.from_bytes(os.urandom(8), "big")),
        "-days",
        "2",
        "-extfile",
        f"{name}.ext",
        "-out",
        f"{name}.pem",
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    cwd = tmp_path_factory.mktemp("pki")
    _make_ca(cwd, "ca")
    _make_ca(cwd, "rogue-ca")
    _make_leaf(cwd, "ca", "server", "serverAuth")
    _make_leaf(cwd, "ca", "client", "clientAuth")
    _make_leaf(cwd, "rogue-ca", "rogue-client", "clientAuth")
    return Pki(
        ca=cwd / "ca.pem",
        server_cert=cwd / "server.pem",
        server_key=cwd / "server.key",
        client_cert=cwd / "client.pem",
        client_key=cwd / "client.key",
        rogue_ca=cwd / "rogue-ca.pem",
        rogue_client_cert=cwd / "rogue-client.pem",
        rogue_client_key=cwd / "rogue-client.key",
    )


class TlsDaemon(Daemon):
    """A daemon reached over TLS: its stubs talk through the secure channel."""

    def __init__(self, args: list[str], state_dir: Path, credentials: grpc.ChannelCredentials):
        super().__init__(args, state_dir)
        self.credentials = credentials

    def start(self, timeout: float = 60.0) -> TlsDaemon:
        super().start(timeout)
        return self

    def connect(self) -> grpc.Channel:
        return self.process.connect(self.credentials)


def _tls_config(path: Path, docs: Path, pki: Pki, *, mutual: bool) -> Path:
    client_ca = f'tls_client_ca = "{pki.ca}"\n' if mutual else ""
    return write(
        path,
        f"""
[server]
watch = false
tls_cert = "{pki.server_cert}"
tls_key = "{pki.server_key}"
{client_ca}
[[sources]]
name = "docs"
kind = "markdown"
root = "{docs / "public"}"
""",
    )


def _client_search(target: str, **kw) -> pb.SearchResponse:
    with Client(target, timeout=5, attempts=1, **kw) as client:
        return client.search("path parameters")


@pytest.fixture(scope="module")
def tls_daemon(tmp_path_factory, docs, pki) -> Iterator[TlsDaemon]:
    work = tmp_path_factory.mktemp("tls")
    config = _tls_config(work / "tls.toml", docs, pki, mutual=False)
    credentials = grpc.ssl_channel_credentials(root_certificates=pki.ca.read_bytes())
    daemon = TlsDaemon(["--config", str(config)], work / "state", credentials).start()
    yield daemon
    daemon.terminate()


def test_tls_serves_clients_that_trust_the_ca(tls_daemon, pki):
    assert "TLS" in tls_daemon.log()
    assert _client_search(tls_daemon.address, root_certificates=pki.ca).results


@pytest.mark.parametrize("trust", ["plaintext", "rogue-ca"])
def test_tls_refuses_clients_that_do_not_speak_it_or_trust_another_ca(tls_daemon, pki, trust):
    options = {} if trust == "plaintext" else {"root_certificates": pki.rogue_ca}
    with pytest.raises(ScriptoriumError) as err:
        _client_search(tls_daemon.address, **options)
    assert err.value.code == grpc.StatusCode.UNAVAILABLE
    assert _client_search(tls_daemon.address, root_certificates=pki.ca).results


def test_health_command_probes_a_tls_daemon(tls_daemon, pki):
    """The exec probe to use when native gRPC probes cannot speak TLS."""
    ok = cli("health", "--target", tls_daemon.address, "--tls-ca", str(pki.ca))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "SERVING"
    service = cli(
        "health", "--target", tls_daemon.address, "--tls-ca", str(pki.ca), "--service", SERVICE
    )
    assert service.returncode == 0
    plaintext = cli("health", "--target", tls_daemon.address, "--timeout", "2")
    assert plaintext.returncode == 2


@pytest.fixture(scope="module")
def mtls_daemon(tmp_path_factory, docs, pki) -> Iterator[TlsDaemon]:
    work = tmp_path_factory.mktemp("mtls")
    config = _tls_config(work / "mtls.toml", docs, pki, mutual=True)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=pki.ca.read_bytes(),
        private_key=pki.client_key.read_bytes(),
        certificate_chain=pki.client_cert.read_bytes(),
    )
    daemon = TlsDaemon(["--config", str(config)], work / "state", credentials).start()
    yield daemon
    daemon.terminate()


def test_mutual_tls_serves_clients_with_a_certificate_from_the_ca(mtls_daemon, pki):
    reply = _client_search(
        mtls_daemon.address,
        root_certificates=pki.ca,
        client_cert=pki.client_cert,
        client_key=pki.client_key,
    )
    assert reply.results


@pytest.mark.parametrize("who", ["no-certificate", "rogue-certificate"])
def test_mutual_tls_refuses_clients_without_a_trusted_certificate(mtls_daemon, pki, who):
    options: dict = {"root_certificates": pki.ca}
    if who == "rogue-certificate":
        options |= {"client_cert": pki.rogue_client_cert, "client_key": pki.rogue_client_key}
    with pytest.raises(ScriptoriumError) as err:
        _client_search(mtls_daemon.address, **options)
    assert err.value.code == grpc.StatusCode.UNAVAILABLE
    # Health is no exception: without a client certificate the handshake itself fails.
    channel = grpc.secure_channel(
        mtls_daemon.address, grpc.ssl_channel_credentials(root_certificates=pki.ca.read_bytes())
    )
    with channel, pytest.raises(grpc.RpcError) as health_err:
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3)
    assert health_err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_health_command_probes_a_mutual_tls_daemon(mtls_daemon, pki):
    probe = cli(
        "health",
        "--target",
        mtls_daemon.address,
        "--tls-ca",
        str(pki.ca),
        "--tls-cert",
        str(pki.client_cert),
        "--tls-key",
        str(pki.client_key),
    )
    assert probe.returncode == 0, probe.stderr


# -- bearer tokens ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def auth_daemon(tmp_path_factory, docs) -> Iterator[Daemon]:
    work = tmp_path_factory.mktemp("auth")
    config = write(
        work / "auth.toml",
        f"""
[server]
watch = false
log_level = "DEBUG"
auth_token_env = "{TOKEN_ENV}"

[[sources]]
name = "public"
kind = "markdown"
root = "{docs / "public"}"
default = true

[[sources]]
name = "private"
kind = "markdown"
root = "{docs / "private"}"
""",
    )
    with running(["--config", str(config)], work / "state", env={TOKEN_ENV: TOKEN}) as daemon:
        yield daemon


def _token(value: str | None) -> tuple[tuple[str, str], ...]:
    return () if value is None else (("authorization", value),)


def _every_rpc(stub, metadata) -> dict[str, Callable[[], object]]:
    ref = _forge("public", "d", "tutorial/path-params.md")
    return {
        "Search": lambda: stub.Search(
            pb.SearchRequest(query=QUERY_MARKER), timeout=10, metadata=metadata
        ),
        "GetContent": lambda: stub.GetContent(
            pb.GetContentRequest(location="tutorial/path-params"), timeout=10, metadata=metadata
        ),
        "ExpandRelated": lambda: stub.ExpandRelated(
            pb.ExpandRelatedRequest(ref_ids=[ref]), timeout=10, metadata=metadata
        ),
        "SummarizeFlow": lambda: stub.SummarizeFlow(
            pb.SummarizeFlowRequest(ref_ids=[ref], topic="path parameters"),
            timeout=10,
            metadata=metadata,
        ),
        "GuideImplementation": lambda: stub.GuideImplementation(
            pb.GuideImplementationRequest(topic="path parameters"), timeout=10, metadata=metadata
        ),
        "ListSources": lambda: stub.ListSources(
            pb.ListSourcesRequest(), timeout=10, metadata=metadata
        ),
    }


@pytest.mark.parametrize(
    "presented",
    [None, f"Bearer {WRONG_TOKEN}", TOKEN, f"Bearer {TOKEN} ", f"Basic {TOKEN}", "Bearer "],
    ids=["missing", "wrong", "no-scheme", "trailing-space", "basic", "empty"],
)
def test_every_rpc_needs_the_bearer_token(auth_daemon, presented):
    stub = auth_daemon.stub
    for name, call in _every_rpc(stub, _token(presented)).items():
        with pytest.raises(grpc.RpcError) as err:
            call()
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED, name
        assert TOKEN not in (err.value.details() or "")


def test_the_right_token_opens_every_rpc(auth_daemon):
    stub = auth_daemon.stub
    for name, call in _every_rpc(stub, _token(f"Bearer {TOKEN}")).items():
        assert call() is not None, name


def test_health_and_reflection_need_no_token(auth_daemon):
    reply = auth_daemon.health.Check(health_pb2.HealthCheckRequest(service=SERVICE), timeout=5)
    assert reply.status == SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(auth_daemon.channel)
    responses = reflection.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
    )
    names = {s.name for r in responses for s in r.list_services_response.service}
    assert SERVICE in names


def test_cli_passes_the_token(auth_daemon):
    ok = cli("search", "path parameters", "--target", auth_daemon.address, "--token", TOKEN)
    assert ok.returncode == 0, ok.stderr
    assert "tutorial/path-params" in ok.stdout
    refused = cli("sources", "--target", auth_daemon.address, env={"SCRIPTORIUM_TOKEN": ""})
    assert refused.returncode == 1
    assert "UNAUTHENTICATED" in refused.stderr


def test_log_never_contains_tokens_or_query_text(auth_daemon):
    stub = auth_daemon.stub
    for presented in (f"Bearer {TOKEN}", f"Bearer {WRONG_TOKEN}"):
        for call in _every_rpc(stub, _token(presented)).values():
            with contextlib.suppress(grpc.RpcError):
                call()
    # The whole log: refusals are written at most five a minute per kind, so this test's own
    # may have been left out after the module's earlier ones (their count rides on a later line).
    log = auth_daemon.full_log()
    assert "refused" in log, "refusals are logged (without the token)"
    assert TOKEN not in log
    assert WRONG_TOKEN not in log
    assert QUERY_MARKER not in log
    assert "DEBUG" in log, "the check ran with the most verbose logging"


# -- only source roots are readable ----------------------------------------------------------------


def _forge(source: str, kind: str, path: str) -> str:
    raw = "\x1f".join([source, kind, path, "", "1", "0" * 12])
    return "r1." + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("{private}/handbook.md", grpc.StatusCode.INVALID_ARGUMENT),
        ("{outside}/secret.md", grpc.StatusCode.INVALID_ARGUMENT),
        ("../private/handbook.md", grpc.StatusCode.INVALID_ARGUMENT),
        ("../outside/secret.md", grpc.StatusCode.INVALID_ARGUMENT),
        ("handbook.md", grpc.StatusCode.NOT_FOUND),
    ],
)
def test_ref_forged_to_another_sources_file_is_refused(auth_daemon, docs, path, code):
    path = path.format(private=docs / "private", outside=docs / "outside")
    metadata = _token(f"Bearer {TOKEN}")
    for kind in ("d", "f"):
        with pytest.raises(grpc.RpcError) as err:
            auth_daemon.stub.GetContent(
                pb.GetContentRequest(ref_id=_forge("public", kind, path)),
                timeout=10,
                metadata=metadata,
            )
        assert err.value.code() == code
    # The private source's file is served only under its own name.
    reply = auth_daemon.stub.GetContent(
        pb.GetContentRequest(ref_id=_forge("private", "d", "handbook.md")),
        timeout=10,
        metadata=metadata,
    )
    assert "payroll ledger" in reply.content
    assert reply.source == "private"
