"""``scriptorium eval`` refuses a config whose source roots are missing, before any daemon starts.

Without the corpus every source fails and a measurement would record a table of zeros as if it
were a result. Run through the real command, as ``make eval`` runs it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.daemon import REPO


def run_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium", "eval", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_eval_refuses_a_config_with_a_missing_root(tmp_path: Path) -> None:
    present = tmp_path / "docs"
    present.mkdir()
    (present / "index.md").write_text("# Home\n", encoding="utf-8")
    missing = tmp_path / "nowhere" / "code"
    config = tmp_path / "eval.toml"
    config.write_text(
        "[server]\nwatch = false\n\n"
        f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{present}"\n\n'
        f'[[sources]]\nname = "code"\nkind = "code"\nroot = "{missing}"\n',
        encoding="utf-8",
    )
    output = tmp_path / "run.json"
    done = run_eval("--config", str(config), "--output", str(output), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"code: {missing}" in done.stderr, done.stderr
    assert f"docs: {present}" not in done.stderr, done.stderr
    assert "no daemon started, no run record written" in done.stderr, done.stderr
    assert "starting daemon" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert not output.exists()


def test_eval_on_a_fresh_clone_without_the_corpus_says_where_it_comes_from(
    tmp_path: Path,
) -> None:
    """The shipped eval/fastapi.toml in a clone that has no shared corpus folder beside it."""
    clone = tmp_path / "clone"
    (clone / "eval").mkdir(parents=True)
    shutil.copy(REPO / "eval" / "fastapi.toml", clone / "eval" / "fastapi.toml")
    shutil.copy(REPO / "eval" / "fastapi.jsonl", clone / "eval" / "fastapi.jsonl")
    done = run_eval("--config", "eval/fastapi.toml", "--label", "fresh", cwd=clone)
    assert done.returncode == 2, done.stdout + done.stderr
    corpus = tmp_path / "shared" / "corpora" / "fastapi"
    for name, root in {
        "en": corpus / "docs/en/docs",
        "ja": corpus / "docs/ja/docs",
        "zh": corpus / "docs/zh/docs",
        "code": corpus,
    }.items():
        assert f"  {name}: {root}\n" in done.stderr, done.stderr
    assert "4 of 4 source roots do not exist" in done.stderr, done.stderr
    hint = "the shared corpus folder ../shared/corpora/fastapi beside the clone"
    assert hint in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert not (clone / "eval" / "runs").exists(), "a run record was written"
