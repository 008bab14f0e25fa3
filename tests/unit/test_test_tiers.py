"""The test tiers come from the folders, and a missing FastAPI corpus is loud under CI.

``tests/conftest.py`` marks every test with its folder's tier; a test file outside a tier
folder, a hand-written tier marker or an unregistered marker would let a test fall out of
``make test-unit`` / ``make test-e2e`` unnoticed, so each is checked here.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.conftest import TESTS, TIERS, corpus_missing, tier_of

REPO = TESTS.parent


def test_a_tier_is_the_first_folder_under_tests():
    assert tier_of(TESTS / "unit" / "test_x.py") == "unit"
    assert tier_of(TESTS / "e2e" / "test_x.py") == "e2e"
    assert tier_of(TESTS / "browser" / "test_x.py") == "browser"
    assert tier_of(TESTS / "support" / "daemon.py") is None
    assert tier_of(REPO / "bench" / "run.py") is None


def test_every_test_file_lives_in_a_tier_folder():
    outside = [
        p.relative_to(REPO).as_posix() for p in TESTS.rglob("test_*.py") if tier_of(p) is None
    ]
    assert not outside, f"test files outside {', '.join(TIERS)}: {outside}"


def test_no_test_file_writes_its_own_tier_marker():
    tier_mark = re.compile(r"pytest\.mark\.(" + "|".join(TIERS) + r")\b")
    written = [
        p.relative_to(REPO).as_posix()
        for p in TESTS.rglob("*.py")
        if tier_mark.search(p.read_text(encoding="utf-8"))
    ]
    assert not written, f"the folder gives the tier; drop the marker from {written}"


def test_markers_are_strict_and_every_tier_is_registered():
    options = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["pytest"]
    config = options["ini_options"]
    assert "--strict-markers" in config["addopts"].split()
    registered = {line.split(":", 1)[0] for line in config["markers"]}
    assert set(TIERS) <= registered


def test_a_missing_corpus_skips_on_a_developer_machine(tmp_path: Path):
    with pytest.raises(pytest.skip.Exception, match="FastAPI corpus is not at"):
        corpus_missing(tmp_path / "absent", ci=False)


def test_a_missing_corpus_fails_under_ci(tmp_path: Path):
    with pytest.raises(pytest.fail.Exception, match="CI must have it"):
        corpus_missing(tmp_path / "absent", ci=True)


def test_a_present_corpus_is_used(tmp_path: Path):
    corpus_missing(tmp_path, ci=True)  # a folder: neither skipped nor failed
