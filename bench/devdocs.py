"""A real documentation tree with few headings: the DevDocs pages of code-rag-bench.

    python bench/devdocs.py [--mirror /work/.mirror] [--one-process] [--json PATH]

The 13,741 plain-text DevDocs pages of code-rag-bench (``preprocessor/devdocs/plain/``, about
138 MB, one ``text`` source) at commit :data:`DEVDOCS_COMMIT`, read from the bare git directory
``code-rag-bench+code-rag-bench/repo`` under ``--mirror``: each blob of the folder is written
out with ``git cat-file --batch``, and blobs the mirror lacks are skipped and counted (three at
this commit). Nothing is fetched; without the mirror or the commit the section is skipped with
a message saying so. Measured: a fresh ``index build`` with the default settings (MB/s of text
over the command's own indexing time), the building process's peak resident memory and the
peak of the whole build (it and its helpers), sampled every 50 ms, against issue 43's targets:
at least 8 MB/s, at most 400 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.measure import rss_mb, tree_bytes  # noqa: E402
from scriptorium.evaluation.suite.materialise import (  # noqa: E402
    Selection,
    list_blobs,
    read_blobs,
)
from scriptorium.evaluation.suite.repos import has_commit  # noqa: E402
from scriptorium.launcher import daemon_command  # noqa: E402

DEFAULT_MIRROR = Path("/work/.mirror")
DEVDOCS_REPO = "code-rag-bench+code-rag-bench/repo"
DEVDOCS_COMMIT = "f9e100ca9ed94b8f1983b356ae81966e30210cf4"
DEVDOCS_FOLDER = "preprocessor/devdocs/plain"
TARGET_MB_PER_S = 8.0
TARGET_PEAK_RSS_MB = 400.0
_SAMPLE_S = 0.05


def materialise(mirror: Path, target: Path) -> tuple[Path, int] | str:
    """The folder written under ``target`` and the number of blobs the mirror lacks; or why
    it cannot be (the section is then skipped)."""
    git_dir = mirror / DEVDOCS_REPO
    if not git_dir.is_dir():
        return f"no mirror of code-rag-bench at {git_dir}"
    if not has_commit(git_dir, DEVDOCS_COMMIT):
        return f"commit {DEVDOCS_COMMIT} is not in {git_dir}"
    selection = Selection("devdocs", prefixes=(DEVDOCS_FOLDER + "/",))
    blobs = list_blobs(git_dir, DEVDOCS_COMMIT, selection)
    missing = 0
    for (_, path), data in zip(blobs, read_blobs(git_dir, [sha for sha, _ in blobs]), strict=True):
        if data is None:
            missing += 1
            continue
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    return target / DEVDOCS_FOLDER, missing


def _tree_rss_mb(root: int) -> tuple[float, float]:
    """Resident MB of ``root`` and of it with every process below it."""
    table: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            table[int(entry.name)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    pids, frontier = [root], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in table.items() if ppid == parent]
        pids += children
        frontier += children
    sizes = [rss_mb(pid) for pid in pids]
    return sizes[0], sum(sizes)


def measured_build(config: Path, state: Path, megabytes: float, workers: int | None) -> dict:
    """A fresh ``index build`` with its peak memory sampled; ``workers`` as run.py's."""
    command = [*daemon_command(), "--format", "json", "index", "build"]
    if workers is not None:
        command += ["--build-workers", str(workers)]
    started = time.perf_counter()
    peak_main = peak_all = 0.0
    with subprocess.Popen(
        [*command, "--config", str(config), "--state-dir", str(state)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as build:
        while build.poll() is None:
            main, everything = _tree_rss_mb(build.pid)
            peak_main, peak_all = max(peak_main, main), max(peak_all, everything)
            time.sleep(_SAMPLE_S)
        report = json.loads(build.stdout.read() if build.stdout else "{}")
    wall = time.perf_counter() - started
    indexing = float(report.get("seconds") or wall)
    segments = sum(
        len(json.loads(meta.read_text())["segments"])
        for meta in (state / "generations").glob("gen-*/index/meta.json")
    )
    return {
        "indexing_s": round(indexing, 2),
        "wall_s": round(wall, 2),
        "documents": int(report.get("documents", 0)),
        "blocks": int(report.get("blocks", 0)),
        "mb_per_s": round(megabytes / indexing, 2),
        "peak_rss_mb": round(peak_main, 1),
        "peak_rss_all_mb": round(peak_all, 1),
        "segments": segments,
    }


def devdocs(work: Path, mirror: Path, one_process: bool = False) -> dict:
    """Every figure of the section, or ``{"skipped": why}``."""
    made = materialise(mirror, work / "devdocs")
    if isinstance(made, str):
        return {"skipped": made}
    tree, missing = made
    megabytes = tree_bytes(tree, (".txt",)) / 1e6
    config = work / "devdocs.toml"
    config.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "devdocs"\nkind = "text"\n'
        f'root = "{tree}"\n',
        encoding="utf-8",
    )
    out: dict = {
        "tree": f"code-rag-bench@{DEVDOCS_COMMIT[:12]}:{DEVDOCS_FOLDER}",
        "text_mb": round(megabytes, 1),
        "missing_blobs": missing,
        "load_average_at_start": list(os.getloadavg()),
        "build": measured_build(config, work / "state", megabytes, None),
    }
    if one_process:
        out["build_one_process"] = measured_build(config, work / "state-1", megabytes, 1)
    return out


def render_devdocs(r: dict) -> list[str]:
    if "skipped" in r:
        return [f"devdocs: skipped ({r['skipped']})"]

    def line(label: str, b: dict) -> str:
        speed = "met" if b["mb_per_s"] >= TARGET_MB_PER_S else "NOT met"
        memory = "met" if b["peak_rss_mb"] <= TARGET_PEAK_RSS_MB else "NOT met"
        return (
            f"  {label:<17} {b['indexing_s']:>8} s   ({b['mb_per_s']} MB/s, target "
            f"≥ {TARGET_MB_PER_S:g}: {speed}; peak RSS {b['peak_rss_mb']} MB, target "
            f"≤ {TARGET_PEAK_RSS_MB:g}: {memory}; with helpers {b['peak_rss_all_mb']} MB; "
            f"{b['segments']} segments)"
        )

    lines = [
        f"devdocs {r['tree']}: {r['build']['documents']} pages, {r['text_mb']} MB of text "
        f"({r['missing_blobs']} blobs absent from the mirror), "
        f"load {r['load_average_at_start'][0]:.1f}",
        line("build", r["build"]),
    ]
    if "build_one_process" in r:
        lines.append(line("in one process", r["build_one_process"]))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--one-process", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="scriptorium-devdocs-") as tmp:
        result = devdocs(Path(tmp), args.mirror, args.one_process)
    print("\n".join(render_devdocs(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
