"""Compare two run records: per-case flips and aggregate deltas.

Aggregates say whether a lever helped overall; flips say which cases paid for it. Both are
reported because a net gain can hide a regression on a single tag or language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scriptorium.evaluation import scoring

DELTA_METRICS = (
    "hit@1",
    "hit@3",
    "hit@5",
    "hit@8",
    "hit@k",
    "mrr",
    "section_hit@5",
    "fetch_success_rate",
    "stale_pass_rate",
    "mean_preview_chars",
    "min_preview_chars",
)


def _deltas(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        metric: {
            "a": a.get(metric),
            "b": b.get(metric),
            "delta": scoring.metric_delta(a.get(metric), b.get(metric)),
        }
        for metric in DELTA_METRICS
    }


def _group_deltas(
    a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    return {name: _deltas(a.get(name, {}), b.get(name, {})) for name in sorted(set(a) | set(b))}


def _flag(case: Mapping[str, Any], path: tuple[str, ...]) -> bool | None:
    value: Any = case
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return None if value is None else bool(value)


FLIP_CHECKS: dict[str, tuple[str, ...]] = {
    "@1": ("hits", "1"),
    "@5": ("hits", "5"),
    "fetch": ("fetch_success",),
    "stale": ("stale", "passed"),
}


def compare_records(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Flips (newly hit / newly missed) per check and aggregate deltas from run A to run B."""
    cases_a = {c["id"]: c for c in a["cases"]}
    cases_b = {c["id"]: c for c in b["cases"]}
    shared = [case_id for case_id in cases_a if case_id in cases_b]

    flips: dict[str, dict[str, list[str]]] = {}
    for name, path in FLIP_CHECKS.items():
        newly_hit, newly_missed = [], []
        for case_id in shared:
            before, after = _flag(cases_a[case_id], path), _flag(cases_b[case_id], path)
            if before is False and after is True:
                newly_hit.append(case_id)
            elif before is True and after is False:
                newly_missed.append(case_id)
        flips[name] = {"newly_hit": newly_hit, "newly_missed": newly_missed}

    warnings = []
    inputs_a, inputs_b = a.get("inputs", {}), b.get("inputs", {})
    if inputs_a.get("set_sha256") != inputs_b.get("set_sha256"):
        warnings.append("the runs used different evaluation set files")
    if inputs_a.get("top_k") != inputs_b.get("top_k"):
        warnings.append(f"top_k differs ({inputs_a.get('top_k')} vs {inputs_b.get('top_k')})")
    generation_a = a.get("corpus", {}).get("generation")
    generation_b = b.get("corpus", {}).get("generation")
    if generation_a != generation_b:
        warnings.append(f"corpus generation differs ({generation_a} vs {generation_b})")

    agg_a, agg_b = a["aggregate"], b["aggregate"]
    return {
        "a": _identity(a),
        "b": _identity(b),
        "warnings": warnings,
        "shared_case_count": len(shared),
        "only_in_a": sorted(set(cases_a) - set(cases_b)),
        "only_in_b": sorted(set(cases_b) - set(cases_a)),
        "flips": flips,
        "aggregate_deltas": {
            "overall": _deltas(agg_a["overall"], agg_b["overall"]),
            "by_tag": _group_deltas(agg_a.get("by_tag", {}), agg_b.get("by_tag", {})),
            "by_lang": _group_deltas(agg_a.get("by_lang", {}), agg_b.get("by_lang", {})),
        },
    }


def _identity(record: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "label": record.get("label"),
        "timestamp": record.get("timestamp"),
        "daemon_commit": record.get("daemon", {}).get("commit_sha"),
        "server_version": record.get("daemon", {}).get("server_version"),
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if isinstance(value, float) else str(value)


def _fmt_plain(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def format_comparison(result: Mapping[str, Any]) -> str:
    """A readable comparison: warnings, overall deltas, per-group @5 deltas, and flips."""
    a, b = result["a"], result["b"]
    lines = [f"A = {a['label']!r} ({a['timestamp']})   B = {b['label']!r} ({b['timestamp']})"]
    lines += [f"warning: {w}" for w in result["warnings"]]
    lines.append(f"{result['shared_case_count']} shared cases")
    if result["only_in_a"] or result["only_in_b"]:
        lines.append(f"only in A: {result['only_in_a']}; only in B: {result['only_in_b']}")
    lines += ["", f"{'metric':<20}{'A':>9}{'B':>9}{'delta':>9}"]
    for metric, values in result["aggregate_deltas"]["overall"].items():
        lines.append(
            f"{metric:<20}{_fmt_plain(values['a']):>9}{_fmt_plain(values['b']):>9}"
            f"{_fmt(values['delta']):>9}"
        )
    lines += [
        "",
        f"{'group':<26}{'@1 delta':>10}{'@5 delta':>10}{'MRR delta':>11}{'stale delta':>13}",
    ]
    for kind in ("by_tag", "by_lang"):
        for name, values in result["aggregate_deltas"][kind].items():
            lines.append(
                f"{kind[3:] + ':' + name:<26}{_fmt(values['hit@1']['delta']):>10}"
                f"{_fmt(values['hit@5']['delta']):>10}{_fmt(values['mrr']['delta']):>11}"
                f"{_fmt(values['stale_pass_rate']['delta']):>13}"
            )
    lines.append("")
    for name, flip in result["flips"].items():
        lines.append(f"{name}: newly hit {flip['newly_hit'] or '[]'}")
        lines.append(f"{name}: newly missed {flip['newly_missed'] or '[]'}")
    return "\n".join(lines)
