"""``scriptorium state list`` and ``state prune`` over default state directories.

HOME and XDG_CACHE_HOME point into the test's own directory, so the state directories are the
ones the real command chooses by default (``<cache>/scriptorium/<hash>``) and nothing of the
user's is looked at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.daemon import CORPUS, Daemon

DAY = 86400


def tree(root: Path, page: str) -> Path:
    (root / "docs").mkdir(parents=True)
    shutil.copy(CORPUS / "docs/en/docs/tutorial" / page, root / "docs" / page)
    shutil.copy(CORPUS / "docs_src/first_steps/tutorial001_py310.py", root / "main.py")
    return root


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    (tmp_path / "home").mkdir()
    return env


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "scriptorium", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


def listed(env: dict[str, str]) -> dict[str, dict]:
    """``state list --format json``, keyed by the first root each directory serves."""
    done = run(env, "--format", "json", "state", "list")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["root"] == str(Path(env["XDG_CACHE_HOME"]) / "scriptorium")
    return {Path(d["roots"][0]).name: d for d in data["state_dirs"]}


def age(state_dir: Path, days: float) -> None:
    """Make a directory look unused for ``days``: its record and its generations."""
    record = state_dir / "state.json"
    data = json.loads(record.read_text("utf-8"))
    then = time.time() - days * DAY
    data["last_used"] = then
    record.write_text(json.dumps(data), "utf-8")
    for gen in (state_dir / "generations").iterdir():
        os.utime(gen, (then, then))


def test_list_and_prune_default_state_directories(
    fastapi_corpus, tmp_path: Path, home: dict[str, str]
) -> None:
    alpha = tree(tmp_path / "alpha", "first-steps.md")
    beta = tree(tmp_path / "beta", "path-params.md")
    config = tmp_path / "gamma.toml"
    gamma = tree(tmp_path / "gamma", "query-params.md")
    config.write_text(f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{gamma}"\n', "utf-8")
    for args in ([str(alpha)], [str(beta)], ["--config", str(config)]):
        built = run(home, "index", "build", *args)
        assert built.returncode == 0, built.stderr

    before = listed(home)
    assert sorted(before) == ["alpha", "beta", "gamma"]
    for entry in before.values():
        assert Path(entry["path"]).parent == Path(home["XDG_CACHE_HOME"]) / "scriptorium"
        assert entry["generations"] == 1 and entry["size_bytes"] > 0, entry
        assert entry["in_use"] is False and entry["last_used"] > time.time() - DAY
    assert before["alpha"]["roots"] == [str(alpha.resolve())] and before["alpha"]["config"] is None
    assert before["gamma"]["config"] == str(config.resolve())
    text = run(home, "state", "list").stdout
    assert text.splitlines()[0].split()[:3] == ["STATE", "DIR", "SIZE"]
    assert str(config.resolve()) in text and str(alpha.resolve()) in text

    # A daemon serving alpha holds its directory, so no prune removes it, however old.
    alpha_dir, beta_dir = Path(before["alpha"]["path"]), Path(before["beta"]["path"])
    age(alpha_dir, 90)
    age(beta_dir, 90)
    daemon = Daemon([str(alpha), "--no-watch"], alpha_dir, env=home)
    with daemon:
        assert listed(home)["alpha"]["in_use"] is True
        assert listed(home)["beta"]["in_use"] is False

        dry = run(home, "--format", "json", "state", "prune", "--older-than", "30", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        plan = json.loads(dry.stdout)
        assert [d["path"] for d in plan["removed"]] == [str(beta_dir)]
        assert [d["path"] for d in plan["kept_in_use"]] == [str(alpha_dir)]
        assert len(plan["kept_recent"]) == 1  # gamma: built a moment ago
        assert beta_dir.is_dir(), "a dry run removed something"

        pruned = run(home, "state", "prune", "--older-than", "30")
        assert pruned.returncode == 0, pruned.stderr
        assert f"removed {beta_dir}" in pruned.stdout
        assert f"kept {alpha_dir}: in use" in pruned.stdout
        assert not beta_dir.exists() and alpha_dir.is_dir()
        assert (alpha_dir / "generations").is_dir()

        everything = run(home, "state", "prune", "--older-than", "0")
        assert everything.returncode == 0, everything.stderr
        assert alpha_dir.is_dir(), "a directory in use was removed"
    # Once the daemon has stopped, the directory is only as recent as that daemon's last use.
    assert listed(home)["alpha"]["in_use"] is False
    assert sorted(listed(home)) == ["alpha"]
    gone = run(home, "state", "prune", "--older-than", "0")
    assert gone.returncode == 0, gone.stderr
    assert not alpha_dir.exists()
    assert "no state directories" in run(home, "state", "list").stdout
