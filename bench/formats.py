"""Build throughput per documentation format, next to plain Markdown measured in the same run.

    python bench/formats.py [--megabytes 2] [--json PATH]

For each format a tree of about ``--megabytes`` MB is made from real files (the FastAPI
English docs for Markdown, the baseline; the react.dev and Vite pages of
``tests/fixtures/site_markdown`` for MDX and site Markdown; Sphinx's own pages of
``tests/fixtures/sphinx`` for reStructuredText; xarray's notebook for Jupyter; Vim's help for
plain text), copied as often as it takes, and indexed by a fresh ``scriptorium index build`` in
one process (``--build-workers 1``, so the figure is the extractor's and the tokenizer's, not
the machine's core count), the formats in turn and twice over (``--rounds``), each keeping its
fastest build. Reported: MB/s of the command's own indexing time and the ratio to
Markdown's. ``bench/run.py`` runs this too and prints it with its other figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scriptorium.launcher import daemon_command  # noqa: E402
from tests.support.daemon import CORPUS  # noqa: E402

FIXTURES = REPO / "tests/fixtures"
# format -> (source kind, folder of real files, suffixes taken from it)
FORMATS: dict[str, tuple[str, Path, tuple[str, ...]]] = {
    "markdown": ("markdown", CORPUS / "docs/en/docs", (".md",)),
    "mdx_site": ("markdown", FIXTURES / "site_markdown", (".md", ".mdx", ".ts")),
    "rst": ("markdown", FIXTURES / "sphinx/doc", (".rst", ".py")),
    "notebook": ("markdown", FIXTURES / "notebooks", (".ipynb",)),
    "text": ("text", FIXTURES / "plaintext", (".txt",)),
}
INDEXED = {"markdown": (".md",), "mdx_site": (".md", ".mdx"), "rst": (".rst",)}


def _files(folder: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in suffixes)


def make_tree(name: str, target: Path, megabytes: float) -> float:
    """Copies of the format's files until the indexed ones reach ``megabytes``; their MB."""
    _, folder, suffixes = FORMATS[name]
    files = _files(folder, suffixes)
    indexed = INDEXED.get(name, suffixes)
    size = sum(p.stat().st_size for p in files if p.suffix in indexed)
    if not size:
        raise SystemExit(f"bench/formats: no {name} files under {folder}")
    copies = max(1, round(megabytes * 1e6 / size))
    for copy in range(copies):
        for path in files:
            destination = target / f"copy{copy}" / path.relative_to(folder)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
    return copies * size / 1e6


def build(name: str, root: Path, state: Path, config: Path) -> dict:
    kind = FORMATS[name][0]
    config.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "{name}"\nkind = "{kind}"\n'
        f'root = "{root}"\n',
        encoding="utf-8",
    )
    command = [*daemon_command(), "--format", "json", "index", "build", "--build-workers", "1"]
    done = subprocess.run(
        [*command, "--config", str(config), "--state-dir", str(state)],
        check=True,
        capture_output=True,
        text=True,
    )
    report = json.loads(done.stdout)
    return {
        "indexing_s": float(report.get("seconds") or 0.0),
        "documents": int(report.get("documents", 0)),
        "blocks": int(report.get("blocks", 0)),
    }


def doc_formats(work: Path, megabytes: float, rounds: int = 2) -> dict:
    """``{format: {mb, indexing_s, mb_per_s, documents, blocks, vs_markdown}}``.

    The formats are built in turn, ``rounds`` times over, and each keeps its fastest build: on
    a shared machine the load changes within a minute, and interleaving spreads it evenly.
    """
    trees = {name: (work / f"format-{name}") for name in FORMATS}
    sizes = {name: make_tree(name, root, megabytes) for name, root in trees.items()}
    best: dict[str, dict] = {}
    for _ in range(max(1, rounds)):
        for name, root in trees.items():
            state = work / f"state-{name}"
            figures = build(name, root, state, work / f"{name}.toml")
            shutil.rmtree(state, ignore_errors=True)
            if name not in best or figures["indexing_s"] < best[name]["indexing_s"]:
                best[name] = figures
    results: dict[str, dict] = {}
    for name, figures in best.items():
        seconds = max(figures["indexing_s"], 1e-6)
        mb = sizes[name]
        results[name] = {"mb": round(mb, 2), **figures, "mb_per_s": round(mb / seconds, 2)}
        shutil.rmtree(trees[name], ignore_errors=True)
    baseline = results["markdown"]["mb_per_s"]
    for figures in results.values():
        figures["vs_markdown"] = round(figures["mb_per_s"] / baseline, 2) if baseline else None
    return results


def render_formats(results: dict) -> list[str]:
    if not results:
        return []
    lines = ["build per document format (one process, ratio to Markdown in the same run)"]
    for name, r in results.items():
        lines.append(
            f"  {name:<10} {r['mb_per_s']:>7} MB/s  x{r['vs_markdown']}  "
            f"({r['mb']} MB, {r['documents']} files, {r['blocks']} blocks, {r['indexing_s']} s)"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--megabytes", type=float, default=2.0, help="indexed MB per format")
    parser.add_argument("--rounds", type=int, default=2, help="builds per format (best kept)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="scriptorium-bench-formats-"))
    try:
        results = doc_formats(work, args.megabytes, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n".join(render_formats(results)))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
