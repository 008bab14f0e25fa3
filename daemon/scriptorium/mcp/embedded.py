"""A private daemon for the bridge when no running one is named.

It listens on an ephemeral loopback port and announces it through ``--ready-file`` only once it
is SERVING, so there is no port race and no polling of a half-started server. Its output goes to
the bridge's stderr: the bridge's stdout carries the MCP protocol and nothing else may write
there. On Linux the daemon also gets SIGTERM if the bridge dies without cleaning up.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


class EmbeddedDaemonError(RuntimeError):
    """The embedded daemon exited or did not become ready."""


def _die_with_parent() -> Callable[[], None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None

    def preexec() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    return preexec


def _log_target() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL


def daemon_command(python: str = sys.executable) -> list[str]:
    """``python -m scriptorium`` such that the working folder cannot shadow the package.

    ``-m`` puts the current folder first on ``sys.path``, so a ``scriptorium/`` folder there
    (the parent of a clone, say) would be imported instead of the installed package; ``-P``
    (Python 3.11+) leaves the folder off the path and the cwd as the user chose it.
    """
    return [python, "-P", "-m", "scriptorium"]


class EmbeddedDaemon:
    """``scriptorium serve PATH ...`` as a child process with a throwaway state directory."""

    def __init__(
        self,
        paths: Sequence[str],
        *,
        config: Path | None = None,
        state_dir: Path | None = None,
        python: str = sys.executable,
    ) -> None:
        # Relative paths mean what they meant to the user, whatever the child makes of its cwd.
        self.paths = [str(Path(p).resolve()) for p in paths]
        self.config = Path(config).resolve() if config is not None else None
        self._own_work = tempfile.mkdtemp(prefix="scriptorium-mcp-")
        self.work = Path(self._own_work)
        self.state_dir = Path(state_dir).resolve() if state_dir else self.work / "state"
        self.ready_file = self.work / "port"
        self.cmd = [*daemon_command(python), "serve", *self.paths]
        if self.config is not None:
            self.cmd += ["--config", str(self.config)]
        self.cmd += [
            "--listen",
            "127.0.0.1:0",
            "--ready-file",
            str(self.ready_file),
            "--state-dir",
            str(self.state_dir),
        ]
        self.proc: subprocess.Popen[bytes] | None = None
        self.address: str | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        """Launch the daemon (call from the main thread: the parent-death signal is per thread)."""
        out = _log_target()
        self.proc = subprocess.Popen(
            self.cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            preexec_fn=_die_with_parent(),
        )
        log.info("embedded daemon pid %d starting for %s", self.proc.pid, ", ".join(self.paths))

    async def wait_ready(self, timeout: float) -> str:
        """The daemon's address once it is SERVING; raises if it exits or takes too long."""
        if self.address is not None:
            return self.address
        if self.proc is None:
            raise EmbeddedDaemonError("the embedded daemon was not started")
        deadline = time.monotonic() + timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                raise EmbeddedDaemonError(
                    f"the embedded daemon exited with status {code} before it was ready "
                    "(its log is on the bridge's stderr)"
                )
            port = self._read_port()
            if port:
                self.address = f"127.0.0.1:{port}"
                log.info("embedded daemon pid %d serving on %s", self.proc.pid, self.address)
                return self.address
            if time.monotonic() >= deadline:
                raise EmbeddedDaemonError(f"the embedded daemon was not ready after {timeout:g}s")
            await asyncio.sleep(0.05)

    def _read_port(self) -> int:
        try:
            text = self.ready_file.read_text(encoding="utf-8").strip()
        except OSError:
            return 0
        return int(text) if text.isdigit() else 0

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (the daemon drains), then SIGKILL after ``timeout``; removes its temp files."""
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
        with contextlib.suppress(OSError):
            shutil.rmtree(self._own_work)
        return code
