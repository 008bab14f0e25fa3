"""``scriptorium mcp``: serve the Model Context Protocol over stdio, backed by the daemon.

With ``--target`` (or ``$SCRIPTORIUM_TARGET``) the tools call that daemon. Without either, the
bridge starts its own daemon over PATH (default: the current directory) on an ephemeral loopback
port with a temporary state directory, and stops it when the MCP client disconnects or the
bridge gets SIGTERM/SIGINT. Nothing but protocol messages is written to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from scriptorium.client import TARGET_ENV
from scriptorium.mcp.backend import Backend
from scriptorium.mcp.embedded import EmbeddedDaemon
from scriptorium.usage import UsageParser

log = logging.getLogger("scriptorium.mcp")


def build_parser(prog: str = "scriptorium mcp") -> argparse.ArgumentParser:
    parser = UsageParser(
        prog=prog,
        description=(
            "Serve Scriptorium's search and fetch tools to an agent over the Model Context "
            "Protocol (stdio)."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="trees for an embedded daemon when no --target is given (default: .)",
    )
    parser.add_argument(
        "--target",
        default=None,
        help=f"address of a running daemon (default: ${TARGET_ENV}; else start an embedded one)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("SCRIPTORIUM_TOKEN"),
        help="bearer token for the daemon (default: $SCRIPTORIUM_TOKEN)",
    )
    parser.add_argument("--tls-ca", type=Path, default=None, help="CA certificate for TLS")
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="deadline of each daemon call in seconds"
    )
    embedded = parser.add_argument_group("embedded daemon (only without --target)")
    embedded.add_argument("--config", type=Path, default=None, help="TOML configuration file")
    embedded.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="keep the index here between runs (default: a temporary directory)",
    )
    embedded.add_argument(
        "--startup-timeout",
        type=float,
        default=600.0,
        help="seconds to wait for the embedded daemon to be SERVING",
    )
    parser.add_argument(
        "--log-level", default="WARNING", help="bridge log level on stderr (default: WARNING)"
    )
    return parser


def choose_target(args: argparse.Namespace) -> str | None:
    """The daemon to call, or None when the bridge must embed one."""
    return args.target or os.environ.get(TARGET_ENV) or None


def _exit_now(embedded: EmbeddedDaemon | None, signum: int) -> None:
    """Stop at once: stdin is read in a worker thread that a cancellation cannot interrupt."""
    if embedded is not None:
        embedded.stop()
    sys.stderr.flush()
    os._exit(128 + signum)


async def _serve(backend: Backend) -> None:
    from scriptorium.mcp.tools import build_server

    server = build_server(backend)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, _exit_now, backend.embedded, signum)
    try:
        await server.run_stdio_async()
    finally:
        await backend.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(
        level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    target = choose_target(args)
    embedded: EmbeddedDaemon | None = None
    if target is None:
        embedded = EmbeddedDaemon(args.paths or ["."], config=args.config, state_dir=args.state_dir)
        embedded.start()
    elif args.paths or args.config or args.state_dir:
        log.warning("PATH, --config and --state-dir are ignored with --target %s", target)
    backend = Backend(
        target,
        embedded=embedded,
        token=args.token or None,
        tls_ca=args.tls_ca,
        timeout=args.timeout,
        startup_timeout=args.startup_timeout,
    )
    try:
        asyncio.run(_serve(backend))
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
    finally:
        if embedded is not None:
            embedded.stop()
    return 0
