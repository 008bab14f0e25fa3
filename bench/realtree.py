"""A real large tree beside the synthetic scales: tldr-pages at a pinned commit.

    python bench/realtree.py [--mirror /work/.mirror] [--one-process] [--json PATH]

The tree is the tldr-pages repository (38,430 Markdown pages, 18.6 MB, in dozens of languages,
almost all small files) at commit :data:`TLDR_COMMIT`, read from a bare git directory under
``--mirror`` (``tldr-pages+tldr/repo``, as ``scripts``' mirror layout has it) and written out
with ``git archive``; nothing is fetched. Without that directory, or without the commit in it,
the section is skipped with a message saying so. Measured: a fresh ``index build`` (MB/s of
Markdown over the command's own indexing time, with the default build helpers, and with
``--one-process`` again in one process), the cold start to SERVING from that generation, the
daemon's RSS right after it, and Search p50/p99 over a few fixed queries in several languages.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.lifecycle import cold_start  # noqa: E402
from bench.measure import latency, rss_mb, tree_bytes  # noqa: E402
from scriptorium.v1 import retrieval_pb2 as pb  # noqa: E402
from tests.support.daemon import Daemon  # noqa: E402

DEFAULT_MIRROR = Path("/work/.mirror")
TLDR_REPO = "tldr-pages+tldr/repo"
TLDR_COMMIT = "08e345f42639f67d99282813247ac670dc6e87cb"
# English commands and options, then German, Japanese, Chinese and Russian pages.
TLDR_QUERIES = [
    "extract a tar archive",
    "git rebase interactive",
    "list open ports",
    "docker compose up detached",
    "ffmpeg convert video to gif",
    "Datei komprimieren",
    "ファイルをコピー",
    "显示磁盘使用情况",
    "создать каталог",
    "ssh-keygen",
]


def materialise(mirror: Path, target: Path) -> Path | str:
    """The tree written under ``target``; or why it cannot be (the section is then skipped)."""
    return materialise_commit(mirror / TLDR_REPO, TLDR_COMMIT, target, "tldr-pages")


def materialise_commit(git_dir: Path, commit: str, target: Path, name: str) -> Path | str:
    """``commit`` of the mirror ``git_dir`` written under ``target``; or why it cannot be."""
    if not git_dir.is_dir():
        return f"no mirror of {name} at {git_dir}"
    found = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
    )
    if found.returncode != 0:
        return f"commit {commit} is not in {git_dir}"
    target.mkdir(parents=True, exist_ok=True)
    with (
        subprocess.Popen(
            ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit],
            stdout=subprocess.PIPE,
        ) as archive,
        tarfile.open(fileobj=archive.stdout, mode="r|") as tar,
    ):
        tar.extractall(target, filter="data")
    if archive.returncode != 0:
        return f"git archive of {commit} failed ({archive.returncode})"
    return target


def write_config(path: Path, tree: Path) -> Path:
    path.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "tldr"\nkind = "markdown"\n'
        f'root = "{tree}"\n',
        encoding="utf-8",
    )
    return path


def real_tree(work: Path, mirror: Path, build, one_process: bool = False) -> dict:
    """Every figure of the section, or ``{"skipped": why}``; ``build`` is run.py's."""
    tree = materialise(mirror, work / "tldr")
    if isinstance(tree, str):
        return {"skipped": tree}
    markdown = tree_bytes(tree, (".md",)) / 1e6
    files = sum(1 for p in tree.rglob("*.md") if p.is_file())
    config = write_config(work / "tldr.toml", tree)
    state = work / "tldr-state"
    out: dict = {
        "tree": f"tldr-pages/tldr@{TLDR_COMMIT[:12]}",
        "markdown_mb": round(markdown, 2),
        "markdown_files": files,
    }
    out["build"] = build(config, state, markdown)
    if one_process:
        out["build_one_process"] = build(config, work / "tldr-state-1", markdown, workers=1)
    out["cold_start"] = cold_start(config, state, work, 1)
    daemon = Daemon(["--config", str(config)], state)
    daemon.start(timeout=900)
    try:
        out["rss_mb_after_start"] = rss_mb(daemon.proc.pid)
        stub = daemon.stub
        out["search"] = latency(
            lambda i: stub.Search(pb.SearchRequest(query=TLDR_QUERIES[i % len(TLDR_QUERIES)])),
            300,
        )
        hits = [len(stub.Search(pb.SearchRequest(query=q)).results) for q in TLDR_QUERIES]
        out["queries_with_results"] = sum(1 for n in hits if n)
    finally:
        daemon.terminate()
    return out


def render_real_tree(r: dict) -> list[str]:
    if "skipped" in r:
        return [f"real tree: skipped ({r['skipped']})"]
    b = r["build"]
    lines = [
        f"real tree {r['tree']}: {r['markdown_files']} Markdown files, {r['markdown_mb']} MB",
        f"  build (Markdown)  {b['indexing_s']:>8} s   ({b['mb_per_s']} MB/s, "
        f"{b['files_per_s']} files/s, {b['blocks']} blocks)",
    ]
    if "build_one_process" in r:
        m = r["build_one_process"]
        lines.append(f"  in one process    {m['indexing_s']:>8} s   ({m['mb_per_s']} MB/s)")
    c, s = r["cold_start"], r["search"]
    lines += [
        f"  cold start        {c['seconds']:>8} s   (engine load {c['engine_load_seconds']} s)",
        f"  RSS after start   {r['rss_mb_after_start']:>8} MB",
        f"  Search p50 / p99  {s['p50_ms']:>8} / {s['p99_ms']} ms "
        f"({r['queries_with_results']} of {len(TLDR_QUERIES)} queries find something)",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    from bench.run import build

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    parser.add_argument("--one-process", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="scriptorium-realtree-") as tmp:
        result = real_tree(Path(tmp), args.mirror, build, args.one_process)
    print("\n".join(render_real_tree(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
