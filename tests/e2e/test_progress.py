"""Build progress on a stderr that is not a terminal: ``index build`` and ``serve`` both report.

A build of a few dozen files takes well under the ten seconds after which the indexer logs its
own progress, so every line asserted here comes from the progress renderer.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.daemon import CORPUS, running

START = re.compile(r"^indexing: (\d+) files, (\d+\.\d) MB to read$")
LINE = re.compile(r"^indexing: (\d+) of (\d+) files \((\d+)%\), [\d.]+ of [\d.]+ MB read, ")
SUMMARY = re.compile(r"^indexing: read (\d+) files, (\d+\.\d) MB in \d+\.\d s")


@pytest.fixture
def tutorial(fastapi_corpus, tmp_path: Path) -> tuple[Path, int, str]:
    """A copy of the English tutorial, its Markdown file count and size as the renderer shows it."""
    root = tmp_path / "docs"
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "tutorial")
    files = list(root.rglob("*.md"))
    size = sum(f.stat().st_size for f in files)
    config = tmp_path / "scriptorium.toml"
    config.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "en"\nkind = "markdown"\n'
        f'root = "{root}"\ndefault = true\n',
        encoding="utf-8",
    )
    return config, len(files), f"{size / 1_000_000:.1f}"


def progress_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("indexing")]


def test_index_build_prints_progress_and_a_summary_on_a_pipe(tutorial, tmp_path):
    config, files, mb = tutorial
    command = [sys.executable, "-m", "scriptorium", "index", "build", "--config", str(config)]
    build = subprocess.run(
        [*command, "--state-dir", str(tmp_path / "state"), "--build-workers", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    lines = progress_lines(build.stderr)
    assert "\r" not in build.stderr and "\x1b[" not in build.stderr
    assert START.match(lines[0]).groups() == (str(files), mb), lines
    assert SUMMARY.match(lines[-1]).groups() == (str(files), mb), lines
    periodic = [LINE.match(line) for line in lines[1:-1]]
    assert periodic and all(periodic), lines
    percents = [int(m.group(3)) for m in periodic]
    assert percents == sorted(percents) and len(set(percents)) == len(percents)
    assert all(int(m.group(2)) == files for m in periodic)
    # The progress is for people on stderr: stdout keeps the build's report, a table.
    assert "indexing" not in build.stdout and f"{files} documents" in build.stdout
    assert build.stdout.splitlines()[1].split() == ["NAME", "STATE", "DOCS"]


def test_serve_reports_its_build_in_its_log(tutorial, tmp_path):
    config, files, mb = tutorial
    with running(["--config", str(config), "--build-workers", "1"], tmp_path / "state") as daemon:
        log = daemon.log()
    lines = progress_lines(log)
    assert START.match(lines[0]).groups() == (str(files), mb), log
    assert SUMMARY.match(lines[-1]).groups() == (str(files), mb), log
