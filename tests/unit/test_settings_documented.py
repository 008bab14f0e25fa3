"""Every configuration key is declared once, has a help text and is in docs/settings.md.

docs/settings.md is rendered from the declared tables (``scriptorium settings --format
markdown``); a stale page, a key without help or a key missing from the page fails here.
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scriptorium.cli import main, reference

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / reference.REFERENCE_PAGE
HINT = f"{reference.REFERENCE_PAGE} is stale: run `{reference.GENERATED_BY}` and commit it"
TABLES = reference.all_tables()
KEYS = [(t.title, k) for t in TABLES for k in t.keys or ()]


def _sections(text: str) -> dict[str, str]:
    """Each ``## `[table]``` heading's title -> the text below it."""
    parts = re.split(r"^## `(.+)`$", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_committed_settings_page_is_fresh():
    regenerated = subprocess.run(
        [sys.executable, "-P", "-m", "scriptorium", "settings", "--format", "markdown"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert PAGE.exists(), HINT
    assert PAGE.read_text(encoding="utf-8") == regenerated, HINT


def test_every_table_is_rendered():
    titles = [t.title for t in TABLES]
    assert titles[: len(reference.TABLE_NAMES)] == list(reference.TABLE_NAMES)
    kinds = {t.title for t in TABLES[len(reference.TABLE_NAMES) :]}
    for kind in ("markdown", "code", "mkdocs", "peer"):
        assert f'[[sources]] kind = "{kind}"' in kinds


@pytest.mark.parametrize(("table", "key"), KEYS, ids=[f"{t}.{k.name}" for t, k in KEYS])
def test_settings_are_documented(table, key):
    assert key.help.strip(), f"{table} {key.name} has no help text"
    section = _sections(PAGE.read_text(encoding="utf-8")).get(table, "")
    assert f"| `{key.name}` |" in section, f"{table} {key.name} is not in {PAGE.name}"


def test_serve_help_ends_with_the_settings_reference():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["serve", "--help"])
    ending = " ".join(out.getvalue().split()[-40:])
    assert ending.endswith("own keys in its [[sources]] entry."), ending
    assert reference.REFERENCE_PAGE in ending
    for name in reference.TABLE_NAMES:
        assert name in ending


def test_the_readme_and_operations_guide_link_the_reference():
    for doc in ("README.md", "docs/operations.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        assert "settings.md" in text, f"{doc} does not link {reference.REFERENCE_PAGE}"
