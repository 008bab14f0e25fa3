"""The ``scriptorium`` command: run the daemon, build an index, and query a running daemon.

Exit status: 0 on success; 1 when the daemon answered with an error (or, for ``health``, with
anything but SERVING), or ``index build`` could not write its generation; 2 when the daemon
could not be reached or could not start (bad configuration, a broken plugin, an unbindable
address); 128 + the signal (130 for Ctrl-C) when ``serve`` or ``index build`` was interrupted
while building.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import logging
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

import grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2

from scriptorium import __version__
from scriptorium.client import Client, ResolutionError, ScriptoriumError, resolve_target
from scriptorium.index import progress, statedirs
from scriptorium.plugins import PluginError
from scriptorium.settings.config import ConfigError, Settings, load_settings
from scriptorium.v1 import retrieval_pb2 as pb

EXIT_OK, EXIT_FAILED, EXIT_UNAVAILABLE = 0, 1, 2
_UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
_KINDS = ("docs", "code")


# -- parser --------------------------------------------------------------------------------------


def _kinds(value: str) -> list[str]:
    kinds = [k.strip().lower() for k in value.split(",") if k.strip()]
    bad = [k for k in kinds if k not in _KINDS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown kind(s) {', '.join(bad)}; use docs and/or code")
    return kinds


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line naming the command, plus where to find its help.

    argparse's default reprints the whole usage block, which for ``search`` buries the one line
    that says what was wrong.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_UNAVAILABLE, f"{self.prog}: error: {message}\n(see '{self.prog} --help')\n")


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not number > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, got {value}")
    return number


def _days(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of days, got {value!r}") from None
    if not number >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return number


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
    local = _Parser(add_help=False)
    local.add_argument("paths", nargs="*", metavar="PATH", help="directories to index")
    local.add_argument("--config", type=Path, default=None, help="TOML configuration file")
    local.add_argument("--state-dir", default=None, help="index and cache directory")
    local.add_argument(
        "--log-level", type=_log_level, default=None, help="DEBUG, INFO, WARNING or ERROR"
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

    serve = commands.add_parser("serve", parents=[local], help="run the daemon")
    serve.add_argument("--listen", default=None, help="address to bind (host:port)")
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

    search = commands.add_parser("search", parents=[remote], help="search a running daemon")
    search.add_argument("query", type=_text)
    search.add_argument("--top-k", type=_positive, default=0)
    search.add_argument("--kinds", type=_kinds, default=None, help="docs, code or docs,code")
    search.add_argument("--mode", default="", help="ranking mode (default: default)")
    search.add_argument(
        "--source", dest="sources", action="append", default=[], help="restrict to a source"
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

    flow = commands.add_parser(
        "flow", parents=[remote], help="the steps that refs or locations describe"
    )
    flow.add_argument("refs", nargs="*", type=_text, metavar="REF_OR_LOCATION")
    flow.add_argument("--topic", default="", help="what the steps are for (used without refs)")
    flow.add_argument("--style", choices=("compact", "detailed"), default=None)
    flow.add_argument("--max-steps", type=_positive, default=0)

    guide = commands.add_parser(
        "guide", parents=[remote], help="a grounded implementation guide for a topic"
    )
    guide.add_argument("topic", type=_text)
    guide.add_argument("--framework", default="")
    guide.add_argument("--language", default="")
    guide.add_argument("--style", choices=("compact", "detailed"), default=None)

    get = commands.add_parser("get", parents=[remote], help="fetch a ref or a location")
    get.add_argument("ref", type=_text, metavar="REF_OR_LOCATION")
    get.add_argument("--mode", choices=("snippet", "full", "multi_range"), default="snippet")
    get.add_argument("--max-lines", type=_positive, default=0)

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

    commands.add_parser("eval", help="run the retrieval evaluation (see 'scriptorium eval --help')")
    commands.add_parser(
        "mcp", help="serve the tools to agents over MCP stdio (see 'scriptorium mcp --help')"
    )
    return parser


# -- output --------------------------------------------------------------------------------------


def _print_json(value: Message | dict[str, Any]) -> None:
    if isinstance(value, Message):
        value = MessageToDict(value, preserving_proto_field_name=True)
    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def _lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _reasons(reasons: Sequence[pb.Reason], indent: str) -> list[str]:
    return [
        f"{indent}{r.name} x{r.weight:.3g}" + (f"  {r.detail}" if r.detail else "") for r in reasons
    ]


def format_search(response: pb.SearchResponse, explain: bool) -> str:
    out: list[str] = []
    for rank, r in enumerate(response.results, start=1):
        kind = pb.RefKind.Name(r.kind).removeprefix("REF_KIND_").lower()
        out.append(f"{rank}. {r.location}  [{kind}, {r.source}, score {r.score:.3f}]")
        breadcrumb = " > ".join(r.section_path) or r.title
        if breadcrumb:
            out.append(f"   {breadcrumb}  ({_lines(r.start_line, r.end_line)})")
        out.append(f"   ref: {r.ref_id}")
        if r.superseded_by:
            out.append(f"   superseded by: {r.superseded_by}")
        if r.preview:
            out.append(f"   {r.preview}")
        if explain:
            out.extend(_reasons(r.reasons, "     + "))
    if not response.results:
        out.append("no results")
    if response.abstained:
        reason = pb.AbstainReason.Name(response.abstain_reason).removeprefix("ABSTAIN_REASON_")
        out.append(f"abstained: {reason.lower()}")
    for c in response.conflicts:
        out.append(
            f"conflict {c.key}: {', '.join(c.locations)}" + (f" ({c.note})" if c.note else "")
        )
    for f in response.failed_sources:
        out.append(f"source {f.source} failed: {f.detail}")
    if explain:
        for stage in response.stages:
            out.append(f"stage {stage.stage}: kept {stage.kept}, dropped {stage.dropped}")
            out.extend(f"   - {d.location or d.ref_id}: {d.why}" for d in stage.drops)
        if response.HasField("understood"):
            u = response.understood
            out.append(f"understood: terms={list(u.terms)} mode={u.mode or 'default'}")
    out.append(f"trace: {response.trace_id}  provider: {response.provider}")
    return "\n".join(out)


def _confidence(value: int) -> str:
    return pb.Confidence.Name(value).removeprefix("CONFIDENCE_").lower()


def _ref_lines(rank: int, location: str, kind: int, detail: str, ref_id: str) -> list[str]:
    name = pb.RefKind.Name(kind).removeprefix("REF_KIND_").lower()
    return [f"{rank}. {location}  [{name}{detail}]", f"   ref: {ref_id}"]


def format_related(response: pb.ExpandRelatedResponse) -> str:
    out: list[str] = []
    for rank, r in enumerate(response.related, start=1):
        out.extend(_ref_lines(rank, r.location, r.kind, f", score {r.score:.3f}", r.ref_id))
        out.extend(_reasons(r.reasons, "     + "))
    if not response.related:
        out.append("nothing related")
    out.extend(f"unresolved: {ref}" for ref in response.unresolved_ref_ids)
    out.append(f"trace: {response.trace_id}")
    return "\n".join(out)


def _flow_lines(steps: Sequence[pb.FlowStep]) -> list[str]:
    out: list[str] = []
    for step in steps:
        out.append(f"{step.index}. {step.title}  ({step.origin})")
        if step.description and step.description != step.title:
            out.append(f"   {step.description}")
        out.extend(f"   from {location}" for location in step.locations)
    return out


def format_flow(response: pb.SummarizeFlowResponse) -> str:
    out = _flow_lines(response.flow) or ["no steps"]
    out.extend(f"assumption: {a}" for a in response.assumptions)
    out.extend(f"unresolved: {ref}" for ref in response.unresolved_ref_ids)
    out.append(f"confidence: {_confidence(response.confidence)}  trace: {response.trace_id}")
    return "\n".join(out)


def format_guide(response: pb.GuideImplementationResponse) -> str:
    out = [f"query: {response.query}", "", "steps:"]
    out.extend(_flow_lines(response.flow) or ["  none"])
    for heading, results in (("docs", response.docs), ("sample code", response.sample_code)):
        out.extend(["", f"{heading}:"])
        for rank, r in enumerate(results, start=1):
            out.extend(_ref_lines(rank, r.location, r.kind, f", {r.source}", r.ref_id))
        if not results:
            out.append("  none")
    if response.assumptions:
        out.extend(["", "assumptions:"])
        out.extend(f"- {a}" for a in response.assumptions)
    out.extend(["", f"confidence: {_confidence(response.confidence)}  trace: {response.trace_id}"])
    return "\n".join(out)


def _provenance(response: pb.GetContentResponse) -> str:
    """How the content was found, when not plainly at the location asked for."""
    resolution = response.resolution
    rule = resolution.rule
    if rule == "ref":
        return "  fetched by ref"
    requested = response.requested_location or resolution.requested_location
    if rule and rule not in ("exact", "none") and requested:
        return f"  resolved from {requested} by {rule}"
    if rule and rule not in ("exact", "none"):
        return f"  resolved by {rule}"
    return ""


def format_content_header(response: pb.GetContentResponse) -> str:
    parts = [f"{response.location}  ({_lines(response.start_line, response.end_line)}"]
    parts.append(f" of {response.total_lines})")
    if response.truncated:
        parts.append("  [truncated]")
    if response.revision_skew:
        parts.append("  [changed since search]")
    parts.append(_provenance(response))
    header = ["".join(parts)]
    if response.resolution.detail:
        header.append(f"  note: {response.resolution.detail}")
    header.extend(f"  {_lines(r.start_line, r.end_line)}: {r.reason}" for r in response.ranges)
    return "\n".join(header)


def _build_progress(source: pb.SourceStatus) -> str:
    """``done/total`` files read by the build under way, or ``-`` when none is."""
    if not source.build_files_total:
        return "-"
    return f"{source.build_files_done}/{source.build_files_total}"


def format_sources(response: pb.ListSourcesResponse) -> str:
    """One row per source: its state, what the served generation holds of it, and how far a
    build under way has read (during a first build the counts are still 0: BUILD says why)."""
    rows = [("NAME", "KIND", "STATE", "DOCS", "BLOCKS", "BUILD", "GEN", "CLASS", "ROOT")]
    for s in response.sources:
        state = pb.SourceState.Name(s.state).removeprefix("SOURCE_STATE_").lower()
        rows.append(
            (
                s.name,
                s.kind,
                state,
                str(s.document_count),
                str(s.block_count),
                _build_progress(s),
                str(s.generation),
                s.source_class,
                s.root,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    if any(s.build_files_total for s in response.sources):
        out.append("BUILD: files read by the build under way (done/total)")
    out.extend(f"{s.name}: {s.last_error}" for s in response.sources if s.last_error)
    out.append(f"server {response.server_version}, generation {response.generation}")
    return "\n".join(out)


def _report(err: ScriptoriumError) -> int:
    print(f"scriptorium: {err.code.name}: {err.message}", file=sys.stderr)
    if isinstance(err, ResolutionError):
        print(f"  resolution: {err.reason} (rule {err.rule})", file=sys.stderr)
        for candidate in err.candidates:
            print(f"  candidate: {candidate}", file=sys.stderr)
    return EXIT_UNAVAILABLE if err.code in _UNREACHABLE else EXIT_FAILED


# -- commands ------------------------------------------------------------------------------------


class UsageError(Exception):
    """Command-line input that cannot be used; the message says which and why."""


def _pem(path: Path | None, flag: str) -> bytes | None:
    """A PEM file's bytes, read here so a wrong path is a sentence and a non-PEM file is refused
    before gRPC sees it (it aborts the process on a key it cannot parse)."""
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {exc.strerror or exc}") from None
    if b"-----BEGIN " not in data:
        raise UsageError(f"{flag} {path}: not a PEM file")
    return data


def _client(args: argparse.Namespace, *, attempts: int = 3) -> Client:
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key must be given together")
    return Client(
        resolve_target(args.target),
        token=args.token or None,
        root_certificates=_pem(args.tls_ca, "--tls-ca"),
        client_cert=_pem(args.tls_cert, "--tls-cert"),
        client_key=_pem(args.tls_key, "--tls-key"),
        timeout=args.timeout if args.timeout is not None else 30.0,
        attempts=attempts,
    )


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def _apply_build_workers(settings: Settings, args: argparse.Namespace) -> None:
    if args.build_workers is not None:
        if args.build_workers < 0:
            raise ConfigError("--build-workers must be at least 0")
        settings.build_workers = args.build_workers


def cmd_serve(args: argparse.Namespace) -> int:
    from scriptorium.grpc.server import serve

    settings = load_settings(args.config, args.paths, listen=args.listen, state_dir=args.state_dir)
    if args.log_level:
        settings.log_level = args.log_level.upper()
    _apply_build_workers(settings, args)
    if args.watch is not None:
        settings.watch = args.watch
    if args.watch_interval is not None:
        if args.watch_interval <= 0:
            raise ConfigError("--watch-interval must be greater than 0")
        settings.watch_interval = args.watch_interval
    _configure_logging(settings.log_level)
    with progress.attach(progress.ProgressRenderer(sys.stderr)):
        return asyncio.run(serve(settings, ready_file=args.ready_file))


def cmd_index_build(args: argparse.Namespace) -> int:
    from scriptorium.cancel import BuildCancelled, BuildSignals
    from scriptorium.engine.local import build_index
    from scriptorium.grpc.server import EXIT_INTERRUPTED, validate_source_kinds
    from scriptorium.index.generation import GenerationWriteError
    from scriptorium.plugins import load_registry

    settings = load_settings(args.config, args.paths, state_dir=args.state_dir)
    if args.log_level:
        settings.log_level = args.log_level.upper()
    _apply_build_workers(settings, args)
    _configure_logging(settings.log_level)
    registry = load_registry()
    validate_source_kinds(settings, registry)
    with BuildSignals() as signals, progress.attach(progress.ProgressRenderer(sys.stderr)):
        try:
            summary = build_index(settings, registry, stop=signals.event)
            if inspect.isawaitable(summary):
                summary = asyncio.run(summary)
        except BuildCancelled:  # the log has said so; nothing was written
            return 128 + signals.signal if signals.signal else EXIT_INTERRUPTED
        except GenerationWriteError as exc:
            print(f"scriptorium: error: {exc}", file=sys.stderr)
            return EXIT_FAILED
    if args.format == "json":
        _print_json(dict(summary))
    else:
        for key, value in dict(summary).items():
            print(f"{key}: {value}")
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    with _client(args) as client:
        response = client.search(
            args.query,
            top_k=args.top_k,
            kinds=args.kinds,
            mode=args.mode,
            sources=args.sources,
            surface=args.surface,
            token_budget=args.token_budget,
            snippet_lines=args.snippet_lines,
            as_of=args.as_of,
            explain=args.explain,
        )
    if args.format == "json":
        _print_json(response)
    else:
        print(format_search(response, args.explain))
    return EXIT_OK


def _ref_ids(client: Client, refs: Sequence[str]) -> list[str]:
    """Ref ids as given; a location is resolved to its ref by the daemon (GetContent)."""
    return [
        ref if ref.startswith("r1.") else client.get_content(location=ref, max_lines=1).ref_id
        for ref in refs
    ]


def cmd_related(args: argparse.Namespace) -> int:
    with _client(args) as client:
        response = client.expand_related(
            _ref_ids(client, args.refs), top_k=args.top_k, kinds=args.kinds, mode=args.mode
        )
    if args.format == "json":
        _print_json(response)
    else:
        print(format_related(response))
    return EXIT_OK


def cmd_flow(args: argparse.Namespace) -> int:
    if not args.refs and not args.topic.strip():
        raise UsageError("flow needs REF_OR_LOCATION arguments or a non-empty --topic")
    with _client(args) as client:
        response = client.summarize_flow(
            _ref_ids(client, args.refs),
            topic=args.topic,
            style=args.style,
            max_steps=args.max_steps,
        )
    if args.format == "json":
        _print_json(response)
    else:
        print(format_flow(response))
    return EXIT_OK


def cmd_guide(args: argparse.Namespace) -> int:
    with _client(args) as client:
        response = client.guide_implementation(
            args.topic, framework=args.framework, language=args.language, style=args.style
        )
    if args.format == "json":
        _print_json(response)
    else:
        print(format_guide(response))
    return EXIT_OK


def cmd_get(args: argparse.Namespace) -> int:
    ref = args.ref
    # Ref ids are versioned opaque strings; anything else is a human location.
    fields = {"ref_id": ref} if ref.startswith("r1.") else {"location": ref}
    with _client(args) as client:
        response = client.get_content(**fields, mode=args.mode, max_lines=args.max_lines)
    if args.format == "json":
        _print_json(response)
    else:
        print(format_content_header(response), file=sys.stderr)
        content = response.content
        sys.stdout.write(content if not content or content.endswith("\n") else content + "\n")
    return EXIT_OK


def cmd_sources(args: argparse.Namespace) -> int:
    with _client(args) as client:
        response = client.list_sources()
    if args.format == "json":
        _print_json(response)
    else:
        print(format_sources(response))
    return EXIT_OK


def cmd_health(args: argparse.Namespace) -> int:
    """An exec probe: 0 only when SERVING, 1 for any other answer, 2 when unreachable."""
    if args.timeout is None:
        args.timeout = 5.0
    with _client(args, attempts=1) as client:
        response = client.health(args.service)
        details = [] if args.service else _source_troubles(client, args.timeout)
    name = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    if args.format == "json":
        print(json.dumps({"status": name, "details": details}, indent=2))
    else:
        print(name)
        for item in details:
            print(f"  {item['source']}: {item['state']}: {item['last_error'] or 'no detail'}")
    return EXIT_OK if response.status == health_pb2.HealthCheckResponse.SERVING else EXIT_FAILED


def _source_troubles(client: Client, timeout: float) -> list[dict[str, str]]:
    """Sources that are not simply ready (a failed update, a missing root), for the probe's
    details: gRPC health carries a status only. Best effort: a daemon that cannot list its
    sources leaves the probe's answer as it was."""
    try:
        reply = client.list_sources(timeout=timeout)
    except ScriptoriumError:
        return []
    troubles = []
    for s in reply.sources:
        state = pb.SourceState.Name(s.state).removeprefix("SOURCE_STATE_").lower()
        if state != "ready" or s.last_error:
            troubles.append({"source": s.name, "state": state, "last_error": s.last_error})
    return troubles


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _when(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M") if moment else "-"


def format_state_dirs(entries: Sequence[statedirs.StateDir]) -> str:
    rows = [("STATE DIR", "SIZE", "GENS", "LAST USED (UTC)", "IN USE", "SERVES")]
    for d in entries:
        serves = d.config or ", ".join(d.roots) or "(not recorded)"
        rows.append(
            (
                d.path,
                _size(d.size_bytes),
                str(d.generations),
                _when(d.last_used),
                "yes" if d.in_use else "no",
                serves,
            )
        )
    if len(rows) == 1:
        return f"no state directories under {statedirs.cache_root()}"
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def cmd_state(args: argparse.Namespace) -> int:
    """``state list`` and ``state prune``: local, no daemon needed."""
    if args.state_command == "list":
        entries = statedirs.list_state_dirs()
        if args.format == "json":
            _print_json(
                {"root": str(statedirs.cache_root()), "state_dirs": [e.to_json() for e in entries]}
            )
        else:
            print(format_state_dirs(entries))
        return EXIT_OK
    result = statedirs.prune(args.older_than, dry_run=args.dry_run)
    if args.format == "json":
        _print_json(
            {
                "dry_run": args.dry_run,
                "removed": [e.to_json() for e in result.removed],
                "kept_in_use": [e.to_json() for e in result.kept_in_use],
                "kept_recent": [e.to_json() for e in result.kept_recent],
            }
        )
        return EXIT_OK
    verb = "would remove" if args.dry_run else "removed"
    for entry in result.removed:
        print(
            f"{verb} {entry.path} ({_size(entry.size_bytes)}, last used {_when(entry.last_used)})"
        )
    for entry in result.kept_in_use:
        print(f"kept {entry.path}: in use")
    freed = sum(e.size_bytes for e in result.removed)
    print(
        f"{verb} {len(result.removed)} state director{'y' if len(result.removed) == 1 else 'ies'}"
        f" ({_size(freed)}); kept {len(result.kept_in_use)} in use,"
        f" {len(result.kept_recent)} used in the last {args.older_than:g} days"
    )
    return EXIT_OK


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
}


# 128 + SIGPIPE, what a shell reports for a program whose reader closed the pipe.
EXIT_BROKEN_PIPE = 141


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
            return cmd_index_build(args)
        return _COMMANDS[args.command](args)
    except (ConfigError, PluginError, UsageError) as exc:
        print(f"scriptorium: error: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except ScriptoriumError as exc:
        if args.command == "health":
            print(exc.code.name if exc.code not in _UNREACHABLE else "UNREACHABLE")
            return EXIT_UNAVAILABLE if exc.code in _UNREACHABLE else EXIT_FAILED
        return _report(exc)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): what it wanted it has. Point stdout at /dev/null
        # so the interpreter's final flush does not fail again, and exit as a piped program.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
