"""Start ``scriptorium serve`` as a child process and tell when it is ready.

The one way the MCP bridge, the evaluation harness, the bench and the tests spawn a daemon.
Readiness is the ``--ready-file`` the daemon writes once its health is SERVING (it holds the
bound port), never a guess from elapsed time; a daemon that exits first is reported with the
tail of its log. Only the standard library is imported at load, and grpc only when a channel is
asked for: the client and MCP sides load this module and must not pull in the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import grpc

STOP_TIMEOUT_S = 30.0
READY_POLL_S = 0.05
LOG_TAIL_LINES = 40
_ANY_HOST = {"", "0.0.0.0", "::", "[::]"}


class LaunchError(RuntimeError):
    """The daemon could not be started, or did not become ready."""


class DaemonExited(LaunchError):
    """The daemon exited before it wrote its ready file."""

    def __init__(self, code: int, tail: str) -> None:
        super().__init__(f"the daemon exited with status {code} before it was ready" + _tail(tail))
        self.code = code
        self.tail = tail


class DaemonNotReady(LaunchError, TimeoutError):
    """The daemon was still running but not ready when the wait ran out."""

    def __init__(self, timeout: float, tail: str) -> None:
        super().__init__(f"the daemon was not ready after {timeout:g}s" + _tail(tail))
        self.timeout = timeout
        self.tail = tail


def _tail(tail: str) -> str:
    return f"\n--- daemon log (tail) ---\n{tail}" if tail else ""


def daemon_command(python: str = sys.executable) -> list[str]:
    """``python -m scriptorium`` such that the working folder cannot shadow the package.

    ``-m`` puts the current folder first on ``sys.path``, so a ``scriptorium/`` folder there
    (the parent of a clone, say) would be imported instead of the installed package; ``-P``
    (Python 3.11+) leaves the folder off the path and the cwd as the user chose it.
    """
    return [python, "-P", "-m", "scriptorium"]


def connect_address(listen: str, port: int | None = None) -> str:
    """Where a local client reaches a daemon listening on ``listen`` (any-host means loopback)."""
    host, _, bound = listen.rpartition(":")
    host = "127.0.0.1" if host in _ANY_HOST else host
    return f"{host}:{port if port is not None else bound}"


def _listen_port(listen: str) -> int:
    port = listen.rpartition(":")[2]
    return int(port) if port.isdigit() else 0


class DaemonProcess:
    """``scriptorium serve ARGS`` as a child process; a context manager (start, then stop).

    ``log`` is where its output goes: a file path (appended to), an open descriptor, or None
    (discarded). With ``stdout_to_log=False`` only stderr (the daemon's log) goes there and
    stdout, where console exporters write, is discarded. Without ``state_dir`` the daemon gets a
    private one, removed with the ready file by ``stop``.
    """

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        config: Path | None = None,
        state_dir: Path | None = None,
        listen: str = "127.0.0.1:0",
        log: Path | int | None = None,
        stdout_to_log: bool = True,
        env: Mapping[str, str] | None = None,
        python: str = sys.executable,
        preexec_fn: Callable[[], None] | None = None,
        prefix: str = "scriptorium-daemon-",
    ) -> None:
        self.work = Path(tempfile.mkdtemp(prefix=prefix))
        self.ready_file = self.work / "ready"
        self.state_dir = Path(state_dir).resolve() if state_dir else self.work / "state"
        self.config = Path(config).resolve() if config is not None else None
        self.listen = listen
        self.log = log
        self.stdout_to_log = stdout_to_log
        self.env = dict(env) if env is not None else None
        self.preexec_fn = preexec_fn
        self.cmd = [*daemon_command(python), "serve", *args]
        if self.config is not None:
            self.cmd += ["--config", str(self.config)]
        self.cmd += ["--listen", listen, "--ready-file", str(self.ready_file)]
        self.cmd += ["--state-dir", str(self.state_dir)]
        port = _listen_port(listen)
        # A fixed port is known before the daemon is ready (a test may probe it meanwhile).
        self.address: str | None = connect_address(listen) if port else None
        self.proc: subprocess.Popen[bytes] | None = None
        self._sink: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self) -> DaemonProcess:
        """Start the child without waiting for it (a test may hold its first build)."""
        self.ready_file.unlink(missing_ok=True)
        target: IO[bytes] | int = subprocess.DEVNULL
        if isinstance(self.log, int):
            target = self.log
        elif self.log is not None:
            # Open for the child's whole life; stop() closes it.
            self._sink = target = Path(self.log).open("ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            self.cmd,
            stdin=subprocess.DEVNULL,
            stdout=target if self.stdout_to_log else subprocess.DEVNULL,
            stderr=target,
            env=self.env,
            preexec_fn=self.preexec_fn,
        )
        return self

    def poll_ready(self) -> str | None:
        """The address once the ready file names the port; raises if the daemon has exited."""
        port = self._ready_port()
        if port:
            self.address = connect_address(self.listen, port)
            return self.address
        if self.proc is None:
            raise LaunchError("the daemon was not started")
        code = self.proc.poll()
        if code is not None:
            raise DaemonExited(code, self.log_tail())
        return None

    def wait_ready(self, timeout: float, poll_s: float = READY_POLL_S) -> str:
        """Block until the daemon is ready (its address) or exits, or ``timeout`` runs out."""
        deadline = time.monotonic() + timeout
        while (address := self.poll_ready()) is None:
            if time.monotonic() >= deadline:
                raise DaemonNotReady(timeout, self.log_tail())
            time.sleep(poll_s)
        return address

    async def wait_ready_async(self, timeout: float, poll_s: float = READY_POLL_S) -> str:
        """``wait_ready`` without blocking the event loop."""
        deadline = time.monotonic() + timeout
        while (address := self.poll_ready()) is None:
            if time.monotonic() >= deadline:
                raise DaemonNotReady(timeout, self.log_tail())
            await asyncio.sleep(poll_s)
        return address

    def start(self, timeout: float = 120.0) -> str:
        """Spawn and wait until ready; the daemon is stopped again if it never gets there."""
        self.spawn()
        try:
            return self.wait_ready(timeout)
        except LaunchError:
            self.stop()
            raise

    def _ready_port(self) -> int:
        try:
            text = self.ready_file.read_text(encoding="utf-8").strip()
        except OSError:
            return 0
        return int(text) if text.isdigit() else 0

    def connect(self, credentials: grpc.ChannelCredentials | None = None) -> grpc.Channel:
        """A channel to the daemon (the address must be known: fixed port, or ready)."""
        import grpc

        if self.address is None:
            raise LaunchError("the daemon's port is not known until it is ready")
        if credentials is not None:
            return grpc.secure_channel(self.address, credentials)
        return grpc.insecure_channel(self.address)

    def log_text(self) -> str:
        """The whole log, when it goes to a file."""
        if self.log is None or isinstance(self.log, int):
            return ""
        try:
            return Path(self.log).read_text("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return "".join(self.log_text().splitlines(keepends=True)[-lines:])

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM (the daemon drains), then SIGKILL after ``timeout``; its exit status."""
        code = None
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            code = self.proc.returncode
        if self._sink is not None:
            self._sink.close()
            self._sink = None
        with contextlib.suppress(OSError):
            shutil.rmtree(self.work)
        return code

    def __enter__(self) -> DaemonProcess:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def inherit_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment plus ``extra``, unbuffered so a log line lands at once."""
    return {**os.environ, "PYTHONUNBUFFERED": "1", **(extra or {})}
