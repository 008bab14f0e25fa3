"""Measure ranking levers one at a time on the evaluation set.

    .venv/bin/python eval/levers.py [--only NAME ...] [--tag TAG ...] [--records DIR]
                                    [--top-k N] [--output eval/runs/levers.json]

Each variant is the shipped configuration (eval/fastapi.toml with the default [ranking]) with
ONE lever changed. Every variant runs the full evaluation set against a freshly started daemon
(its own index, so tokenizer levers are rebuilt) and the table reports hit@1, hit@5, hit@8, MRR
and section hit@5 overall and per language, next to the baseline of the same run. Each --tag
adds a table of the same variants restricted to that tag's cases; --records keeps every
variant's run record so two variants can be compared case by case (scriptorium eval --compare).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE_CONFIG = HERE / "fastapi.toml"

# name -> (description, [ranking] overrides, extra per-source options for the "en" source).
# "shipped" is the configuration as it ships; every other row changes ONE lever from it.
VARIANTS: dict[str, tuple[str, dict, dict]] = {
    "shipped": (
        "shipped defaults (heading 1.0, path 0.5, stemming, diversify 2, blend 0.1, directive 0.8,"
        " definition 1.2 with 10 extra candidates, near-duplicates 0.8)",
        {},
        {},
    ),
    "initial": (
        "the first defaults: heading 1.5, path 1.0, no stemming",
        {"heading_weight": 1.5, "path_weight": 1.0, "stem": False},
        {},
    ),
    "body-only": ("BM25 on body only", {"heading_weight": 0.0, "path_weight": 0.0}, {}),
    "heading-1.5": ("heading weight 1.5", {"heading_weight": 1.5}, {}),
    "heading-2.0": ("heading weight 2.0", {"heading_weight": 2.0}, {}),
    "path-0": ("path/title field off", {"path_weight": 0.0}, {}),
    "path-1.0": ("path/title weight 1.0", {"path_weight": 1.0}, {}),
    "docs-path-1.0": ("documentation pages' path weight 1.0", {"docs_path_weight": 1.0}, {}),
    "coverage-off": ("term coverage off", {"term_coverage": 0.0}, {}),
    "coverage-1.0": (
        "a question's blocks x (share of its terms matched) ** 1.0",
        {"term_coverage": 1.0},
        {},
    ),
    "no-stemming": ("stemming off", {"stem": False}, {}),
    "keep-stopwords": ("stopwords kept", {"stopwords": False}, {}),
    "no-identifier-split": ("identifiers kept whole", {"split_identifiers": False}, {}),
    "cjk-unigrams": ("CJK as single characters, not bigrams", {"cjk_bigrams": False}, {}),
    "no-diversify": ("no per-document cap", {"max_per_document": 0}, {}),
    "diversify-1": ("at most 1 block per document", {"max_per_document": 1}, {}),
    "diversify-3": ("at most 3 blocks per document", {"max_per_document": 3}, {}),
    "definition-candidates-5": (
        "up to 5 more candidates among code blocks defining a queried name",
        {"definition_candidates": 5},
        {},
    ),
    "definition-candidates-off": (
        "no extra candidates among code blocks defining a queried name",
        {"definition_candidates": 0},
        {},
    ),
    "definition-candidates-20": (
        "up to 20 more candidates among code blocks defining a queried name",
        {"definition_candidates": 20},
        {},
    ),
    "near-dup-off": ("near-duplicates not held back", {"near_duplicate_similarity": 0.0}, {}),
    "near-dup-0.9": (
        "hold back results sharing 90 % of a better one's words",
        {"near_duplicate_similarity": 0.9},
        {},
    ),
    "near-dup-0.7": (
        "hold back results sharing 70 % of a better one's words",
        {"near_duplicate_similarity": 0.7},
        {},
    ),
    "near-dup-0.6": (
        "hold back results sharing 60 % of a better one's words",
        {"near_duplicate_similarity": 0.6},
        {},
    ),
    "candidates-20": (
        "min_candidates 20 (limit max(20, 4 * top_k): 40 at top_k 10)",
        {"min_candidates": 20},
        {},
    ),
    "candidates-30": (
        "min_candidates 30 (limit max(30, 4 * top_k): 40 at top_k 10)",
        {"min_candidates": 30},
        {},
    ),
    "candidates-80": ("min_candidates 80", {"min_candidates": 80}, {}),
    "candidates-20-flat": (
        "20 lexical candidates in all: min_candidates 20 and over_fetch 2",
        {"min_candidates": 20, "over_fetch": 2},
        {},
    ),
    "fusion-raw": ("raw BM25 across corpora", {"fusion": "raw"}, {}),
    "fusion-rrf": ("reciprocal rank fusion across corpora", {"fusion": "rrf"}, {}),
    "directive-off": (
        "no factor for API-reference directive blocks",
        {"directive_factor": 1.0},
        {},
    ),
    "directive-0.9": ("API-reference directive blocks x0.9", {"directive_factor": 0.9}, {}),
    "directive-0.7": ("API-reference directive blocks x0.7", {"directive_factor": 0.7}, {}),
    "directive-0.6": ("API-reference directive blocks x0.6", {"directive_factor": 0.6}, {}),
    "blend-0": ("max fusion, ties between corpora by path", {"fusion_blend": 0.0}, {}),
    "blend-0.05": ("max fusion keeping 0.05 of the raw gap", {"fusion_blend": 0.05}, {}),
    "blend-0.25": ("max fusion keeping 0.25 of the raw gap", {"fusion_blend": 0.25}, {}),
    "blend-0.5": ("max fusion keeping half the raw gap", {"fusion_blend": 0.5}, {}),
    "round-2": (
        "the second round's defaults: no directive factor, no blend",
        {"directive_factor": 1.0, "fusion_blend": 0.0},
        {},
    ),
    "definition-off": (
        "no factor for code blocks defining a queried name",
        {"definition_factor": 1.0},
        {},
    ),
    "definition-1.1": (
        "code blocks defining a queried name x1.1",
        {"definition_factor": 1.1},
        {},
    ),
    "definition-1.2": (
        "code blocks defining a queried name x1.2",
        {"definition_factor": 1.2},
        {},
    ),
    "definition-1.3": (
        "code blocks defining a queried name x1.3",
        {"definition_factor": 1.3},
        {},
    ),
    "definition-1.5": (
        "code blocks defining a queried name x1.5",
        {"definition_factor": 1.5},
        {},
    ),
    "definition-2.0": (
        "code blocks defining a queried name x2.0",
        {"definition_factor": 2.0},
        {},
    ),
    "surface-off": ("surface prior off", {"surface_boost": 1.0}, {}),
    "surface-1.6": ("surface prior 1.6", {"surface_boost": 1.6}, {}),
    "language-0.8": ("script-mismatch prior 0.8", {"language_prior": 0.8}, {}),
    "classes": (
        "release notes as ledger, reference/ as reference (weights 0.75 / 0.9)",
        {},
        {"class_rules": {"release-notes.md": "ledger", "reference/**": "reference"}},
    ),
}
for _threshold in (0.2, 0.25, 0.3, 0.4, 0.5, 0.6):
    VARIANTS[f"abstain-{_threshold}"] = (
        f"low-confidence threshold {_threshold} (shipped 0.34)",
        {"low_confidence_coverage": _threshold},
        {},
    )


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
        )
    return repr(value)


def variant_config(ranking: dict, en_options: dict, target: Path) -> Path:
    text = BASE_CONFIG.read_text("utf-8")
    # Roots in the base config are relative to eval/; make them absolute for the temp file.
    text = text.replace('root = "../../', f'root = "{HERE.parent.parent.as_posix()}/')
    if en_options:
        extra = "".join(f"{k} = {toml_value(v)}\n" for k, v in en_options.items())
        text = text.replace('name = "en"\n', f'name = "en"\n{extra}', 1)
    if ranking:
        text += "\n[ranking]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in ranking.items())
    target.write_text(text, "utf-8")
    return target


def run_variant(
    name: str,
    ranking: dict,
    en_options: dict,
    work: Path,
    records: Path | None = None,
    top_k: int = 10,
) -> dict:
    config = variant_config(ranking, en_options, work / f"{name}.toml")
    output = (records or work) / f"{name}.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-P",  # the working folder must not shadow the installed package
            "-m",
            "scriptorium",
            "eval",
            "--config",
            str(config),
            "--label",
            name,
            "--top-k",
            str(top_k),
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"variant {name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return json.loads(output.read_text("utf-8"))


def summarize(record: dict) -> dict:
    agg = record["aggregate"]
    overall = agg["overall"]
    by_lang = agg.get("by_lang", {})
    row = {
        "hit@1": overall["hit@1"],
        "hit@5": overall["hit@5"],
        "hit@8": overall["hit@8"],
        "mrr": overall["mrr"],
        "section@5": overall.get("section_hit@5"),
        "fetch": overall["fetch_success_rate"],
    }
    row["abstain-recall"] = overall.get("abstain_recall")
    row["false-abstain"] = overall.get("false_abstain_rate")
    row["redundant"] = overall.get("redundant_share")
    for lang in ("en", "ja", "zh"):
        if lang in by_lang:
            row[f"{lang}@5"] = by_lang[lang]["hit@5"]
    for tag in ("identifier", "code-definition", "implementation", "surface"):
        stats = agg.get("by_tag", {}).get(tag)
        if stats and stats.get("search_case_count"):
            row[f"{tag}@5"] = stats["hit@5"]
    return row


TAG_COLUMNS = ["cases", "hit@1", "hit@3", "hit@5", "hit@8", "mrr", "redundant"]


def summarize_tag(record: dict, tag: str) -> dict:
    """One tag's search metrics, so a lever that only matters for some cases is visible."""
    stats = record["aggregate"].get("by_tag", {}).get(tag)
    if not stats or not stats.get("search_case_count"):
        return {}
    row = {
        "cases": stats["search_case_count"],
        "mrr": stats["mrr"],
        "redundant": stats.get("redundant_share"),
    }
    for cutoff in ("1", "3", "5", "8"):
        row[f"hit@{cutoff}"] = stats[f"hit@{cutoff}"]
    return row


def render(
    rows: dict[str, dict], descriptions: dict[str, str], columns: list[str] | None = None
) -> str:
    columns = columns or [
        "hit@1",
        "hit@5",
        "hit@8",
        "mrr",
        "section@5",
        "en@5",
        "ja@5",
        "zh@5",
        "identifier@5",
        "implementation@5",
        "surface@5",
        "redundant",
    ]
    base = rows.get("shipped", {})
    lines = [
        "| variant | what changes | " + " | ".join(columns) + " |",
        "| --- | --- | " + " | ".join("---" for _ in columns) + " |",
    ]
    for name, row in rows.items():
        cells = []
        for col in columns:
            value = row.get(col)
            if value is None:
                cells.append("–")
                continue
            delta = (
                value - base.get(col, value)
                if name != "shipped" and base.get(col) is not None
                else 0
            )
            if isinstance(value, int):
                cells.append(str(value))
                continue
            mark = f" ({delta:+.3f})" if abs(delta) >= 0.0005 else ""
            cells.append(f"{value:.3f}{mark}")
        lines.append(f"| {name} | {descriptions[name]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", help="variants to run (shipped always runs)")
    parser.add_argument("--output", type=Path, default=HERE / "runs" / "levers.json")
    parser.add_argument(
        "--tag", action="append", default=[], help="also print a table for this tag (repeatable)"
    )
    parser.add_argument("--records", type=Path, help="keep each variant's run record here")
    parser.add_argument(
        "--top-k",
        type=int,
        default=10,
        help="results per search (5-25); the candidate limit is max(min_candidates, 4 * top_k)",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only or ()) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown variant(s): {', '.join(unknown)}")
    names = ["shipped"] + [
        n for n in VARIANTS if n != "shipped" and (not args.only or n in args.only)
    ]
    if args.records:
        args.records.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict] = {}
    tag_rows: dict[str, dict[str, dict]] = {tag: {} for tag in args.tag}
    with tempfile.TemporaryDirectory(prefix="scriptorium-levers-") as tmp:
        for name in names:
            _, ranking, en_options = VARIANTS[name]
            record = run_variant(name, ranking, en_options, Path(tmp), args.records, args.top_k)
            rows[name] = summarize(record)
            for tag in args.tag:
                tag_rows[tag][name] = summarize_tag(record, tag)
            print(
                f"{name}: hit@1 {rows[name]['hit@1']:.3f} hit@5 {rows[name]['hit@5']:.3f}",
                flush=True,
            )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    payload = {**rows, "by_tag": tag_rows} if args.tag else rows
    args.output.write_text(json.dumps(payload, indent=2), "utf-8")
    descriptions = {n: VARIANTS[n][0] for n in names}
    print(render(rows, descriptions))
    for tag, by_variant in tag_rows.items():
        print(f"\ntag: {tag}\n")
        print(render(by_variant, descriptions, TAG_COLUMNS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
