"""Run records: what was measured, by which build, on which corpus, and how it scored.

Attribution is kept honest: the daemon's commit comes only from an explicit ``--commit-sha``
(never guessed from a path), and the harness's own checkout is recorded separately.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from scriptorium.evaluation import scoring

SCHEMA_VERSION = 1
KNOWN_LIMITATIONS = (
    "fetch success means an OK status with non-empty content: it proves availability, not "
    "freshness or agreement between the indexed and fetched revisions",
    "daemon.commit_sha is 'unknown' unless --commit-sha was given; the daemon's path or version "
    "string never determines it",
    "preview terms are recorded, not scored; compare previews by hand",
)


class RecordError(ValueError):
    """A run record file cannot be used (unreadable, not JSON, or an unknown schema)."""


def harness_commit(cwd: Path | None = None) -> str:
    """HEAD of the checkout running the harness, or "unknown" when git cannot say."""
    where = cwd or Path(__file__).resolve().parent
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", sha) else "unknown"


def safe_label(label: str) -> str:
    """A label reduced to characters that are safe in a file name."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-.")
    return cleaned or "unlabeled"


def default_output_path(set_path: Path, label: str, now: datetime) -> Path:
    """``<set dir>/runs/<yyyymmdd-HHMMSS>-<label>.json`` (eval/runs/ for the shipped set)."""
    return set_path.parent / "runs" / f"{now:%Y%m%d-%H%M%S}-{safe_label(label)}.json"


def build_record(
    *,
    label: str,
    timestamp: datetime,
    cases: Sequence[Mapping[str, Any]],
    set_path: str,
    set_digest: str,
    top_k: int,
    config: str | None,
    target: str,
    started_daemon: bool,
    server_version: str,
    daemon_commit: str | None,
    harness_sha: str,
    generation: int | None,
    sources: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Assemble the run record (schema version 1) with its aggregates."""
    return {
        "schema_version": SCHEMA_VERSION,
        "label": label,
        "timestamp": timestamp.isoformat(timespec="seconds"),
        "daemon": {
            "server_version": server_version,
            "commit_sha": daemon_commit or "unknown",
            "commit_sha_source": "parameter" if daemon_commit else "unknown",
            "target": target,
            "started_by_harness": started_daemon,
        },
        "harness": {
            "commit_sha": harness_sha,
            "commit_sha_source": "git" if harness_sha != "unknown" else "unknown",
        },
        "corpus": {"generation": generation, "sources": list(sources)},
        "inputs": {
            "set_path": set_path,
            "set_sha256": set_digest,
            "set_size": len(cases),
            "top_k": top_k,
            "config": config,
        },
        "known_limitations": list(KNOWN_LIMITATIONS),
        "aggregate": scoring.aggregate_run(cases),
        "cases": list(cases),
    }


def write_record(record: Mapping[str, Any], path: Path) -> Path:
    """Write the record as indented UTF-8 JSON, creating the parent directory if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a run record and check that this harness understands its schema."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(f"{path}: cannot read ({exc.strerror})") from exc
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise RecordError(f"{path}: not a schema_version {SCHEMA_VERSION} run record")
    if not isinstance(data.get("cases"), list):
        raise RecordError(f"{path}: the record has no cases")
    return data


# ------------------------------------------------------------------------------------ display

TABLE_COLUMNS = (
    ("cases", "case_count", "count"),
    ("srch", "search_case_count", "count"),
    ("@1", "hit@1", "rate"),
    ("@3", "hit@3", "rate"),
    ("@5", "hit@5", "rate"),
    ("@8", "hit@8", "rate"),
    ("@k", "hit@k", "rate"),
    ("MRR", "mrr", "rate"),
    ("sec@5", "section_hit@5", "rate"),
    ("fetch", "fetch_success_rate", "rate"),
    ("stale", "stale_pass_rate", "rate"),
    ("redun", "redundant_share", "rate"),
    ("rel@1", "related_hit@1", "rate"),
    ("rel@3", "related_hit@3", "rate"),
    ("prev", "mean_preview_chars", "chars"),
    ("min", "min_preview_chars", "chars"),
)


def format_value(value: Any, style: str) -> str:
    if value is None:
        return "-"
    if style == "rate":
        return f"{value:.3f}"
    if style == "chars":
        return f"{value:.0f}"
    return str(value)


def format_table(aggregate: Mapping[str, Any]) -> str:
    """Overall, per-tag and per-language rows of the headline metrics."""
    rows: list[tuple[str, Mapping[str, Any]]] = [("OVERALL", aggregate["overall"])]
    rows += [(f"tag:{k}", v) for k, v in aggregate.get("by_tag", {}).items()]
    rows += [(f"lang:{k}", v) for k, v in aggregate.get("by_lang", {}).items()]
    name_width = max(len(name) for name, _ in rows)
    header = "group".ljust(name_width) + "".join(f"{col:>7}" for col, _, _ in TABLE_COLUMNS)
    lines = [header, "-" * len(header)]
    for name, summary in rows:
        cells = "".join(
            f"{format_value(summary.get(key), style):>7}" for _, key, style in TABLE_COLUMNS
        )
        lines.append(name.ljust(name_width) + cells)
    return "\n".join(lines)


def format_misses(cases: Sequence[Mapping[str, Any]], limit: int = 60) -> str:
    """One line per case that missed at hit@5, failed to fetch, or failed a direct fetch."""
    lines = []
    for case in cases:
        problems = []
        hits = case.get("hits")
        if hits is not None and not hits.get("5"):
            rank = case.get("rank")
            got = (case.get("search") or {}).get("returned", [])[:1]
            problems.append(f"miss@5 (rank {rank or '-'}; top: {got[0] if got else 'none'})")
        related = case.get("related_hits")
        if related is not None and not related.get("3"):
            got = (case.get("related_search") or {}).get("returned", [])[:3]
            shown = ", ".join(got) or "none"
            rank = case.get("related_rank") or "-"
            problems.append(f"related miss@3 (rank {rank}; top: {shown})")
        if case.get("fetch_success") is False:
            fetch = case.get("fetch") or {}
            problems.append(f"fetch {fetch.get('status')} for {fetch.get('requested')!r}")
        stale = case.get("stale")
        if stale is not None and not stale.get("passed"):
            problems.append(f"direct fetch {stale.get('outcome')} (expected {stale.get('expect')})")
        if case.get("harness_error"):
            problems.append(f"harness error: {case['harness_error']}")
        if problems:
            lines.append(f"  {case['id']}: " + "; ".join(problems))
    if len(lines) > limit:
        lines = [*lines[:limit], f"  ... {len(lines) - limit} more"]
    return "\n".join(lines) if lines else "  (none)"


def format_summary(record: Mapping[str, Any]) -> str:
    """A readable report of one run: attribution, the metrics table, and the misses."""
    daemon = record["daemon"]
    inputs = record["inputs"]
    head = [
        f"run {record['label']!r} at {record['timestamp']}",
        f"daemon {daemon['server_version'] or '?'} (commit {daemon['commit_sha']}, "
        f"{daemon['commit_sha_source']}) at {daemon['target']}; "
        f"harness commit {record['harness']['commit_sha']}",
        f"corpus generation {record['corpus']['generation']}; set {inputs['set_path']} "
        f"({inputs['set_size']} cases), top_k {inputs['top_k']}",
        "",
        format_table(record["aggregate"]),
        "",
        "cases needing attention:",
        format_misses(record["cases"]),
    ]
    return "\n".join(head)
