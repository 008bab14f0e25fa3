"""The ``scriptorium`` argument parser: every command, its options and their value checks."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from scriptorium import __version__
from scriptorium.cli.reference import REFERENCE_PAGE, serve_epilog
from scriptorium.usage import UsageParser

_KINDS = ("docs", "code")


def _kinds(value: str) -> list[str]:
    kinds = [k.strip().lower() for k in value.split(",") if k.strip()]
    bad = [k for k in kinds if k not in _KINDS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown kind(s) {', '.join(bad)}; use docs and/or code")
    return kinds


class _Parser(UsageParser):
    """The CLI's parser: usage errors as one line (see :mod:`scriptorium.usage`)."""


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _bounded(value: str, unit: str, ok: Callable[[float], bool], rule: str) -> float:
    """``value`` as a number of ``unit`` that passes ``ok`` (NaN never does), else a usage
    error naming ``rule``."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of {unit}, got {value!r}") from None
    if not ok(number):
        raise argparse.ArgumentTypeError(f"{rule}, got {value}")
    return number


def _seconds(value: str) -> float:
    return _bounded(value, "seconds", lambda n: n > 0, "must be greater than 0")


def _days(value: str) -> float:
    return _bounded(value, "days", lambda n: n >= 0, "must be at least 0")


def _log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise argparse.ArgumentTypeError(f"expected DEBUG, INFO, WARNING or ERROR, got {value!r}")
    return level


def _text(value: str) -> str:
    """A query, topic, ref or location: blank ones are refused before anything is sent."""
    if not value.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return value


def _moment(value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO 8601 date or time such as 2024-01-31, got {value!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def build_parser() -> argparse.ArgumentParser:
    fmt = _Parser(add_help=False)
    fmt.add_argument(
        "--format",
        choices=("text", "json"),
        default=argparse.SUPPRESS,
        help="output format (default: text)",
    )
    remote = _Parser(add_help=False, parents=[fmt])
    remote.add_argument(
        "--target",
        default=None,
        help="daemon address (default: $SCRIPTORIUM_TARGET or 127.0.0.1:50051)",
    )
    remote.add_argument("--timeout", type=_seconds, default=None, help="deadline in seconds")
    remote.add_argument(
        "--token",
        default=os.environ.get("SCRIPTORIUM_TOKEN"),
        help="bearer token (default: $SCRIPTORIUM_TOKEN)",
    )
    remote.add_argument("--tls-ca", type=Path, default=None, help="CA certificate for TLS")
    remote.add_argument(
        "--tls-cert", type=Path, default=None, help="client certificate for mutual TLS"
    )
    remote.add_argument("--tls-key", type=Path, default=None, help="client key for mutual TLS")
    remote.add_argument(
        "--wait-current",
        action="store_true",
        help="first wait (up to --timeout, default 600 s) until the daemon's answers are "
        "current: it has caught up with the roots it found at start-up",
    )
    local = _Parser(add_help=False)
    local.add_argument("paths", nargs="*", metavar="PATH", help="directories to index")
    local.add_argument("--config", type=Path, default=None, help="TOML configuration file")
    local.add_argument("--state-dir", default=None, help="index and cache directory")
    local.add_argument(
        "--log-level", type=_log_level, default=None, help="DEBUG, INFO, WARNING or ERROR"
    )
    local.add_argument(
        "--no-dependencies",
        dest="dependencies",
        action="store_false",
        default=None,
        help="do not index the installed dependencies a PATH's manifests name",
    )
    local.add_argument(
        "--build-workers",
        type=int,
        default=None,
        help="worker processes for large builds (0: one per core, 1: none)",
    )

    parser = _Parser(
        prog="scriptorium",
        description="Retrieval daemon for documentation and source code.",
        parents=[fmt],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve", parents=[local], help="run the daemon", epilog=serve_epilog()
    )
    serve.add_argument("--listen", default=None, help="address to bind (host:port)")
    serve.add_argument(
        "--http",
        default=None,
        metavar="ADDR",
        help="also serve the HTTP/JSON API and web console on ADDR (host:port)",
    )
    serve.add_argument(
        "--ready-file", type=Path, default=None, help="write the bound port here once ready"
    )
    serve.add_argument(
        "--watch-interval", type=float, default=None, help="seconds between checks for changes"
    )
    serve.add_argument(
        "--no-watch", dest="watch", action="store_false", default=None, help="do not watch roots"
    )

    index = commands.add_parser("index", help="manage the on-disk index")
    index_commands = index.add_subparsers(dest="index_command", required=True, metavar="ACTION")
    index_commands.add_parser("build", parents=[local, fmt], help="build an index generation")
    push = index_commands.add_parser(
        "push",
        parents=[local, fmt],
        help="cut the configured cluster sources' trees and push a new generation to each",
    )
    push.add_argument(
        "--source", action="append", default=None, help="push only this source (repeatable)"
    )

    search = commands.add_parser("search", parents=[remote], help="search a running daemon")
    search.add_argument("query", type=_text)
    search.add_argument("--top-k", type=_positive, default=0)
    search.add_argument("--kinds", type=_kinds, default=None, help="docs, code or docs,code")
    search.add_argument("--mode", default="", help="ranking mode (default: default)")
    search.add_argument(
        "--source", dest="sources", action="append", default=[], help="restrict to a source"
    )
    search.add_argument(
        "--library", default="", help="restrict to one dependency (a library's name: httpx)"
    )
    search.add_argument("--surface", default="", help="a topic to prefer (a boost, not a filter)")
    search.add_argument(
        "--token-budget", type=_positive, default=0, help="cap snippet and preview text (tokens)"
    )
    search.add_argument(
        "--snippet-lines", type=_positive, default=0, help="lines per snippet (default 8)"
    )
    search.add_argument(
        "--as-of",
        type=_moment,
        default=None,
        help="retrieve as of this date or time (ISO 8601, e.g. 2024-01-31; UTC when no zone)",
    )
    search.add_argument("--explain", action="store_true", help="show reasons and stages")

    related = commands.add_parser(
        "related", parents=[remote], help="supporting docs and code for refs or locations"
    )
    related.add_argument("refs", nargs="+", type=_text, metavar="REF_OR_LOCATION")
    related.add_argument("--top-k", type=_positive, default=0)
    related.add_argument("--kinds", type=_kinds, default=None, help="docs, code or docs,code")
    related.add_argument("--mode", default="", help="ranking mode (default: default)")
    related.add_argument(
        "--token-budget", type=_positive, default=0, help="cap the returned text (tokens)"
    )

    flow = commands.add_parser(
        "flow", parents=[remote], help="the steps that refs or locations describe"
    )
    flow.add_argument("refs", nargs="*", type=_text, metavar="REF_OR_LOCATION")
    flow.add_argument("--topic", default="", help="what the steps are for (used without refs)")
    flow.add_argument("--style", choices=("compact", "detailed"), default=None)
    flow.add_argument("--max-steps", type=_positive, default=0)
    flow.add_argument(
        "--token-budget", type=_positive, default=0, help="cap the returned text (tokens)"
    )

    guide = commands.add_parser(
        "guide", parents=[remote], help="a grounded implementation guide for a topic"
    )
    guide.add_argument("topic", type=_text)
    guide.add_argument("--framework", default="")
    guide.add_argument("--language", default="")
    guide.add_argument("--style", choices=("compact", "detailed"), default=None)
    guide.add_argument(
        "--token-budget", type=_positive, default=0, help="cap the returned text (tokens)"
    )

    get = commands.add_parser("get", parents=[remote], help="fetch a ref or a location")
    get.add_argument("ref", type=_text, metavar="REF_OR_LOCATION")
    get.add_argument(
        "--mode",
        choices=("snippet", "full", "multi_range", "definition", "outline"),
        default="snippet",
        help="definition: the code definition around the location, after its parents' "
        "signatures; outline: the headings or definitions, with their locations and sizes",
    )
    get.add_argument("--max-lines", type=_positive, default=0)
    get.add_argument(
        "--max-chars",
        type=_positive,
        default=0,
        help="answer in parts of at most this many characters (at least 200)",
    )
    get.add_argument("--cursor", default="", help="the next-part cursor a capped answer printed")

    commands.add_parser("sources", parents=[remote], help="list configured sources")

    health = commands.add_parser("health", parents=[remote], help="check the daemon's health")
    health.add_argument("--service", default="", help="service name (default: the whole server)")

    state = commands.add_parser("state", help="list or prune default state directories")
    state_commands = state.add_subparsers(dest="state_command", required=True, metavar="ACTION")
    state_commands.add_parser(
        "list", parents=[fmt], help="each state directory: what it serves, size, last use"
    )
    prune = state_commands.add_parser(
        "prune", parents=[fmt], help="remove state directories unused for a while"
    )
    prune.add_argument(
        "--older-than",
        type=_days,
        default=30.0,
        metavar="DAYS",
        help="remove directories unused for at least this many days (default: 30)",
    )
    prune.add_argument(
        "--dry-run", action="store_true", help="say what would be removed, remove nothing"
    )

    settings = commands.add_parser(
        "settings", help="every configuration key: table, type, default and meaning"
    )
    settings.add_argument(
        "--format",
        choices=("text", "json", "markdown", "levers"),
        default=argparse.SUPPRESS,
        help=f"output format (default: text; markdown is {REFERENCE_PAGE}, levers the "
        "lever table of docs/ranking.md)",
    )
    settings.add_argument(
        "--all-plugins",
        action="store_true",
        help="also the keys of source kinds from installed third-party plugins",
    )

    commands.add_parser("eval", help="run the retrieval evaluation (see 'scriptorium eval --help')")
    commands.add_parser(
        "mcp", help="serve the tools to agents over MCP stdio (see 'scriptorium mcp --help')"
    )
    return parser
