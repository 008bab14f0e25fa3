"""A large code tree: sympy at a SWE-bench base commit, searched with short queries and with
whole issue texts, each against the health check's p50 measured in the same run.

    python bench/largecode.py [--mirror /work/.mirror] [--benchmarks /work/shared/benchmarks]
                              [--quick] [--semantic] [--json PATH]

The tree is sympy at :data:`SYMPY_COMMIT` (the Python of the repository, a code source only),
written out of a bare git directory under ``--mirror`` (``sympy+sympy/repo``) with ``git
archive``; nothing is fetched. The issue texts are the SWE-bench Verified problem statements of
sympy (``swebench-verified/instances.jsonl`` under ``--benchmarks``): what an agent pastes.
Without the mirror, the commit or the instances the section is skipped with a sentence.

Targets (issue 43), ratios of this run: short queries p50 ≤ 3× the health check's p50; issue
texts p50 ≤ 10× and p99 ≤ 30×; 16 concurrent callers reach at least half the health check's
throughput with 16 callers. Every issue text is also asked once before any is repeated
(``issues_first_seen``): with the semantic retriever on, that is the one that pays for its
encoding (a repeated text's vector is remembered).

``--semantic`` measures the same searches again with the semantic retriever on, once a daemon
on a copy of the generation has made the tree's vectors (about six minutes on two cores), each
p50 beside the health check's and the lexical daemon's: the same targets must hold.

The same searches are also measured over the tree an agent's default configuration serves:
sympy's code beside its documentation (``doc/``, reStructuredText and Markdown), each corpus
in a pool of its own (``docs_and_code``; ``--code-only`` skips it). They are reported beside
the code tree's, not held to its targets.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measure import client_channel, latency, rss_mb, throughput, tree_bytes  # noqa: E402
from bench.realtree import materialise_commit  # noqa: E402
from bench.semantic import ON, wait_for_vectors  # noqa: E402
from scriptorium.semantic.model import ModelMissing, find_model  # noqa: E402
from scriptorium.v1 import retrieval_pb2 as pb  # noqa: E402
from scriptorium.v1 import retrieval_pb2_grpc  # noqa: E402
from tests.support.daemon import Daemon  # noqa: E402

DEFAULT_MIRROR = Path("/work/.mirror")
DEFAULT_BENCHMARKS = Path("/work/shared/benchmarks")
SYMPY_REPO = "sympy+sympy/repo"
# The base commit of the newest sympy instance of SWE-bench Verified in the stored set.
SYMPY_COMMIT = "a36caf5c74fe654cedc488e8a8a05fad388f8406"
SHORT_QUERIES = [
    "Matrix determinant",
    "simplify trigonometric expression",
    "solve linear system",
    "Rational",
    "integrate",
    "latex printer",
    "series expansion",
    "Symbol assumptions positive",
    "lambdify numpy",
    "factorint",
]
TARGETS = {
    "short p50 / trivial p50": 3.0,
    "issue p50 / trivial p50": 10.0,
    "issue p99 / trivial p50": 30.0,
}
THROUGHPUT_TARGET = 0.5


def materialise(mirror: Path, target: Path) -> Path | str:
    """sympy's tree written under ``target``; or why it cannot be (the section is skipped)."""
    return materialise_commit(mirror / SYMPY_REPO, SYMPY_COMMIT, target, "sympy")


def issue_texts(benchmarks: Path) -> list[str]:
    """sympy's SWE-bench Verified problem statements, in the file's order."""
    path = benchmarks / "swebench-verified" / "instances.jsonl"
    if not path.is_file():
        return []
    texts = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            instance = json.loads(line)
            if instance.get("repo") == "sympy/sympy" and instance.get("problem_statement"):
                texts.append(instance["problem_statement"])
    return texts


def _code_config(tree: Path) -> str:
    return (
        f'[server]\nwatch = false\n\n[[sources]]\nname = "sympy"\nkind = "code"\n'
        f'root = "{tree}"\ninclude = ["sympy/**/*.py"]\n'
    )


def write_config(path: Path, tree: Path) -> Path:
    path.write_text(_code_config(tree), encoding="utf-8")
    return path


def write_docs_and_code_config(path: Path, tree: Path) -> Path:
    """The code source of :func:`write_config` beside the tree's documentation."""
    path.write_text(
        _code_config(tree) + f'\n[[sources]]\nname = "sympy-docs"\nkind = "markdown"\n'
        f'root = "{tree}"\ninclude = ["doc/**/*.rst", "doc/**/*.md", "*.md"]\n',
        encoding="utf-8",
    )
    return path


def _ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("inf")


# The figures one run of :func:`searches` is compared on with another: (name, kind, stat).
COMPARED = (
    ("short p50", "short", "p50_ms"),
    ("issue p50", "issues", "p50_ms"),
    ("issue p99", "issues", "p99_ms"),
)


def _over(out: dict, base: dict, label: str, rows: tuple) -> dict[str, float]:
    """Each of ``rows`` of ``out`` over the same figure of ``base``, named with ``label``."""
    return {
        f"{name} {label}": _ratio(out[kind][stat], base[kind][stat]) for name, kind, stat in rows
    }


def searches(stub, health, texts: list[str], n: int) -> dict:
    """Latencies of short queries and issue texts beside the health check's, with ratios."""
    floor = latency(lambda i: health.Check(health_pb2.HealthCheckRequest()), n)
    short = latency(
        lambda i: stub.Search(pb.SearchRequest(query=SHORT_QUERIES[i % len(SHORT_QUERIES)])), n
    )
    # Each text once before any is repeated: what an agent's new paste costs (with the
    # retriever on, the query's encoding; a repeated text's vector is remembered).
    first_seen = latency(
        lambda i: stub.Search(pb.SearchRequest(query=texts[i])), len(texts), warmup=0
    )
    rounds = max(1, n // (2 * len(texts)))
    issues = latency(
        lambda i: stub.Search(pb.SearchRequest(query=texts[i % len(texts)])),
        rounds * len(texts),
        warmup=len(texts),
    )
    trivial = floor["p50_ms"]
    return {
        "trivial_rpc": floor,
        "short": short,
        "issues": issues,
        "issues_first_seen": first_seen,
        "ratios": {
            "short p50 / trivial p50": _ratio(short["p50_ms"], trivial),
            "issue p50 / trivial p50": _ratio(issues["p50_ms"], trivial),
            "issue p99 / trivial p50": _ratio(issues["p99_ms"], trivial),
        },
        "first_seen_ratios": {
            "first-seen issue p50 / trivial p50": _ratio(first_seen["p50_ms"], trivial),
        },
    }


def concurrent(address: str, seconds: float, callers: int = 16) -> dict:
    """Short-query and health-check throughput with ``callers`` threads, each on a connection
    of its own; calls that ended with a status are counted by code (``failed``)."""

    def search_caller():
        stub = retrieval_pb2_grpc.RetrievalServiceStub(client_channel(address))
        return lambda i: stub.Search(pb.SearchRequest(query=SHORT_QUERIES[i % 10]))

    def health_caller():
        health = health_pb2_grpc.HealthStub(client_channel(address))
        return lambda i: health.Check(health_pb2.HealthCheckRequest())

    failures: Counter[str] = Counter()
    searched = throughput(search_caller, callers, seconds, failures)
    trivial = throughput(health_caller, callers, seconds, failures)
    return {
        "callers": callers,
        "search_per_s": searched,
        "trivial_per_s": trivial,
        "ratio": _ratio(searched, trivial),
        "failed": dict(failures),
    }


def large_code(
    work: Path,
    mirror: Path,
    benchmarks: Path,
    build,
    quick: bool = False,
    env=None,
    semantic: bool = False,
    docs: bool = True,
) -> dict:
    """Every figure of the section, or ``{"skipped": why}``; ``build`` is run.py's.
    ``semantic``: the searches again with the semantic retriever on (:func:`with_vectors`);
    ``docs``: and over the code beside the documentation (:func:`with_docs`)."""
    texts = issue_texts(benchmarks)
    if not texts:
        return {"skipped": f"no sympy instances under {benchmarks / 'swebench-verified'}"}
    tree = materialise(mirror, work / "sympy")
    if isinstance(tree, str):
        return {"skipped": tree}
    megabytes = tree_bytes(tree / "sympy", (".py",)) / 1e6
    config = write_config(work / "sympy.toml", tree)
    state = work / "sympy-state"
    out: dict = {
        "tree": f"sympy/sympy@{SYMPY_COMMIT[:12]}",
        "python_mb": round(megabytes, 2),
        "issue_texts": len(texts),
    }
    out["build"] = build(config, state, megabytes)
    daemon = Daemon(["--config", str(config)], state, env=env)
    daemon.start(timeout=900)
    try:
        daemon.wait_caught_up(900)
        out["rss_mb_after_start"] = rss_mb(daemon.proc.pid)
        health = health_pb2_grpc.HealthStub(daemon.channel)
        out.update(searches(daemon.stub, health, texts, 200 if quick else 600))
        out["rss_mb_after_issue_texts"] = rss_mb(daemon.proc.pid)
        out["throughput"] = concurrent(daemon.address, 2.0 if quick else 4.0)
    finally:
        daemon.terminate()
    if semantic:
        out["semantic"] = with_vectors(work, config, state, texts, out, 200 if quick else 600)
    if docs:
        out["docs_and_code"] = with_docs(work, tree, build, texts, out, 200 if quick else 600, env)
    out["targets"] = [
        *_targets(out["ratios"]),
        {
            "target": "16 callers: search / trivial throughput",
            "goal": f"≥ {THROUGHPUT_TARGET:g}",
            "value": out["throughput"]["ratio"],
            "met": out["throughput"]["ratio"] >= THROUGHPUT_TARGET,
        },
    ]
    return out


def _targets(ratios: dict) -> list[dict]:
    return [
        {"target": name, "goal": f"≤ {goal:g}", "value": ratios[name]}
        | {"met": ratios[name] <= goal}
        for name, goal in TARGETS.items()
    ]


def with_docs(
    work: Path, tree: Path, build, texts: list[str], code_only: dict, n: int, env=None
) -> dict:
    """The searches of :func:`searches` over the code beside its documentation (an agent's
    default tree), after a build of both; each p50 also over the code tree's."""
    config = write_docs_and_code_config(work / "sympy-docs.toml", tree)
    state = work / "sympy-docs-state"
    megabytes = tree_bytes(tree / "sympy", (".py",)) + tree_bytes(tree / "doc", (".rst", ".md"))
    out: dict = {"build": build(config, state, megabytes / 1e6)}
    daemon = Daemon(["--config", str(config)], state, env=env)
    daemon.start(timeout=900)
    try:
        daemon.wait_caught_up(900)
        out.update(searches(daemon.stub, health_pb2_grpc.HealthStub(daemon.channel), texts, n))
    finally:
        daemon.terminate()
        shutil.rmtree(state, ignore_errors=True)
    out["over_code_only"] = _over(out, code_only, "docs and code / code", COMPARED)
    return out


def with_vectors(work: Path, config: Path, state: Path, texts: list[str], lexical: dict, n: int):
    """The searches of :func:`searches` with the semantic retriever on, over a copy of the
    generation once its vectors are made; each p50 also over the lexical daemon's."""
    try:
        find_model()
    except ModelMissing as exc:
        return {"skipped": str(exc)}
    copy = work / "sympy-state-semantic"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(state, copy)
    shutil.rmtree(copy / "vectors", ignore_errors=True)
    daemon = Daemon(["--config", str(config)], copy, env=ON)
    daemon.start(timeout=900)
    try:
        daemon.wait_caught_up(900)
        settled, blocks, seconds = wait_for_vectors(daemon)
        out: dict = {"vectors": {"complete": settled, "blocks": blocks, "seconds": round(seconds)}}
        out.update(searches(daemon.stub, health_pb2_grpc.HealthStub(daemon.channel), texts, n))
        out["rss_mb_after_issue_texts"] = rss_mb(daemon.proc.pid)
    finally:
        daemon.terminate()
        shutil.rmtree(copy, ignore_errors=True)
    first_seen = (("first-seen issue p50", "issues_first_seen", "p50_ms"),)
    out["over_lexical"] = _over(out, lexical, "semantic/lexical", COMPARED + first_seen)
    out["targets"] = _targets(out["ratios"])
    return out


def render_large_code(r: dict) -> list[str]:
    if "skipped" in r:
        return [f"large code tree: skipped ({r['skipped']})"]
    b, f, s, i = r["build"], r["trivial_rpc"], r["short"], r["issues"]
    lines = [
        f"large code tree {r['tree']}: {r['python_mb']} MB of Python, "
        f"{r['issue_texts']} issue texts",
        f"  build             {b['indexing_s']:>8} s   "
        f"({b['mb_per_s']} MB/s, {b['blocks']} blocks)",
        f"  RSS after start   {r['rss_mb_after_start']:>8} MB "
        f"(after the issue texts {r['rss_mb_after_issue_texts']} MB)",
        f"  trivial p50/p99   {f['p50_ms']:>8} / {f['p99_ms']} ms",
        f"  short p50/p99     {s['p50_ms']:>8} / {s['p99_ms']} ms",
        f"  issue p50/p99     {i['p50_ms']:>8} / {i['p99_ms']} ms (each seen before)",
        f"  first-seen issue  {r['issues_first_seen']['p50_ms']:>8} / "
        f"{r['issues_first_seen']['p99_ms']} ms",
    ]
    for t in r["targets"]:
        mark = "met" if t["met"] else "NOT met"
        lines.append(f"  {t['target']:<40} {t['value']:>8}   (target {t['goal']}: {mark})")
    lines += _render_docs_and_code(r.get("docs_and_code"))
    semantic = r.get("semantic")
    if semantic is not None:
        lines.append("  with the semantic retriever on:")
        if "skipped" in semantic:
            return [*lines, f"    skipped ({semantic['skipped']})"]
        v, s, i = semantic["vectors"], semantic["short"], semantic["issues"]
        lines += [
            f"    vectors           {v['blocks']} blocks in {v['seconds']} s"
            + ("" if v["complete"] else " (not complete)"),
            f"    short p50/p99     {s['p50_ms']:>8} / {s['p99_ms']} ms",
            f"    issue p50/p99     {i['p50_ms']:>8} / {i['p99_ms']} ms (each seen before)",
            f"    first-seen issue  {semantic['issues_first_seen']['p50_ms']:>8} / "
            f"{semantic['issues_first_seen']['p99_ms']} ms",
        ]
        lines += [f"    {name:<38} {value:>8}" for name, value in semantic["over_lexical"].items()]
        for t in semantic["targets"]:
            mark = "met" if t["met"] else "NOT met"
            lines.append(f"    {t['target']:<38} {t['value']:>8}   (target {t['goal']}: {mark})")
    return lines


def _render_docs_and_code(d: dict | None) -> list[str]:
    if d is None:
        return []
    b, f, s, i = d["build"], d["trivial_rpc"], d["short"], d["issues"]
    lines = [
        "  over the code beside its documentation (an agent's default tree; not the targets'):",
        f"    build             {b['indexing_s']:>8} s   ({b['blocks']} blocks)",
        f"    trivial p50       {f['p50_ms']:>8} ms",
        f"    short p50/p99     {s['p50_ms']:>8} / {s['p99_ms']} ms",
        f"    issue p50/p99     {i['p50_ms']:>8} / {i['p99_ms']} ms (each seen before)",
    ]
    lines += [f"    {name:<38} {value:>8}" for name, value in d["ratios"].items()]
    lines += [f"    {name:<38} {value:>8}" for name, value in d["over_code_only"].items()]
    return lines


def main(argv: list[str] | None = None) -> int:
    from bench.run import build

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--benchmarks", type=Path, default=DEFAULT_BENCHMARKS)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--semantic", action="store_true", help="the searches again with the retriever on"
    )
    parser.add_argument(
        "--code-only",
        action="store_true",
        help="skip the searches over the code beside its documentation",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="scriptorium-largecode-") as tmp:
        result = large_code(
            Path(tmp),
            args.mirror,
            args.benchmarks,
            build,
            args.quick,
            semantic=args.semantic,
            docs=not args.code_only,
        )
    print("\n".join(render_large_code(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
