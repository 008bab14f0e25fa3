"""The daemon launcher: its command line, readiness from the ready file, early exit, stop.

A stand-in child (a few lines of Python given the launcher's own serve arguments) plays the
daemon, so each case is exact: it writes the ready file, exits, or ignores SIGTERM on cue.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scriptorium.launcher import (
    DaemonExited,
    DaemonNotReady,
    DaemonProcess,
    connect_address,
)

REPO = Path(__file__).resolve().parents[2]

# argv after the script: the launcher's serve arguments (--listen, --ready-file, --state-dir).
_ARGS = "args = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n"


def _stand_in(daemon: DaemonProcess, body: str) -> DaemonProcess:
    serve_args = daemon.cmd[daemon.cmd.index("serve") + 1 :]
    daemon.cmd = [sys.executable, "-c", "import sys, pathlib, signal, time\n" + _ARGS + body]
    daemon.cmd += serve_args
    return daemon


def test_the_command_runs_the_installed_package_with_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    daemon = DaemonProcess(["--no-watch"], config=Path("c.toml"), state_dir=Path("state"))
    try:
        cmd = daemon.cmd
        assert cmd[:5] == [sys.executable, "-P", "-m", "scriptorium", "serve"]
        assert cmd[cmd.index("--config") + 1] == str(tmp_path / "c.toml")
        assert cmd[cmd.index("--state-dir") + 1] == str(tmp_path / "state")
        assert cmd[cmd.index("--ready-file") + 1] == str(daemon.ready_file)
        assert daemon.address is None, "an ephemeral port is not known before the ready file"
    finally:
        daemon.stop()


def test_a_fixed_port_is_known_before_ready_and_any_host_means_loopback():
    assert connect_address("0.0.0.0:50051") == "127.0.0.1:50051"
    assert connect_address("[::]:0", 4321) == "127.0.0.1:4321"
    daemon = DaemonProcess(listen="127.0.0.1:7777")
    try:
        assert daemon.address == "127.0.0.1:7777"
    finally:
        daemon.stop()


def test_ready_means_the_ready_file_names_the_port(tmp_path):
    body = (
        "pathlib.Path(args['--ready-file']).write_text('43210\\n')\n"
        "signal.sigwait([signal.SIGTERM])\n"
    )
    with _stand_in(DaemonProcess(log=tmp_path / "log"), body) as daemon:
        assert daemon.address == "127.0.0.1:43210"
        assert daemon.alive()
    assert daemon.proc.returncode is not None
    assert not daemon.work.exists(), "stop leaves its scratch folder behind"


def test_waiting_is_async_too(tmp_path):
    body = "pathlib.Path(args['--ready-file']).write_text('5555')\nsignal.pause()\n"
    daemon = _stand_in(DaemonProcess(log=tmp_path / "log"), body).spawn()
    try:
        assert asyncio.run(daemon.wait_ready_async(120)) == "127.0.0.1:5555"
    finally:
        daemon.stop()


def test_an_early_exit_is_reported_with_its_status_and_log_tail(tmp_path):
    body = "print('no source can be served', file=sys.stderr)\nsys.exit(3)\n"
    daemon = _stand_in(DaemonProcess(log=tmp_path / "log"), body)
    with pytest.raises(DaemonExited) as raised:
        daemon.start(120)
    assert raised.value.code == 3
    assert "no source can be served" in raised.value.tail
    assert "status 3" in str(raised.value) and "no source can be served" in str(raised.value)


def test_a_running_daemon_without_its_ready_file_is_not_ready(tmp_path):
    body = "print('loading', flush=True)\nsignal.pause()\n"
    daemon = _stand_in(DaemonProcess(log=tmp_path / "log"), body).spawn()
    try:
        assert daemon.poll_ready() is None
        with pytest.raises(DaemonNotReady):
            daemon.wait_ready(0)
        assert daemon.alive()
    finally:
        daemon.stop()


def test_stop_kills_a_daemon_that_does_not_drain(tmp_path):
    armed = tmp_path / "armed"
    body = (
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"pathlib.Path({str(armed)!r}).touch()\n"
        "while True: signal.pause()\n"
    )
    daemon = _stand_in(DaemonProcess(log=tmp_path / "log"), body).spawn()
    try:
        deadline = time.monotonic() + 120
        while not armed.exists():  # SIGTERM must come after the child chose to ignore it
            assert daemon.alive(), daemon.log_text()
            assert time.monotonic() < deadline, "the stand-in never started"
            time.sleep(0.01)
    finally:
        code = daemon.stop(timeout=0.5)
    assert code == -signal.SIGKILL


def test_the_mcp_bridge_does_not_load_the_server():
    loaded = subprocess.run(
        [
            sys.executable,
            "-P",
            "-c",
            "import sys, scriptorium.mcp.command; print('\\n'.join(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    assert "scriptorium.launcher" in loaded
    server = [
        m
        for m in loaded
        if m.split(".")[0] in {"tantivy", "pluggy", "pathspec"}
        or m.startswith(("scriptorium.grpc.server", "scriptorium.engine", "scriptorium.index"))
    ]
    assert server == []
