"""``make venv`` (scripts/ensure_venv.sh) says each step before it takes its time: creating the
virtualenv, installing, building the compiled fast paths, compiling bytecode, and that it is
ready, so a first ``make run`` is never a minute of silence.

The real script runs in a copy of the repository's layout whose Python and cargo are stand-ins
that record what they were asked and return at once (the steps' work is not what is tested;
that each is said, in order, before it runs, is).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from tests.support.trees import write

REPO = Path(__file__).resolve().parents[2]

# A Python that creates a "virtualenv" (a copy of itself), reports a version and does nothing
# else, appending each call to calls.log.
FAKE_PYTHON = """#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/../../calls.log"
if [[ "$1" == "--version" ]]; then echo "Python 3.11.9"; exit 0; fi
if [[ "$1" == "-m" && "$2" == "venv" ]]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && chmod +x "$3/bin/python"
fi
exit 0
"""


def executable(path: Path, text: str) -> Path:
    write(path, text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def test_a_first_make_venv_says_each_step_in_order(tmp_path):
    repo = tmp_path / "repo"
    for script in ("ensure_venv.sh", "ensure_model.sh"):
        target = repo / "scripts" / script
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / "scripts" / script, target)
    write(repo / "pyproject.toml", "[project]\nname = 'x'\n")
    write(repo / "native" / "Cargo.toml", "[package]\nname = 'x'\n")
    (repo / "daemon").mkdir()
    (repo / "plugins").mkdir()
    model = repo / ".venv/share/scriptorium/models/bge-small-en-v1.5-q/MODEL.json"
    write(model, "{}\n")  # the model is there: no download
    python = executable(tmp_path / "tools" / "bin" / "python3", FAKE_PYTHON)
    executable(tmp_path / "tools" / "bin" / "cargo", "#!/usr/bin/env bash\nexit 0\n")
    env = {
        **os.environ,
        "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHON": str(python),
        "HOME": str(tmp_path / "home"),
    }
    env.pop("VENV", None)
    done = subprocess.run(
        ["bash", str(repo / "scripts" / "ensure_venv.sh")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=repo,
    )
    assert done.returncode == 0, done.stderr
    said = [line.split(": ", 1)[1] for line in done.stdout.splitlines()]
    expected = [
        "creating .venv with Python 3.11.9",
        "installing the project and its dev extras into .venv",
        "building the compiled fast paths (native/",
        "built the compiled fast paths (native/)",
        "compiling the project's bytecode",
        ".venv is ready",
    ]
    assert len(said) == len(expected), done.stdout
    for line, start in zip(said, expected, strict=True):
        assert line.startswith(start), done.stdout
    # Each step was said before it ran: the install ran after its line, once.
    calls = (repo / "calls.log").read_text().splitlines()
    assert any("pip install" in c and ".[dev]" in c for c in calls), calls
    assert any("pip install" in c and "./native" in c for c in calls), calls
