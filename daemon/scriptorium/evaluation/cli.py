"""``scriptorium eval``: measure a daemon against the evaluation set, compare runs, self-test.

Exit codes: 0 for a completed measurement (even when cases fail: read the aggregate, not the
exit code), a completed comparison, or a passing self-test; 1 for a failing self-test; 2 when
the inputs are unusable (a config whose source roots are missing among them: the daemon is
not started, no run record is written) or the daemon cannot be started or reached.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from scriptorium.evaluation import compare, record, runner
from scriptorium.evaluation.evalset import EvalSetError, file_digest, load_eval_set
from scriptorium.evaluation.selftest import run_self_test
from scriptorium.settings.config import ConfigError, load_settings
from scriptorium.usage import UsageParser

DEFAULT_SET = "eval/fastapi.jsonl"
DEFAULT_CONFIG = "eval/fastapi.toml"
MIN_TOP_K, MAX_TOP_K = 5, 25
REPO_ROOT = Path(__file__).resolve().parents[3]
TARGET_WAIT_S = 30.0
# Where the evaluation corpora live: a folder ``shared/corpora`` beside the clone.
SHARED_CORPORA = Path("shared") / "corpora"


def default_path(relative: str) -> Path:
    """``relative`` from the working directory, else from the checkout the harness lives in."""
    here = Path(relative)
    if here.exists():
        return here
    in_repo = REPO_ROOT / relative
    return in_repo if in_repo.exists() else here


def build_parser() -> argparse.ArgumentParser:
    parser = UsageParser(
        prog="scriptorium eval",
        description="Measure retrieval quality against an evaluation set, or compare two runs.",
    )
    parser.add_argument("--set", dest="set_path", help=f"evaluation set (default {DEFAULT_SET})")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--target", help="HOST:PORT of a running daemon to measure")
    target.add_argument(
        "--config", help=f"start a daemon with this config (default {DEFAULT_CONFIG})"
    )
    parser.add_argument("--top-k", type=int, default=10, help="results per search (5-25)")
    parser.add_argument("--label", default="unlabeled", help="free-form tag for the run record")
    parser.add_argument("--output", help="run record path (default eval/runs/<time>-<label>.json)")
    parser.add_argument("--commit-sha", help="commit of the daemon build being measured")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--startup-timeout", type=float, default=runner.STARTUP_TIMEOUT_S, help=argparse.SUPPRESS
    )
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two run records")
    parser.add_argument("--self-test", action="store_true", help="offline harness self-test")
    parser.add_argument(
        "--suite",
        action="store_true",
        help="run the ranking suite over the external sets (see 'scriptorium eval --suite -h')",
    )
    return parser


def main(argv: list[str]) -> int:
    if "--suite" in argv:  # the suite has its own options; everything else goes to its parser
        from scriptorium.evaluation.suite.cli import main as suite_main

        return suite_main([a for a in argv if a != "--suite"])
    args = build_parser().parse_args(argv)
    if args.self_test:
        if args.compare:
            print("scriptorium eval: --self-test takes no other mode", file=sys.stderr)
            return 2
        return run_self_test(sys.stdout)
    if args.compare:
        return _compare(args.compare[0], args.compare[1], as_json=args.json)
    return _measure(args)


def _compare(path_a: str, path_b: str, *, as_json: bool) -> int:
    try:
        a, b = record.load_record(path_a), record.load_record(path_b)
    except record.RecordError as exc:
        print(f"scriptorium eval: {exc}", file=sys.stderr)
        return 2
    result = compare.compare_records(a, b)
    print(
        json.dumps(result, ensure_ascii=False, indent=2)
        if as_json
        else compare.format_comparison(result)
    )
    return 0


def _measure(args: argparse.Namespace) -> int:
    if not MIN_TOP_K <= args.top_k <= MAX_TOP_K:
        print(
            f"scriptorium eval: --top-k must be between {MIN_TOP_K} and {MAX_TOP_K} "
            "(hit@5 always scores five results, and the daemon clamps at 25)",
            file=sys.stderr,
        )
        return 2
    set_path = Path(args.set_path) if args.set_path else default_path(DEFAULT_SET)
    try:
        cases = load_eval_set(set_path)
    except EvalSetError as exc:
        print(f"scriptorium eval: {exc}", file=sys.stderr)
        return 2

    config: Path | None = None
    daemon: runner.DaemonProcess | None = None
    if args.target:
        target = args.target
    else:
        config = Path(args.config) if args.config else default_path(DEFAULT_CONFIG)
        if not config.is_file():
            print(f"scriptorium eval: config not found: {config}", file=sys.stderr)
            return 2
        problem = corpus_problem(config)
        if problem is not None:
            print(f"scriptorium eval: {problem}", file=sys.stderr)
            return 2
        daemon = runner.DaemonProcess(
            config=config.resolve(), startup_timeout_s=args.startup_timeout
        )

    client: runner.RetrievalClient | None = None
    try:
        if daemon is not None:
            print(f"starting daemon with {config} ...", file=sys.stderr)
            target = daemon.start()
        client = runner.RetrievalClient(target)
        client.wait_ready(TARGET_WAIT_S if daemon is None else 10.0)
        attribution = _attribution(client)
        started = datetime.now().astimezone()
        cases_out = runner.run_cases(client, cases, args.top_k, progress=_progress)
    except runner.DaemonError as exc:
        print(f"scriptorium eval: {exc}", file=sys.stderr)
        return 2
    finally:
        if client is not None:
            client.close()
        if daemon is not None:
            daemon.stop()

    run = record.build_record(
        label=args.label,
        timestamp=started,
        cases=cases_out,
        set_path=str(set_path),
        set_digest=file_digest(set_path),
        top_k=args.top_k,
        config=str(config) if config else None,
        target=target,
        started_daemon=daemon is not None,
        server_version=attribution["server_version"],
        daemon_commit=args.commit_sha,
        harness_sha=record.harness_commit(),
        generation=attribution["generation"],
        sources=attribution["sources"],
    )
    output = (
        Path(args.output)
        if args.output
        else record.default_output_path(set_path, args.label, started)
    )
    record.write_record(run, output)
    if args.json:
        print(json.dumps(run, ensure_ascii=False, indent=2))
    else:
        print(record.format_summary(run))
        print(f"\nrun record: {output}")
    return 0


def corpus_problem(config: Path) -> str | None:
    """Why ``config`` cannot be measured before any daemon starts (None when it can).

    A daemon over missing roots serves nothing and reports every source failed; measuring it
    would record a table of zeros as if it were a result. The message names each missing root
    and where the corpus is expected to come from.
    """
    try:
        settings = load_settings(config)
    except ConfigError as exc:
        return str(exc)
    missing = [(s.name, s.root) for s in settings.sources if s.root and not s.root.is_dir()]
    if not missing:
        return None
    lines = [
        f"{config}: {len(missing)} of {len(settings.sources)} source roots do not exist, "
        "so nothing would be measured (no daemon started, no run record written):"
    ]
    lines += [f"  {name}: {root}" for name, root in missing]
    lines.append(_corpus_hint(config, [root for _, root in missing]))
    return "\n".join(lines)


def _corpus_hint(config: Path, roots: list[Path]) -> str:
    """Where the missing corpus comes from: the shared corpus folder beside the clone when the
    roots point into one, else just the folder they are relative to."""
    base = config.resolve().parent
    for root in roots:
        parts = root.parts
        for i in range(len(parts) - 2):
            if Path(*parts[i : i + 2]) == SHARED_CORPORA:
                corpus = Path(*parts[: i + 3])
                beside = Path("..") / SHARED_CORPORA / parts[i + 2]
                return (
                    f"The corpus is the shared corpus folder {beside} beside the clone "
                    f"({corpus}; relative roots are resolved from {base}): put a copy of it "
                    "there (its SOURCE.md names the upstream snapshot), or pass --config with "
                    "roots that exist."
                )
    return (
        f"Relative roots are resolved from {base}; put the corpus there or pass --config "
        "with roots that exist."
    )


def _attribution(client: runner.RetrievalClient) -> dict[str, Any]:
    """Server version, corpus generation and sources from ListSources ("unknown" on failure)."""
    try:
        response = client.list_sources()
    except Exception as exc:  # attribution must not stop a measurement
        print(f"scriptorium eval: ListSources failed ({exc}); attribution unknown", file=sys.stderr)
        return {"server_version": "unknown", "generation": None, "sources": []}
    return {
        "server_version": response.server_version or "unknown",
        "generation": response.generation,
        "sources": runner.describe_sources(response),
    }


def _progress(index: int, total: int, case: dict[str, Any]) -> None:
    if sys.stderr.isatty():
        end = "\n" if index == total else ""
        print(f"\r[{index}/{total}] {case['id']:<40}", end=end, file=sys.stderr, flush=True)
