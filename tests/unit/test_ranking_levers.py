"""docs/ranking.md's lever table is the code's: every lever, its default and its status.

The table is rendered from ``RankingSettings`` (``scriptorium settings --format levers``) with
the status each lever declares beside its default (``off(default, why)``); a stale table, a
lever missing from it, or a lever whose default switches it off without saying why fails here.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from scriptorium.cli import reference
from scriptorium.settings.levers import SHIPPED, status
from scriptorium.settings.ranking import RANKING_KEYS, RankingSettings

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / reference.LEVERS_PAGE
HINT = f"{reference.LEVERS_PAGE}'s lever table is stale: run scripts/gen_lever_table.py"
DEFAULTS = RankingSettings()
HELP = {key.name: key.help for key in RANKING_KEYS}


def _committed_table() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert reference.LEVERS_BEGIN in text and reference.LEVERS_END in text, HINT
    body = text.split(reference.LEVERS_BEGIN, 1)[1].split(reference.LEVERS_END, 1)[0]
    return reference.LEVERS_BEGIN + body + reference.LEVERS_END + "\n"


def test_the_committed_lever_table_is_fresh():
    regenerated = subprocess.run(
        [sys.executable, "-P", "-m", "scriptorium", "settings", "--format", "levers"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert regenerated == reference.render_levers()
    assert _committed_table() == regenerated, HINT


@pytest.mark.parametrize("key", RANKING_KEYS, ids=[k.name for k in RANKING_KEYS])
def test_every_lever_has_a_row_with_its_status(key):
    rows = [
        line for line in _committed_table().splitlines() if line.startswith(f"| `{key.name}` |")
    ]
    assert len(rows) == 1, f"{key.name} is not in the lever table once"
    assert status(RankingSettings, key.name) in rows[0].replace("\\|", "|")


def _switched_off(name: str, value: object) -> bool:
    """Whether a default reads as off by its form: false, or an empty string, a factor of 1.0
    or a 0 that the lever's help calls off."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value == "" and "empty is off" in HELP[name]
    if isinstance(value, float) and value == 1.0:
        return name.endswith(("_factor", "_prior", "_weight")) and "1.0 is off" in HELP[name]
    return value == 0 and "(0 is off)" in HELP[name]


@pytest.mark.parametrize("item", dataclasses.fields(RankingSettings), ids=lambda f: f.name)
def test_a_lever_that_ships_off_says_why(item):
    if item.name == "weights":
        return
    value = getattr(DEFAULTS, item.name)
    said = status(RankingSettings, item.name)
    if _switched_off(item.name, value):
        assert said.startswith("off: ") and len(said) > len("off: ") + 10, (
            f"{item.name} ships off ({value!r}): declare it with off(default, why)"
        )
    if said != SHIPPED:
        assert said.removeprefix("off: ").strip(), f"{item.name} is off with no reason"


def test_off_keeps_the_default():
    assert DEFAULTS.semantic_prose is False
    assert DEFAULTS.rrf_k == 60
    assert status(RankingSettings, "fusion") == SHIPPED
    assert status(RankingSettings, "body_weight") == SHIPPED
    assert status(RankingSettings, "semantic_prose").startswith("off: ")
