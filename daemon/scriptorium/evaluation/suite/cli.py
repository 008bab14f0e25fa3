"""``scriptorium eval --suite``: the external sets and the project set, daemon beside baselines.

Exit codes: 0 for a completed run or comparison, 2 when the inputs are unusable (a missing
repository or commit, an unreadable set) or a daemon cannot be started.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scriptorium.evaluation import record
from scriptorium.evaluation.suite import overrides, report, sets, usage
from scriptorium.evaluation.suite.materialise import DEFAULT_CACHE, Materialised, materialise
from scriptorium.evaluation.suite.repos import SuiteError, find_git_dir, has_commit
from scriptorium.evaluation.suite.run import CorpusTiming, run_corpus
from scriptorium.evaluation.suite.sets import CorpusSpec, SuiteCase
from scriptorium.plugins import PluginError, load_registry
from scriptorium.usage import UsageParser

REPO_ROOT = Path(__file__).resolve().parents[4]


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="scriptorium eval --suite",
        description="Run the ranking suite: every set, the daemon beside two BM25 baselines.",
    )
    parser.add_argument(
        "--sets",
        default=",".join(sets.SET_NAMES),
        help=f"comma-separated sets to run (default {','.join(sets.SET_NAMES)})",
    )
    parser.add_argument(
        "--repos", type=Path, help="folder of git dirs (owner+name/repo, owner+name or name.git)"
    )
    parser.add_argument(
        "--benchmarks", type=Path, help="folder holding docs-search-eval/ and swebench-verified/"
    )
    parser.add_argument("--docs-search-set", type=Path, help="docs-search dataset.yaml")
    parser.add_argument("--swebench-set", type=Path, help="swebench instances.jsonl")
    parser.add_argument("--fastapi-set", type=Path, default=None, help="eval/fastapi.jsonl")
    parser.add_argument("--usage-set", type=Path, default=None, help="eval/usage.jsonl")
    parser.add_argument("--usage-names-set", type=Path, default=None, help="eval/usage-names.jsonl")
    parser.add_argument("--libref-set", type=Path, default=None, help="eval/libref.jsonl")
    parser.add_argument("--fastapi-config", type=Path, default=None, help="eval/fastapi.toml")
    parser.add_argument(
        "--ds1000-source",
        metavar="OWNER/NAME@COMMIT",
        help="where ds1000's problems and pages (libref's too) are read (default the pinned "
        "code-rag-bench)",
    )
    parser.add_argument(
        "--fastapi-repo-source",
        metavar="OWNER/NAME@COMMIT",
        help="the repository fastapi-repo asks over (default FastAPI at the docs-search commit)",
    )
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help=f"corpus cache (default {DEFAULT_CACHE})"
    )
    parser.add_argument("--out", type=Path, help="records folder (default eval/suite-runs/<time>)")
    parser.add_argument("--limit", type=int, help="at most N cases per set")
    parser.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="[SET=]K",
        help="every K-th case (the 1st, the K+1-th, ...) of every set, or of SET only; repeatable",
    )
    parser.add_argument(
        "--ranking",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="run the daemons with this [ranking] lever changed (a TOML value); repeatable",
    )
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare runs")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    try:
        if args.compare:
            a, b = (report.load_records(p) for p in args.compare)
            print(report.format_comparison(report.compare_rows(a, b)))
            return 0
        return _run(args)
    except (SuiteError, PluginError) as exc:
        print(f"scriptorium eval --suite: {exc}", file=sys.stderr)
        return 2


def _log(message: str) -> None:
    print(f"[suite {datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def sample_steps(raw: Sequence[str]) -> dict[str, int]:
    """``["3", "swebench=2"]`` → a step per set (a bare K applies to every set)."""
    steps: dict[str, int] = {}
    for item in raw:
        name, _, value = item.rpartition("=")
        if name and name not in sets.SET_NAMES:
            raise SuiteError(f"--sample {item}: unknown set {name!r}")
        try:
            step = int(value)
        except ValueError:
            raise SuiteError(f"--sample {item}: K must be a whole number") from None
        if step < 1:
            raise SuiteError(f"--sample {item}: K must be at least 1")
        for target in [name] if name else sets.SET_NAMES:
            steps[target] = step
    return steps


def _chosen_sets(raw: str) -> list[str]:
    chosen = [s.strip() for s in raw.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in sets.SET_NAMES]
    if unknown or not chosen:
        raise SuiteError(f"unknown set(s) {unknown}; known: {', '.join(sets.SET_NAMES)}")
    return chosen


def _set_file(explicit: Path | None, benchmarks: Path | None, relative: str, flag: str) -> Path:
    if explicit is not None:
        path = explicit
    elif benchmarks is not None:
        path = benchmarks / relative
    else:
        raise SuiteError(f"give --benchmarks DIR or {flag} FILE")
    if not path.is_file():
        raise SuiteError(f"set file not found: {path}")
    return path


def _in_repo(path: Path | None, relative: str) -> Path:
    if path is not None:
        return path
    here = Path(relative)
    return here if here.exists() else REPO_ROOT / relative


def _tree_files(corpus: Materialised) -> frozenset[str]:
    return frozenset(
        p.relative_to(corpus.tree).as_posix() for p in corpus.tree.rglob("*") if p.is_file()
    )


def _need_repos(repos: Path | None) -> Path:
    if repos is None:
        raise SuiteError("give --repos DIR (a folder of git dirs) for the external sets")
    return repos


def _pinned_sets(
    args: argparse.Namespace, steps: dict[str, int], chosen: Sequence[str]
) -> list[SuiteCase]:
    """The cases of ds1000, libref and fastapi-repo, whose answers are mapped once their
    corpus is materialised (so a missing repository is named before anything else is built)."""
    from scriptorium.evaluation.suite import ds1000, fastapi_repo, libref

    found: list[SuiteCase] = []
    source = (ds1000.REPO, ds1000.COMMIT)
    if args.ds1000_source:
        source = sets.parse_repo_at(args.ds1000_source, "--ds1000-source")
    if "ds1000" in chosen:
        loaded = ds1000.load(_need_repos(args.repos), args.cache.expanduser(), source, _log)
        found += sets.sample(loaded.cases, steps.get("ds1000"), args.limit)
    if "libref" in chosen:
        intents = libref.load(
            _in_repo(args.libref_set, "eval/libref.jsonl"),
            _need_repos(args.repos),
            args.cache.expanduser(),
            source,
            _log,
        )
        found += sets.sample(intents, steps.get("libref"), args.limit)
    if "fastapi-repo" in chosen:
        other = args.fastapi_repo_source
        repo_cases = fastapi_repo.load(
            _in_repo(args.fastapi_set, "eval/fastapi.jsonl"),
            _in_repo(args.fastapi_config, "eval/fastapi.toml"),
            repos=_need_repos(args.repos),
            cache=args.cache.expanduser(),
            registry=load_registry(),
            log=_log,
            source=sets.parse_repo_at(other, "--fastapi-repo-source") if other else None,
        )
        found += sets.sample(repo_cases.cases, steps.get("fastapi-repo"), args.limit)
    return found


def _preflight(specs: Sequence[CorpusSpec], repos: Path | None, cache: Path) -> None:
    """Every repository and commit the chosen sets need, checked before anything is built."""
    _need_repos(repos)
    checked: dict[str, Path] = {}
    for spec in specs:
        if spec.repo not in checked:
            checked[spec.repo] = find_git_dir(repos, spec.repo)
        if not has_commit(checked[spec.repo], spec.commit):
            raise SuiteError(f"repository {spec.repo} has no commit {spec.commit}")


def _check_usage(cases: Sequence[SuiteCase], repos: Path | None, cache: Path) -> None:
    """The usage sets' answers are files of their repositories (materialised here; the runs
    find them built)."""
    if not cases:
        return
    specs = dict.fromkeys(case.corpus for case in cases)
    where = _need_repos(repos)
    trees = {s: materialise(where, s.repo, s.commit, s.selection, cache, _log) for s in specs}
    usage.check_answers(list(cases), lambda spec: _tree_files(trees[spec]))


def _by_corpus(cases: Sequence[SuiteCase]) -> dict[CorpusSpec, list[SuiteCase]]:
    grouped: dict[CorpusSpec, list[SuiteCase]] = {}
    for case in cases:
        grouped.setdefault(case.corpus, []).append(case)
    return grouped


def _run(args: argparse.Namespace) -> int:
    chosen = _chosen_sets(args.sets)
    steps = sample_steps(args.sample)
    registry = load_registry()
    cache: Path = args.cache.expanduser()
    started = datetime.now(UTC)
    levers = overrides.parse_overrides(args.ranking)
    out = args.out or REPO_ROOT / "eval" / "suite-runs" / f"{started:%Y%m%d-%H%M%S}"
    rows: list[dict[str, Any]] = []
    timings: list[CorpusTiming] = []

    external: list[SuiteCase] = []
    if "swebench" in chosen:
        path = _set_file(args.swebench_set, args.benchmarks, sets.SWEBENCH_FILE, "--swebench-set")
        swe = sets.sample(
            sets.swebench_cases(sets.read_swebench(path)), steps.get("swebench"), args.limit
        )
        external += swe
    for name, given in ((usage.SET_NAME, args.usage_set), (usage.NAMES_SET, args.usage_names_set)):
        if name in chosen:
            found = usage.read(_in_repo(given, f"eval/{name}.jsonl"), name)
            external += sets.sample(found, steps.get(name), args.limit)
    docs_entries: list[dict[str, Any]] = []
    libraries: dict[str, sets.Library] = {}
    docs_sets = [name for name in chosen if name in sets.DOCS_SEARCH_SETS]
    if docs_sets:
        path = _set_file(
            args.docs_search_set, args.benchmarks, sets.DOCS_SEARCH_FILE, "--docs-search-set"
        )
        docs_entries, libraries = sets.read_docs_search(path)
    docs_specs = list(
        dict.fromkeys(
            sets.DOCS_SEARCH_CORPORA[name](libraries[e["library"]])
            for name in docs_sets
            for e in docs_entries
        )
    )
    if external or docs_specs:
        _preflight([c.corpus for c in external] + docs_specs, args.repos, cache)
    _check_usage([c for c in external if c.set_name in usage.SET_NAMES], args.repos, cache)

    if docs_entries:
        trees = {
            spec: materialise(args.repos, spec.repo, spec.commit, spec.selection, cache, _log)
            for spec in docs_specs
        }
        docs_cases = []
        for name in docs_sets:
            found = sets.docs_search_cases(
                docs_entries, lambda spec: _tree_files(trees[spec]), libraries, set_name=name
            )
            docs_cases += sets.sample(found, steps.get(name), args.limit)
        external = docs_cases + external
    external += _pinned_sets(args, steps, chosen)

    if "fastapi" in chosen:
        from scriptorium.evaluation.suite.fastapi_set import run_fastapi_set

        set_rows, timing = run_fastapi_set(
            _in_repo(args.fastapi_set, "eval/fastapi.jsonl"),
            overrides.with_ranking(
                _in_repo(args.fastapi_config, "eval/fastapi.toml"), levers, out / "configs"
            ),
            cache=cache,
            registry=registry,
            log=_log,
            every=steps.get("fastapi"),
            limit=args.limit,
            state_key=_in_repo(args.fastapi_config, "eval/fastapi.toml"),
        )
        rows += set_rows
        timings.append(timing)
        _log(f"fastapi: {timing.cases} cases, {timing.as_dict()}")

    grouped = _by_corpus(external)
    for number, (spec, cases) in enumerate(grouped.items(), start=1):
        _log(f"[{number}/{len(grouped)}] {spec.key}: {len(cases)} case(s)")
        corpus_rows, timing = run_corpus(
            spec,
            cases,
            repos=args.repos,
            cache=cache,
            registry=registry,
            log=_log,
            ranking=overrides.ranking_table(levers),
        )
        rows += corpus_rows
        timings.append(timing)
        _log(
            f"  {timing.documents} documents, {timing.blocks} blocks; materialise "
            f"{timing.materialise_s:.1f}s, baselines {timing.baselines_s:.1f}s, daemon ready "
            f"{timing.daemon_ready_s:.1f}s, queries {timing.queries_s:.1f}s"
        )

    grouped_rows = {name: [r for r in rows if r["set"] == name] for name in chosen}
    tables = report.format_report(grouped_rows)
    harness = record.harness_commit(REPO_ROOT)
    header = (
        f"Suite run {started:%Y-%m-%d %H:%M} UTC, commit {harness[:12]}; sets {', '.join(chosen)}"
        + "".join(f"; {name}: 1 case in {k}" for name, k in steps.items() if k > 1)
        + (f"; first {args.limit} cases per set" if args.limit is not None else "")
        + "".join(f"; ranking {name} = {value!r}" for name, value in levers.items())
    )
    timing_table = format_timings(timings)
    output = f"{header}\n\n{tables}\n\n{timing_table}"
    print(output)
    summary = {
        "started": started.isoformat(timespec="seconds"),
        "harness_commit": harness,
        "sets": chosen,
        "sample": steps,
        "limit": args.limit,
        "ranking": levers,
        "aggregates": {name: report.set_aggregates(r) for name, r in grouped_rows.items() if r},
        "macro_over_sets": report.macro_over_sets(grouped_rows),
        "timings": [t.as_dict() for t in timings],
    }
    report.write_records(out, rows, summary, output)
    print(f"\nrecords: {out}", file=sys.stderr)
    return 0


def format_timings(timings: Sequence[CorpusTiming]) -> str:
    """Seconds per repository: corpora, and the mean and total time to a serving daemon."""
    per_repo: dict[str, list[CorpusTiming]] = {}
    for t in timings:
        per_repo.setdefault(t.corpus.split("@", 1)[0], []).append(t)
    lines = [
        "### time per corpus (seconds)",
        "",
        "| repository | corpora | documents (mean) | materialise | baselines | daemon ready "
        "(mean) | daemon ready (total) | queries |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for repo, items in per_repo.items():
        n = len(items)
        lines.append(
            f"| {repo} | {n} | {sum(t.documents for t in items) / n:.0f} "
            f"| {sum(t.materialise_s for t in items):.1f} "
            f"| {sum(t.baselines_s for t in items):.1f} "
            f"| {sum(t.daemon_ready_s for t in items) / n:.1f} "
            f"| {sum(t.daemon_ready_s for t in items):.1f} "
            f"| {sum(t.queries_s for t in items):.1f} |"
        )
    return "\n".join(lines)
