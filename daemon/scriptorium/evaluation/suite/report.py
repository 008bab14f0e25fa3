"""Suite output: Markdown tables per set and over sets, per-case records, and run comparison.

Records are JSONL, one row per (set, case, system), so two runs compare case by case. The
comparison reports, per set, a paired bootstrap 95% interval of each metric's delta and a
paired sign test over cases: with 36 or 169 cases a delta inside that interval is noise.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from scriptorium.evaluation.suite import metrics
from scriptorium.evaluation.suite.repos import SuiteError

SYSTEM_ORDER = ("daemon", "bm25-file", "bm25-block")
SET_TITLES = {
    "fastapi": "fastapi (project set, page level, top 10)",
    "docs-search": "docs-search (36-query subset, page level)",
    "docs-search-repo": "docs-search-repo (the same 36 questions over each whole repository: "
    "docs, code, tests and translations; page level)",
    "swebench": "swebench (SWE-bench Verified subset, file level)",
    "ds1000": "ds1000 (CodeRAG-Bench DS-1000 problems with a reference page, DevDocs pages, "
    "page level, MRR@10)",
    "fastapi-repo": "fastapi-repo (the project's questions over the whole FastAPI repository, "
    "page level, MRR@10)",
    "usage": "usage (the project's questions about using httpx and pydantic, each over its "
    "whole repository; file level, MRR@10)",
    "usage-names": "usage-names (the project's questions that name httpx's and pydantic's "
    "identifiers, each over its whole repository; file level, MRR@10)",
    "libref": "libref (the project's short library-reference intents over ds1000's DevDocs "
    "pages, page level, MRR@10)",
}
# What a clipped query was cut to, per set: the daemon's own limit unless the set says less.
CLIP_NOTES = {"ds1000": "to the set's first 2,000 characters"}
DEFAULT_CLIP_NOTE = "to the daemon's 8,192-character limit"
# Metrics averaged over sets: the ones every set has.
MACRO_METRICS = ("hit@1", "hit@3", "hit@5", "mrr")
BOOTSTRAP_RESAMPLES = 2000
CASES_FILE = "cases.jsonl"
SUMMARY_FILE = "summary.json"
TABLES_FILE = "tables.md"


def _systems(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    present = {r["system"] for r in rows}
    return [s for s in SYSTEM_ORDER if s in present] + sorted(present - set(SYSTEM_ORDER))


def _metric_names(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(name for r in rows for name in r["metrics"]))


def group_means(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    return metrics.average([r["metrics"] for r in rows])


def set_aggregates(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per system: overall (micro) means, per-group means, and the macro over groups."""
    out: dict[str, Any] = {}
    for system in _systems(rows):
        mine = [r for r in rows if r["system"] == system]
        groups = sorted({r["group"] for r in mine})
        per_group = {g: group_means([r for r in mine if r["group"] == g]) for g in groups}
        names = _metric_names(mine)
        macro = {
            n: metrics.mean([v[n] for v in per_group.values() if v.get(n) is not None])
            for n in names
        }
        out[system] = {
            "cases": len(mine),
            "micro": group_means(mine),
            "macro": macro,
            "groups": per_group,
            "group_sizes": {g: sum(1 for r in mine if r["group"] == g) for g in groups},
        }
    return out


def headline(set_name: str, aggregate: Mapping[str, Any]) -> Mapping[str, float | None]:
    """A set's figure for the average over sets: swebench by its macro over repositories."""
    return aggregate["macro"] if set_name == "swebench" else aggregate["micro"]


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(header: Sequence[str], lines: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return out


def format_set(set_name: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """One set's Markdown table: every group, then (with several groups) macro and micro."""
    aggregates = set_aggregates(rows)
    names = _metric_names(rows)
    lines: list[list[str]] = []
    groups = sorted({r["group"] for r in rows})
    for group in groups:
        for system, agg in aggregates.items():
            values = agg["groups"].get(group)
            if values is not None:
                n = str(agg["group_sizes"][group])
                lines.append([group, n, system, *(_cell(values.get(m)) for m in names)])
    if len(groups) > 1:
        for label in ("macro", "micro"):
            for system, agg in aggregates.items():
                cells = [_cell(agg[label].get(m)) for m in names]
                lines.append([f"**{label}**", str(agg["cases"]), system, *cells])
    truncated = len({r["case_id"] for r in rows if r.get("truncated")})
    errors = sum(1 for r in rows if r.get("error"))
    title = SET_TITLES.get(set_name, set_name)
    notes = []
    if truncated:
        noun = "query" if truncated == 1 else "queries"
        notes.append(f"{truncated} {noun} clipped {CLIP_NOTES.get(set_name, DEFAULT_CLIP_NOTE)}")
    if errors:
        notes.append(f"{errors} searches failed (scored as misses)")
    text = [f"### {title}", ""]
    text += _table(["group", "n", "system", *names], lines)
    if notes:
        text += ["", "; ".join(notes) + "."]
    versus = daemon_versus_baselines(rows)
    if versus:
        text += ["", versus]
    return "\n".join(text)


def daemon_versus_baselines(rows: Sequence[Mapping[str, Any]], metric: str = "mrr") -> str:
    """The daemon's MRR gap to each baseline over the same cases, with its noise."""
    parts = []
    for baseline in [s for s in _systems(rows) if s != "daemon"]:
        mine = {r["case_id"]: r["metrics"].get(metric) for r in rows if r["system"] == baseline}
        ours = {r["case_id"]: r["metrics"].get(metric) for r in rows if r["system"] == "daemon"}
        deltas = [
            ours[c] - mine[c]
            for c in ours
            if c in mine and ours[c] is not None and mine[c] is not None
        ]
        if not deltas:
            continue
        low, high = bootstrap_interval(deltas)
        wins = sum(1 for d in deltas if d > 0)
        losses = sum(1 for d in deltas if d < 0)
        parts.append(
            f"daemon − {baseline}: {metric.upper()} {sum(deltas) / len(deltas):+.3f} "
            f"(95% paired bootstrap [{low:+.3f}, {high:+.3f}]; better on {wins}, worse on "
            f"{losses} of {len(deltas)} cases, sign test p = {sign_test(wins, losses):.3f})"
        )
    return "\n".join(f"- {p}" for p in parts)


def macro_over_sets(by_set: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict]:
    """Per system: the mean over sets of each set's headline figures."""
    out: dict[str, dict] = {}
    per_set = {name: set_aggregates(rows) for name, rows in by_set.items() if rows}
    systems = list(dict.fromkeys(s for agg in per_set.values() for s in agg))
    for system in systems:
        figures = [headline(n, agg[system]) for n, agg in per_set.items() if system in agg]
        out[system] = {
            m: metrics.mean([f[m] for f in figures if f.get(m) is not None]) for m in MACRO_METRICS
        }
        out[system]["sets"] = len(figures)
    return out


def format_macro(by_set: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    macro = macro_over_sets(by_set)
    sets = ", ".join(n for n, rows in by_set.items() if rows)
    lines = [[system, *(_cell(v[m]) for m in MACRO_METRICS)] for system, v in macro.items()]
    text = [
        f"### macro average over sets ({sets}; swebench enters by its macro over repositories)",
        "",
    ]
    return "\n".join(text + _table(["system", *MACRO_METRICS], lines))


def format_report(by_set: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    parts = [format_set(name, rows) for name, rows in by_set.items() if rows]
    if len(parts) > 1:
        parts.append(format_macro(by_set))
    return "\n\n".join(parts)


# -------------------------------------------------------------------------------- records


def write_records(
    out: Path, rows: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], tables: str
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / CASES_FILE).open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    (out / SUMMARY_FILE).write_text(
        json.dumps(summary, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    (out / TABLES_FILE).write_text(tables + "\n", encoding="utf-8")


def load_records(path: Path) -> list[dict[str, Any]]:
    """Rows of a run: ``path`` is its ``--out`` folder or its cases.jsonl."""
    file = path / CASES_FILE if path.is_dir() else path
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SuiteError(f"{file}: cannot read suite records ({exc.strerror})") from exc
    try:
        rows = [json.loads(line) for line in lines if line.strip()]
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{file}: not suite records ({exc.msg})") from exc
    needed = {"set", "case_id", "system", "metrics"}
    if not all(isinstance(r, dict) and needed <= set(r) for r in rows):
        raise SuiteError(f"{file}: not suite records (set, case_id, system, metrics per row)")
    return rows


def by_set(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(row["set"], []).append(row)
    return grouped


# ----------------------------------------------------------------------------- comparison


def bootstrap_interval(deltas: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """95% paired bootstrap interval of the mean delta (fixed seed: the same runs, the same
    interval)."""
    if not deltas:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(deltas)
    means = sorted(sum(rng.choices(deltas, k=n)) / n for _ in range(BOOTSTRAP_RESAMPLES))
    return means[int(0.025 * BOOTSTRAP_RESAMPLES)], means[int(0.975 * BOOTSTRAP_RESAMPLES) - 1]


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test over the cases that changed (ties dropped)."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare_rows(
    a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Per set, system and metric: A, B, delta, its bootstrap interval and the sign test."""
    index_a = {(r["set"], r["system"], r["case_id"]): r for r in a}
    index_b = {(r["set"], r["system"], r["case_id"]): r for r in b}
    out = []
    keys = sorted({(s, sy) for s, sy, _ in index_a} & {(s, sy) for s, sy, _ in index_b})
    for set_name, system in keys:
        shared = [
            cid
            for (s, sy, cid) in index_a
            if s == set_name and sy == system and (s, sy, cid) in index_b
        ]
        names = _metric_names(index_a[(set_name, system, c)] for c in shared)
        for name in names:
            pairs = [
                (
                    index_a[(set_name, system, c)]["metrics"].get(name),
                    index_b[(set_name, system, c)]["metrics"].get(name),
                )
                for c in shared
            ]
            pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
            if not pairs:
                continue
            deltas = [y - x for x, y in pairs]
            low, high = bootstrap_interval(deltas)
            wins = sum(1 for d in deltas if d > 0)
            losses = sum(1 for d in deltas if d < 0)
            out.append(
                {
                    "set": set_name,
                    "system": system,
                    "metric": name,
                    "cases": len(pairs),
                    "a": sum(x for x, _ in pairs) / len(pairs),
                    "b": sum(y for _, y in pairs) / len(pairs),
                    "delta": sum(deltas) / len(deltas),
                    "ci95": [low, high],
                    "wins": wins,
                    "losses": losses,
                    "sign_p": sign_test(wins, losses),
                }
            )
    return out


def format_comparison(result: Sequence[Mapping[str, Any]]) -> str:
    """Per set: every metric's delta beside the noise its case count allows."""
    if not result:
        return "no (set, system) pair is in both runs"
    text = [
        "Noise: 95% paired bootstrap interval of the mean delta over cases "
        f"({BOOTSTRAP_RESAMPLES} resamples, seed 0) and a two-sided paired sign test over the "
        "cases that changed. A delta whose interval spans 0 is within noise for that set's size.",
    ]
    for set_name in sorted({r["set"] for r in result}):
        mine = [r for r in result if r["set"] == set_name]
        lines = [
            [
                r["system"],
                r["metric"],
                str(r["cases"]),
                f"{r['a']:.3f}",
                f"{r['b']:.3f}",
                f"{r['delta']:+.3f}",
                f"[{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]",
                f"{r['wins']}/{r['losses']}",
                f"{r['sign_p']:.3f}",
            ]
            for r in mine
        ]
        text += ["", f"### {SET_TITLES.get(set_name, set_name)}", ""]
        text += _table(
            ["system", "metric", "n", "A", "B", "delta", "95% CI", "up/down", "sign p"], lines
        )
    return "\n".join(text)
