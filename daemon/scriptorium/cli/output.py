"""How each command's answer is printed: JSON, or text for a person at a terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from scriptorium.cli.status import EXIT_FAILED, EXIT_UNAVAILABLE, UNREACHABLE
from scriptorium.client import ResolutionError, ScriptoriumError
from scriptorium.client._wire import enum_word
from scriptorium.index import statedirs
from scriptorium.v1 import retrieval_pb2 as pb


def print_json(value: Message | dict[str, Any]) -> None:
    if isinstance(value, Message):
        value = MessageToDict(value, preserving_proto_field_name=True)
    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def print_error_json(code: str, message: str, resolution: Message | None = None) -> None:
    """``{"status": "error", "code", "message", "resolution"}`` (resolution null when none)."""
    detail = None
    if resolution is not None:
        detail = MessageToDict(resolution, preserving_proto_field_name=True)
    print_json({"status": "error", "code": code, "message": message, "resolution": detail})


def _lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


def _table(rows: Sequence[Sequence[str]]) -> str:
    """Rows as left-aligned columns two spaces apart (the first row is the header)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


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
    if response.query_truncated:
        out.append(
            f"note: the query was cut; only its first {response.query_chars_used} characters"
            " were searched"
        )
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
            if u.docs_terms:
                out.append(f"  docs pool also: {list(u.docs_terms)}")
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
    out.append(f"tokens: {response.tokens_used}  trace: {response.trace_id}")
    return "\n".join(out)


def _flow_lines(steps: Sequence[pb.FlowStep]) -> list[str]:
    out: list[str] = []
    for step in steps:
        out.append(f"{step.index}. {step.title}  ({step.origin})")
        if step.description and step.description != step.title:
            # A description may end with the code block its sentence introduces.
            out.extend(f"   {line}".rstrip() for line in step.description.splitlines())
        out.extend(f"   from {location}" for location in step.locations)
    return out


def format_flow(response: pb.SummarizeFlowResponse) -> str:
    out = _flow_lines(response.flow) or ["no steps"]
    out.extend(f"assumption: {a}" for a in response.assumptions)
    out.extend(f"unresolved: {ref}" for ref in response.unresolved_ref_ids)
    out.append(
        f"confidence: {_confidence(response.confidence)}  tokens: {response.tokens_used}"
        f"  trace: {response.trace_id}"
    )
    return "\n".join(out)


def format_guide(response: pb.GuideImplementationResponse) -> str:
    out = [f"query: {response.query}"]
    if response.topic_truncated:
        out.append(
            f"note: the topic was cut; only its first {response.topic_chars_used} characters"
            " were used"
        )
    out += ["", "steps:"]
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
    out.extend(
        [
            "",
            f"confidence: {_confidence(response.confidence)}  tokens: {response.tokens_used}"
            f"  trace: {response.trace_id}",
        ]
    )
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


# Code answers say what they cover; a doc section or page is plain from its location.
_CODE_SCOPES = frozenset({"definition", "window", "lines", "file"})


def format_content_header(response: pb.GetContentResponse) -> str:
    parts = [f"{response.location}  ({_lines(response.start_line, response.end_line)}"]
    parts.append(f" of {response.total_lines})")
    if response.scope in _CODE_SCOPES:
        parts.append(f"  {response.scope}" + (f" {response.symbol}" if response.symbol else ""))
    if response.truncated:
        parts.append("  [truncated]")
    if response.revision_skew:
        parts.append("  [changed since search]")
    parts.append(_provenance(response))
    header = ["".join(parts)]
    if response.HasField("part") and response.part.count > 1:
        part = response.part
        header.append(
            f"  part {part.number} of {part.count}: characters {part.start_char}-{part.end_char}"
            f" of {response.total_chars}"
        )
        if response.next_cursor:
            header.append(f"  next part: --cursor {response.next_cursor}")
    if response.resolution.detail:
        header.append(f"  note: {response.resolution.detail}")
    header.extend(
        f"  {_lines(r.start_line, r.end_line)}: signature of {r.reason} (above)"
        for r in response.context
    )
    header.extend(f"  {_lines(r.start_line, r.end_line)}: {r.reason}" for r in response.ranges)
    return "\n".join(header)


def format_outline(response: pb.GetContentResponse) -> str:
    """One row per heading or definition, indented by level: lines, size, location."""
    if not response.outline:
        return "(no headings or definitions)"
    rows = [("LINES", "CHARS", "ENTRY", "LOCATION")]
    for entry in response.outline:
        indent = "  " * max(0, entry.level - 1)
        label = entry.title if entry.kind == "heading" else f"{entry.kind} {entry.title}"
        rows.append(
            (
                _lines(entry.start_line, entry.end_line),
                str(entry.chars),
                indent + label,
                entry.location,
            )
        )
    return _table(rows)


def _build_progress(source: pb.SourceStatus) -> str:
    """``done/total`` files read by the build under way, or ``-`` when none is."""
    if not source.build_files_total:
        return "-"
    return f"{source.build_files_done}/{source.build_files_total}"


def _vector_progress(source: pb.SourceStatus) -> str:
    """The semantic retriever's vectors of a source: ``ready``, ``done/total`` while they are
    made, or the state (off, waiting, failed)."""
    state = source.vectors_state or "off"
    if state == "encoding":
        return f"{source.vectors_done}/{source.vectors_total}"
    return state


def _crawl_lines(source: pb.SourceStatus) -> list[str]:
    """What the last crawl of a fetched site did, and each page it could not get."""
    if not source.HasField("crawl"):
        return []
    crawl = source.crawl
    lines = [f"{source.name}: crawl {crawl.detail}"]
    lines.extend(f"{source.name}:   {f.url}: {f.error}" for f in crawl.failures)
    if crawl.pages_failed > len(crawl.failures):
        lines.append(f"{source.name}:   ... {crawl.pages_failed - len(crawl.failures)} more")
    return lines


def format_sources(response: pb.ListSourcesResponse) -> str:
    """One row per source: its state, what the served generation holds of it, and how far a
    build under way has read (during a first build the counts are still 0: BUILD says why)."""
    rows = [("NAME", "KIND", "STATE", "DOCS", "BLOCKS", "BUILD", "VECTORS", "GEN", "CLASS", "ROOT")]
    for s in response.sources:
        state = enum_word(pb.SourceState.DESCRIPTOR, s.state)
        rows.append(
            (
                s.name,
                s.kind,
                state,
                str(s.document_count),
                str(s.block_count),
                _build_progress(s),
                _vector_progress(s),
                str(s.generation),
                s.source_class,
                s.root,
            )
        )
    out = _table(rows).split("\n")
    if any(s.build_files_total for s in response.sources):
        out.append("BUILD: files read by the build under way (done/total)")
    out.extend(f"{s.name}: {s.last_error}" for s in response.sources if s.last_error)
    for s in response.sources:
        if s.skipped:
            rules = ", ".join(f"{c.files} by {c.rule}" for c in s.skipped)
            out.append(f"{s.name}: skipped {rules}")
    for s in response.sources:
        out.extend(_crawl_lines(s))
    out.extend(f"{s.name}: {s.detail}" for s in response.sources if s.detail)
    details = {s.vectors_detail for s in response.sources if s.vectors_state in ("off", "failed")}
    out.extend(f"vectors: {detail}" for detail in sorted(details) if detail)
    out.append(f"server {response.server_version}, generation {response.generation}")
    return "\n".join(out)


def format_build_summary(summary: dict[str, Any]) -> str:
    """What ``index build`` wrote: the generation, where, its totals, and a row per source."""
    rows = [("NAME", "STATE", "DOCS")]
    for name, source in summary.get("sources", {}).items():
        rows.append((name, str(source.get("state", "")), str(source.get("documents", 0))))
    head = (
        f"generation {summary['generation']} in {summary['state_dir']}: "
        f"{summary['documents']} documents, {summary['blocks']} blocks "
        f"({summary['changed']} changed, {summary['seconds']:.2f} s)"
    )
    return "\n".join([head, _table(rows)])


def report(err: ScriptoriumError, fmt: str = "text") -> int:
    """A failed call: the sentence on stderr; with ``--format json`` also an object on stdout,
    so a script reads what happened from the same stream it reads answers from."""
    if fmt == "json":
        resolution = err.resolution if isinstance(err, ResolutionError) else None
        print_error_json(err.code.name, err.message, resolution)
    print(f"scriptorium: {err.code.name}: {err.message}", file=sys.stderr)
    if isinstance(err, ResolutionError):
        print(f"  resolution: {err.reason} (rule {err.rule})", file=sys.stderr)
        for candidate in err.candidates:
            print(f"  candidate: {candidate}", file=sys.stderr)
    return EXIT_UNAVAILABLE if err.code in UNREACHABLE else EXIT_FAILED


def size_text(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def when_text(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M") if moment else "-"


def format_state_dirs(entries: Sequence[statedirs.StateDir]) -> str:
    rows = [("STATE DIR", "SIZE", "GENS", "LAST USED (UTC)", "IN USE", "SERVES")]
    for d in entries:
        serves = d.config or ", ".join(d.roots) or "(not recorded)"
        rows.append(
            (
                d.path,
                size_text(d.size_bytes),
                str(d.generations),
                when_text(d.last_used),
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
