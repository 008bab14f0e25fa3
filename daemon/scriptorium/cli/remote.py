"""The commands that talk to a running daemon: search, related, flow, guide, get, sources,
health."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from google.protobuf.message import Message
from grpc_health.v1 import health_pb2

from scriptorium import limits
from scriptorium.cli.output import (
    format_content_header,
    format_flow,
    format_guide,
    format_outline,
    format_related,
    format_search,
    format_sources,
    print_json,
)
from scriptorium.cli.status import EXIT_FAILED, EXIT_OK, UsageError
from scriptorium.client import Client, ScriptoriumError, resolve_target
from scriptorium.client._wire import enum_word
from scriptorium.v1 import retrieval_pb2 as pb


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


# How long ``--wait-current`` waits without a ``--timeout``: a catch-up re-reads what changed.
WAIT_CURRENT_S = 600.0


def _client(args: argparse.Namespace, *, attempts: int = 3) -> Client:
    """The client for ``args``; with ``--wait-current``, once the daemon's answers are current."""
    client = _connect(args, attempts)
    if getattr(args, "wait_current", False):
        try:
            client.wait_current(args.timeout or WAIT_CURRENT_S)
        except BaseException:
            client.close()
            raise
    return client


def _connect(args: argparse.Namespace, attempts: int) -> Client:
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


def _say_cap(top_k: int, cap: int) -> None:
    """A ``--top-k`` above what the daemon returns: say it was lowered, on stderr."""
    if top_k > cap:
        print(f"note: --top-k {top_k} is above the cap of {cap}: at most {cap}", file=sys.stderr)


def cmd_search(args: argparse.Namespace) -> int:
    _say_cap(args.top_k, limits.TOP_K_MAX)
    with _client(args) as client:
        response = client.search(
            args.query,
            top_k=args.top_k,
            kinds=args.kinds,
            mode=args.mode,
            sources=args.sources,
            library=args.library,
            surface=args.surface,
            token_budget=args.token_budget,
            snippet_lines=args.snippet_lines,
            as_of=args.as_of,
            explain=args.explain,
        )
    return _show(args, response, lambda found: format_search(found, args.explain))


def _show(args: argparse.Namespace, response: Message, render: Callable[[Any], str]) -> int:
    """Print ``response`` as JSON or as ``render`` makes it text, per ``--format``."""
    if args.format == "json":
        print_json(response)
    else:
        print(render(response))
    return EXIT_OK


def _ref_ids(client: Client, refs: Sequence[str]) -> list[str]:
    """Ref ids as given; a location is resolved to its ref by the daemon (GetContent)."""
    return [
        ref if ref.startswith("r1.") else client.get_content(location=ref, max_lines=1).ref_id
        for ref in refs
    ]


def cmd_related(args: argparse.Namespace) -> int:
    _say_cap(args.top_k, limits.RELATED_TOP_K_MAX)
    with _client(args) as client:
        response = client.expand_related(
            _ref_ids(client, args.refs),
            top_k=args.top_k,
            kinds=args.kinds,
            mode=args.mode,
            token_budget=args.token_budget,
        )
    return _show(args, response, format_related)


def cmd_flow(args: argparse.Namespace) -> int:
    if not args.refs and not args.topic.strip():
        raise UsageError("flow needs REF_OR_LOCATION arguments or a non-empty --topic")
    with _client(args) as client:
        response = client.summarize_flow(
            _ref_ids(client, args.refs),
            topic=args.topic,
            style=args.style,
            max_steps=args.max_steps,
            token_budget=args.token_budget,
        )
    return _show(args, response, format_flow)


def cmd_guide(args: argparse.Namespace) -> int:
    with _client(args) as client:
        response = client.guide_implementation(
            args.topic,
            framework=args.framework,
            language=args.language,
            style=args.style,
            token_budget=args.token_budget,
        )
    return _show(args, response, format_guide)


def cmd_get(args: argparse.Namespace) -> int:
    ref = args.ref
    # Ref ids are versioned opaque strings; anything else is a human location.
    fields = {"ref_id": ref} if ref.startswith("r1.") else {"location": ref}
    with _client(args) as client:
        response = client.get_content(
            **fields,
            mode=args.mode,
            max_lines=args.max_lines,
            max_chars=args.max_chars,
            cursor=args.cursor,
        )
    if args.format == "json":
        print_json(response)
    elif args.mode == "outline":
        print(format_content_header(response), file=sys.stderr)
        print(format_outline(response))
    else:
        print(format_content_header(response), file=sys.stderr)
        content = response.content
        sys.stdout.write(content if not content or content.endswith("\n") else content + "\n")
    return EXIT_OK


def cmd_sources(args: argparse.Namespace) -> int:
    with _client(args) as client:
        response = client.list_sources()
    return _show(args, response, format_sources)


def cmd_health(args: argparse.Namespace) -> int:
    """An exec probe: 0 only when SERVING, 1 for any other answer, 2 when unreachable.
    With ``--wait-current`` it first waits (up to ``--timeout``, default 600 s) until the
    answers are current: a CI job's gate before it asks."""
    if args.timeout is None and not args.wait_current:
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
            print(f"  {item['source']}: {item['state']}: {item['detail']}")
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
        state = enum_word(pb.SourceState.DESCRIPTOR, s.state)
        if state != "ready" or s.last_error:
            waiting = "no file read yet" if state == "loading" else "no detail"
            detail = s.last_error or _progress_detail(s) or waiting
            troubles.append(
                {"source": s.name, "state": state, "last_error": s.last_error, "detail": detail}
            )
    return troubles


def _progress_detail(s: pb.SourceStatus) -> str:
    """What a source without an error is doing: how far its build has read."""
    if s.build_files_total:
        percent = 100 * s.build_files_done // s.build_files_total
        return f"building: {s.build_files_done} of {s.build_files_total} files read ({percent}%)"
    return ""
