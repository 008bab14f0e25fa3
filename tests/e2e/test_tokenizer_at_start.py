"""The daemon says at start which tokenizer runs: the compiled one, or the Python one and why."""

from __future__ import annotations

import os

import pytest

from tests.support.daemon import running


def _tree(tmp_path):
    tree = tmp_path / "docs"
    tree.mkdir()
    (tree / "index.md").write_text("# Install\n\nRun `pip install getUser`.\n", "utf-8")
    return tree


@pytest.mark.skipif(
    bool(os.environ.get("SCRIPTORIUM_PURE_PYTHON")), reason="only the Python tokenizer is asked for"
)
def test_the_compiled_tokenizer_is_named_at_start(tmp_path):
    with running([str(_tree(tmp_path))], tmp_path / "state") as daemon:
        assert "tokenizer: compiled (scriptorium_native)" in daemon.full_log()


def test_without_it_one_line_says_the_python_tokenizer_runs(tmp_path):
    tree = _tree(tmp_path)
    with running([str(tree)], tmp_path / "state", env={"SCRIPTORIUM_PURE_PYTHON": "1"}) as daemon:
        log = daemon.full_log()
        assert log.count("tokenizer: ") == 1
        assert "WARNING" in next(line for line in log.splitlines() if "tokenizer: " in line)
        assert "the Python tokenizer is used" in log
        assert "Traceback" not in log
