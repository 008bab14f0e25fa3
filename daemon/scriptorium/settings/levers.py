"""Which ranking levers ship switched on, and why the others ship off.

A lever declared with :func:`off` carries the reason beside its default, so the lever table of
docs/ranking.md (rendered by ``scriptorium.cli.reference.render_levers``) reads its
status from the code and cannot drift from it. Every other lever ships at its default.
"""

from __future__ import annotations

import dataclasses
from typing import Any

SHIPPED = "shipped"
_OFF = "off"


def off(default: Any, why: str) -> Any:
    """A ``RankingSettings`` field that ships switched off, with the measurement that says why."""
    return dataclasses.field(default=default, metadata={_OFF: why})


def status(settings_type: type, name: str) -> str:
    """``shipped``, or ``off: <why>`` for a lever declared with :func:`off`.

    Names that are not fields (the BM25 field weights, declared as keys of their own) ship.
    """
    for item in dataclasses.fields(settings_type):
        if item.name == name and _OFF in item.metadata:
            return f"{_OFF}: {item.metadata[_OFF]}"
    return SHIPPED
