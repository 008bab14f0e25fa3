"""``--ranking KEY=VALUE``: one suite run with some ``[ranking]`` levers changed.

A lever is measured by running the whole suite twice, once as shipped and once with the lever
flipped; the flipped run's daemons get the same configuration plus a ``[ranking]`` table.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.settings.ranking import RANKING_KEYS

_ROOT_LINE = re.compile(r'^(\s*root\s*=\s*)"([^"]*)"', re.M)


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """``["auxiliary_factor=0.5", "stem=false"]`` → values as TOML reads them."""
    known = {key.name for key in RANKING_KEYS}
    overrides: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise SuiteError(f"--ranking {item}: give KEY=VALUE")
        if name not in known:
            raise SuiteError(f"--ranking {item}: unknown [ranking] key {name!r}")
        try:
            overrides[name] = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            overrides[name] = raw.strip()
    return overrides


def ranking_table(overrides: Mapping[str, Any]) -> str:
    """The ``[ranking]`` table for ``overrides`` ("" for none)."""
    if not overrides:
        return ""
    lines = ["", "[ranking]"]
    lines += [f"{name} = {json.dumps(value)}" for name, value in overrides.items()]
    return "\n".join(lines) + "\n"


def with_ranking(config: Path, overrides: Mapping[str, Any], folder: Path) -> Path:
    """A copy of ``config`` in ``folder`` with ``overrides`` as its ``[ranking]`` table.

    Relative source roots are made absolute, since they are relative to the config's folder.
    A config with a ``[ranking]`` table of its own is refused rather than merged.
    """
    if not overrides:
        return config
    text = config.read_text(encoding="utf-8")
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{config}: {exc}") from exc
    if "ranking" in parsed:
        raise SuiteError(f"{config} has a [ranking] table; --ranking cannot be merged into it")
    base = config.resolve().parent

    def absolute(match: re.Match[str]) -> str:
        root = Path(match.group(2))
        return f"{match.group(1)}{json.dumps(str(root if root.is_absolute() else base / root))}"

    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / config.name
    copy.write_text(_ROOT_LINE.sub(absolute, text) + ranking_table(overrides), encoding="utf-8")
    return copy
