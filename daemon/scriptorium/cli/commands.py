"""What the ``scriptorium`` command does: parse, dispatch, print, exit.

Exit status: 0 on success; 1 when the daemon answered with an error (or, for ``health``, with
anything but SERVING), or ``index build`` could not write its generation; 2 when the daemon
could not be reached or could not start (bad configuration, a broken plugin, an unbindable
address); 128 + the signal (130 for Ctrl-C) when ``serve`` or ``index build`` was interrupted
while building.

The parser is in ``parser``, how answers print in ``output``, the commands that ask a daemon in
``remote`` and those that run here in ``local``; this module dispatches.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from scriptorium.cli.local import (
    cmd_index_build,
    cmd_index_push,
    cmd_serve,
    cmd_settings,
    cmd_state,
)
from scriptorium.cli.output import (
    format_content_header,
    format_flow,
    format_guide,
    format_related,
    format_search,
    format_sources,
    format_state_dirs,
    print_error_json,
    report,
)
from scriptorium.cli.parser import build_parser
from scriptorium.cli.remote import (
    cmd_flow,
    cmd_get,
    cmd_guide,
    cmd_health,
    cmd_related,
    cmd_search,
    cmd_sources,
)
from scriptorium.cli.status import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    UNREACHABLE,
    UsageError,
)
from scriptorium.client import ScriptoriumError
from scriptorium.plugins import PluginError
from scriptorium.settings.config import ConfigError

__all__ = [  # re-exported by scriptorium.cli
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


def _passthrough_args(argv: Sequence[str], name: str) -> list[str] | None:
    """The arguments after ``name`` (global ``--format`` may precede it), or None.

    ``eval`` and ``mcp`` have parsers of their own; everything after them goes there.
    """
    i = 0
    while i < len(argv) and argv[i].startswith("--format"):
        i += 1 if "=" in argv[i] else 2
    if i < len(argv) and argv[i] == name:
        return list(argv[i + 1 :])
    return None


def _run_eval(argv: Sequence[str]) -> int:
    """The evaluation harness has its own parser; everything after ``eval`` goes to it."""
    from scriptorium.evaluation.cli import main as eval_main

    return int(eval_main(list(argv)) or 0)


_COMMANDS = {
    "serve": cmd_serve,
    "search": cmd_search,
    "get": cmd_get,
    "related": cmd_related,
    "flow": cmd_flow,
    "guide": cmd_guide,
    "sources": cmd_sources,
    "health": cmd_health,
    "state": cmd_state,
    "settings": cmd_settings,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    eval_args = _passthrough_args(argv, "eval")
    if eval_args is not None:
        return _run_eval(eval_args)
    mcp_args = _passthrough_args(argv, "mcp")
    if mcp_args is not None:
        from scriptorium.mcp import main as mcp_main

        return int(mcp_main(mcp_args) or 0)
    args = build_parser().parse_args(argv)
    if not hasattr(args, "format"):
        args.format = "text"
    try:
        if args.command == "index":
            if args.index_command == "push":
                return cmd_index_push(args)
            return cmd_index_build(args)
        return _COMMANDS[args.command](args)
    except (ConfigError, PluginError, UsageError) as exc:
        if args.format == "json":
            print_error_json("INVALID_ARGUMENT", str(exc))
        print(f"scriptorium: error: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except ScriptoriumError as exc:
        if args.command == "health" and args.format != "json":
            print(exc.code.name if exc.code not in UNREACHABLE else "UNREACHABLE")
            return EXIT_UNAVAILABLE if exc.code in UNREACHABLE else EXIT_FAILED
        code = report(exc, args.format)
        if args.command == "health":
            return EXIT_UNAVAILABLE if exc.code in UNREACHABLE else EXIT_FAILED
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): what it wanted it has. Point stdout at /dev/null
        # so the interpreter's final flush does not fail again, and exit as a piped program.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
