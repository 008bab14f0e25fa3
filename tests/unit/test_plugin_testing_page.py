"""docs/plugins.md's "Testing a plugin" example runs as written.

The example is read from the page, written to a file of its own and run by pytest in a fresh
process (outside this suite's conftest), so a page whose example stops working fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "plugins.md"


def page_example() -> str:
    section = PAGE.read_text(encoding="utf-8").split("\n## Testing a plugin\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_example_is_a_test_module_with_an_engine_fixture():
    example = page_example()
    assert "@pytest.fixture" in example and "def engine(" in example
    assert "LocalEngine(" in example and "register(" in example
    assert "def test_" in example


def test_the_page_example_passes(tmp_path: Path):
    (tmp_path / "test_page_example.py").write_text(page_example(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "SCRIPTORIUM_SEMANTIC"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_page_example.py"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout, done.stdout[-2000:]
