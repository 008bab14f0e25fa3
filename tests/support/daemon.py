"""Start a real daemon subprocess on a free loopback port and talk to it with real stubs."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from scriptorium.v1 import retrieval_pb2_grpc

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpora" / "fastapi"
if not CORPUS.is_dir():  # the CI clone has shared/ beside it; a checkout inside /work too
    CORPUS = Path("/work/shared/corpora/fastapi")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Daemon:
    """A ``scriptorium serve`` subprocess; use as a context manager."""

    def __init__(
        self,
        args: list[str],
        state_dir: Path,
        *,
        env: dict[str, str] | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.state_dir = state_dir
        self.log_path = log_path or state_dir.parent / f"daemon-{self.port}.log"
        self.cmd = [
            sys.executable,
            "-P",  # the working folder must not shadow the installed package
            "-m",
            "scriptorium",
            "serve",
            *args,
            "--listen",
            self.address,
            "--state-dir",
            str(state_dir),
        ]
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.channel: grpc.Channel | None = None

    def start(self, timeout: float = 120.0) -> Daemon:
        self.start_process()
        self.wait_serving(timeout)
        return self

    def start_process(self) -> Daemon:
        """Start the subprocess without waiting for SERVING (a test holding its first build)."""
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            self.cmd, stdout=self._log, stderr=subprocess.STDOUT, env=self.env
        )
        self.channel = grpc.insecure_channel(self.address)
        return self

    def wait_serving(self, timeout: float = 120.0) -> None:
        health = health_pb2_grpc.HealthStub(self.channel)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}:\n{self.log()}")
            with contextlib.suppress(grpc.RpcError):
                reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            time.sleep(0.1)
        raise TimeoutError(f"daemon not SERVING after {timeout}s:\n{self.log()}")

    @property
    def stub(self) -> retrieval_pb2_grpc.RetrievalServiceStub:
        return retrieval_pb2_grpc.RetrievalServiceStub(self.channel)

    @property
    def health(self) -> health_pb2_grpc.HealthStub:
        return health_pb2_grpc.HealthStub(self.channel)

    def log(self) -> str:
        """The tail of the log, for failure messages."""
        return self.full_log()[-6000:]

    def full_log(self) -> str:
        """The whole log, to wait for a line in (a tail may have scrolled past it)."""
        try:
            return self.log_path.read_text("utf-8", "replace")
        except OSError:
            return ""

    def terminate(self, timeout: float = 30.0) -> int:
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.channel is not None:
            self.channel.close()
        self._log.close()
        return self.proc.returncode

    def __enter__(self) -> Daemon:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.terminate()


def write_fastapi_config(
    path: Path, corpus: Path, *, watch: bool = False, watch_mode: str = "events"
) -> Path:
    """A configuration with the English (default), Japanese and Chinese docs and the code."""
    path.write_text(
        f"""
[server]
watch = {"true" if watch else "false"}
watch_mode = "{watch_mode}"
watch_interval = 0.3

[[sources]]
name = "en"
kind = "markdown"
root = "{corpus / "docs/en/docs"}"
default = true
url_base = "https://fastapi.tiangolo.com"

[[sources]]
name = "ja"
kind = "markdown"
root = "{corpus / "docs/ja/docs"}"
url_base = "https://fastapi.tiangolo.com/ja"

[[sources]]
name = "zh"
kind = "markdown"
root = "{corpus / "docs/zh/docs"}"
url_base = "https://fastapi.tiangolo.com/zh"

[[sources]]
name = "code"
kind = "code"
root = "{corpus}"
default = true
include = ["fastapi/**/*.py", "docs_src/**/*.py"]
""",
        encoding="utf-8",
    )
    return path


def copy_security_slice(root: Path, langs: tuple[str, ...] = ("en", "ja", "zh")) -> Path:
    """The security tutorial in ``langs`` and the security code of the corpus: a few dozen files."""
    import shutil

    for lang in langs:
        shutil.copytree(
            CORPUS / f"docs/{lang}/docs/tutorial/security",
            root / f"docs/{lang}/docs/tutorial/security",
        )
    shutil.copytree(CORPUS / "fastapi/security", root / "fastapi/security")
    shutil.copytree(CORPUS / "docs_src/security", root / "docs_src/security")
    return root


@contextlib.contextmanager
def running(args: list[str], state_dir: Path, **kw) -> Iterator[Daemon]:
    daemon = Daemon(args, state_dir, **kw)
    try:
        yield daemon.start()
    finally:
        daemon.terminate()
