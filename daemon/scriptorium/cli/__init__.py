"""The ``scriptorium`` command: run the daemon, build an index, and query a running daemon.

The command itself is in ``commands``. This module stays light on purpose: a build's helper
processes are spawned interpreters, and each one re-runs the console script (``from
scriptorium.cli import main``) as its main module before it loads a file, so whatever this
module imports every helper pays for again (the whole command line, the client, gRPC: about
0.45 CPU seconds each). The names below are loaded when first asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "UsageError",
    "build_parser",
    "format_content_header",
    "format_flow",
    "format_guide",
    "format_related",
    "format_search",
    "format_sources",
    "format_state_dirs",
    "main",
]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``argv`` defaults to ``sys.argv[1:]``); returns the exit status."""
    from scriptorium.cli.commands import main as run

    return run(argv)


def __getattr__(name: str) -> Any:
    if name in __all__:
        from scriptorium.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'scriptorium.cli' has no attribute {name!r}")
