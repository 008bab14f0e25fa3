"""A private daemon for the bridge when no running one is named.

It listens on an ephemeral loopback port and announces it through ``--ready-file`` only once it
is SERVING, so there is no port race and no polling of a half-started server. Its output goes to
the bridge's stderr: the bridge's stdout carries the MCP protocol and nothing else may write
there. On Linux the daemon also gets SIGTERM if the bridge dies without cleaning up.
"""

from __future__ import annotations

import ctypes
import logging
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from scriptorium.launcher import DaemonExited, DaemonNotReady, DaemonProcess, daemon_command

__all__ = ["EmbeddedDaemon", "EmbeddedDaemonError", "daemon_command"]

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
        self.process = DaemonProcess(
            self.paths,
            config=config,
            state_dir=state_dir,
            python=python,
            prefix="scriptorium-mcp-",
        )
        self.config = self.process.config
        self.state_dir = self.process.state_dir
        self.ready_file = self.process.ready_file
        self.cmd = self.process.cmd

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def address(self) -> str | None:
        """Known once the daemon is ready (its port is ephemeral)."""
        return self.process.address

    def start(self) -> None:
        """Launch the daemon (call from the main thread: the parent-death signal is per thread)."""
        self.process.log = _log_target()
        self.process.preexec_fn = _die_with_parent()
        self.process.spawn()
        log.info("embedded daemon pid %d starting for %s", self.pid, ", ".join(self.paths))

    async def wait_ready(self, timeout: float) -> str:
        """The daemon's address once it is SERVING; raises if it exits or takes too long."""
        if self.address is not None:
            return self.address
        if self.process.proc is None:
            raise EmbeddedDaemonError("the embedded daemon was not started")
        try:
            address = await self.process.wait_ready_async(timeout)
        except DaemonExited as exc:
            raise EmbeddedDaemonError(
                f"the embedded daemon exited with status {exc.code} before it was ready "
                "(its log is on the bridge's stderr)"
            ) from None
        except DaemonNotReady:
            raise EmbeddedDaemonError(
                f"the embedded daemon was not ready after {timeout:g}s"
            ) from None
        log.info("embedded daemon pid %d serving on %s", self.pid, address)
        return address

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM (the daemon drains), then SIGKILL after ``timeout``; removes its temp files."""
        return self.process.stop(timeout)
