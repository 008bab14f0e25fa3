"""Start a real daemon subprocess on a free loopback port and talk to it with real stubs."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health_pb2_grpc

from scriptorium.launcher import DaemonProcess, inherit_env
from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc
from tests.support.trees import write_tree
from tests.support.waiting import wait_for

if TYPE_CHECKING:
    from scriptorium.engine.local import LocalEngine

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpora" / "fastapi"
if not CORPUS.is_dir():  # the CI clone has shared/ beside it; a checkout inside /work too
    CORPUS = Path("/work/shared/corpora/fastapi")


# The daemon's log line when its start-up reconcile has landed (index/builder.py).
CAUGHT_UP = "caught up with disk"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Daemon:
    """A ``scriptorium serve`` subprocess on a fixed free port; use as a context manager.

    A thin face over ``scriptorium.launcher.DaemonProcess``: ready means the daemon wrote its
    ready file (health SERVING), the log holds stdout and stderr unless ``stdout_to_log`` is off.
    """

    stdout_to_log = True

    def __init__(
        self,
        args: list[str],
        state_dir: Path,
        *,
        env: dict[str, str] | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.port = free_port()
        self.state_dir = state_dir
        self.log_path = log_path or state_dir.parent / f"daemon-{self.port}.log"
        self.process = DaemonProcess(
            args,
            state_dir=state_dir,
            listen=f"127.0.0.1:{self.port}",
            log=self.log_path,
            stdout_to_log=self.stdout_to_log,
            env=inherit_env(env),
        )
        self.address = self.process.address
        self.cmd = self.process.cmd
        self.env = self.process.env
        self.channel: grpc.Channel | None = None

    @property
    def proc(self) -> subprocess.Popen | None:
        return self.process.proc

    def start(self, timeout: float = 120.0) -> Daemon:
        self.start_process()
        self.wait_serving(timeout)
        return self

    def start_process(self) -> Daemon:
        """Start the subprocess without waiting for SERVING (a test holding its first build)."""
        self.process.spawn()
        self.channel = self.connect()
        return self

    def connect(self) -> grpc.Channel:
        """The channel the stubs use (a TLS daemon's test gives its credentials here)."""
        return self.process.connect()

    def wait_serving(self, timeout: float = 120.0) -> None:
        """Until the daemon wrote its ready file (health SERVING), then until the stubs' channel
        is connected (one poked before the port was bound may be backing off); raises with the
        daemon's log if either does not happen."""
        self.process.wait_ready(timeout)
        try:
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise TimeoutError(f"no connection to {self.address}:\n{self.log()}") from None

    def wait_caught_up(self, timeout: float = 120.0) -> None:
        """Until the start-up reconcile has landed: a daemon serves its newest generation first
        and compares it with the roots after, so edits made while it was down are searchable
        only from then on."""
        if not wait_for(lambda: CAUGHT_UP in self.full_log(), timeout):
            raise TimeoutError(f"the daemon never caught up with disk:\n{self.log()}")

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
        return self.process.log_text()

    def terminate(self, timeout: float = 30.0) -> int:
        if self.proc is None:
            return 0
        code = self.process.stop(timeout)
        if self.channel is not None:
            self.channel.close()
        return code if code is not None else 0

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


def copy_tutorial_slice(corpus: Path) -> Path:
    """The English security tutorial as the whole tutorial, the Japanese tutorial and the
    security code, with empty Chinese docs and examples: a small corpus every source reads."""
    import shutil

    shutil.copytree(CORPUS / "docs/en/docs/tutorial/security", corpus / "docs/en/docs/tutorial")
    shutil.copytree(CORPUS / "docs/ja/docs/tutorial", corpus / "docs/ja/docs/tutorial")
    shutil.copytree(CORPUS / "fastapi/security", corpus / "fastapi/security")
    for empty in ("docs/zh/docs", "docs_src"):
        (corpus / empty).mkdir(parents=True)
    return corpus


# The roots the sources of ``write_fastapi_config`` read (the code source reads the corpus's
# ``fastapi/`` and ``docs_src/``).
FASTAPI_ROOTS = ("docs/en/docs", "docs/ja/docs", "docs/zh/docs", "docs_src", "fastapi")


def fastapi_slice(corpus: Path, *parts: str) -> Path:
    """``parts`` of the FastAPI corpus (folders) copied into ``corpus``, every other root its
    sources read made empty."""
    import shutil

    for part in parts:
        shutil.copytree(CORPUS / part, corpus / part)
    for root in FASTAPI_ROOTS:
        (corpus / root).mkdir(parents=True, exist_ok=True)
    return corpus


def built_engine(root: Path, corpus: Path) -> LocalEngine:
    """An engine over ``corpus`` with the FastAPI sources, its state under ``root``, built."""
    from scriptorium.engine.local import LocalEngine
    from scriptorium.plugins import load_registry
    from scriptorium.settings.config import load_settings

    config = write_fastapi_config(root / "c.toml", corpus)
    engine = LocalEngine(load_settings(config, state_dir=str(root / "state")), load_registry())
    engine.indexer.load_or_build()
    return engine


def engine_from(root: Path, name: str, config: str) -> LocalEngine:
    """An in-process engine over the configuration text ``config`` (its file and its state
    under ``root``, named ``name`` so that one test can build several), built."""
    from scriptorium.engine.local import LocalEngine
    from scriptorium.plugins import load_registry
    from scriptorium.settings.config import load_settings

    path = root / f"{name}.toml"
    path.write_text(config, encoding="utf-8")
    engine = LocalEngine(
        load_settings(path, state_dir=str(root / f"state-{name}")), load_registry()
    )
    engine.indexer.load_or_build()
    return engine


@contextlib.contextmanager
def running(args: list[str], state_dir: Path, **kw) -> Iterator[Daemon]:
    daemon = Daemon(args, state_dir, **kw)
    try:
        yield daemon.start()
    finally:
        daemon.terminate()


@contextlib.contextmanager
def serving_files(root: Path, files: dict[str, str]) -> Iterator[Daemon]:
    """A daemon serving ``files`` written under ``root/repo``, as ``scriptorium serve REPO``
    serves a clone (its state under ``root/state``)."""
    with running([str(write_tree(root / "repo", files))], root / "state") as daemon:
        yield daemon


def explained(daemon: Daemon, query: str) -> list[pb.SearchResult]:
    """The results of an explained Search of ``query`` (each with its reasons)."""
    request = pb.SearchRequest(query=query, explain=True)
    return list(daemon.stub.Search(request, timeout=30).results)


def cli(daemon: Daemon, *args: str) -> subprocess.CompletedProcess:
    """``scriptorium ARGS --target`` the daemon, as a user runs it (output captured)."""
    return subprocess.run(
        [sys.executable, "-m", "scriptorium", *args, "--target", daemon.address],
        capture_output=True,
        text=True,
        timeout=120,
    )
