"""Declared configuration keys: each table of the TOML file says, in one place, what it accepts.

A section (``[server]``, ``[telemetry]``, ``[ranking]``, the keys of each ``[[sources]]`` kind)
is a sequence of :class:`Key` (name, type, default, help). :func:`check_table` refuses any key
the section does not declare, naming the closest declared one, and any value of the wrong
type, in one sentence: a typo or a string where a list belongs must never be ignored or end in
a traceback deep inside the daemon.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class ConfigError(ValueError):
    """The configuration cannot be used; the message says why and where."""


# What each declared type accepts, as the sentence an error uses.
_EXPECTED = {
    "string": "a string",
    "bool": "true or false",
    "integer": "an integer",
    "number": "a number",
    "strings": "a list of strings",
    "table": "a table",
    "string_table": "a table of strings",
    "number_table": "a table of numbers",
    "string_or_false": "a string or false",
    "any": "a value",
}


@dataclass(frozen=True, slots=True)
class Key:
    """One configuration key: its name, type (see ``_EXPECTED``), default and meaning."""

    name: str
    type: str
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    # True: the value must be greater than ``minimum``, not equal to it.
    strict: bool = False

    def __post_init__(self) -> None:
        if self.type not in _EXPECTED:
            raise ValueError(f"key {self.name!r}: unknown type {self.type!r}")


def expected(kind: str) -> str:
    """What a declared type accepts, as a sentence says it (``a list of strings``)."""
    return _EXPECTED[kind]


def describe(value: Any) -> str:
    """A value as an error message names it: ``a string ("*.md")``, ``an integer (3)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'a string ("{shown}")'
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value:g})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a table"
    return f"a {type(value).__name__}"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _matches(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return _is_number(value)
    if kind == "strings":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "table":
        return isinstance(value, Mapping)
    if kind == "string_table":
        return isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values())
    if kind == "number_table":
        return isinstance(value, Mapping) and all(_is_number(v) for v in value.values())
    if kind == "string_or_false":
        return isinstance(value, str) or value is False
    return True


def unknown_key_message(key: str, where: str, known: Iterable[str]) -> str:
    """``unknown key 'x' in [where]; did you mean 'y'?`` (or the known keys, when none is close)."""
    names = sorted(known)
    close = difflib.get_close_matches(key, names, n=1)
    if close:
        hint = f"; did you mean {close[0]!r}?"
    else:
        hint = f"; known keys: {', '.join(names)}" if names else ""
    return f"unknown key {key!r} in {where}{hint}"


def check_value(key: Key, value: Any, subject: str) -> None:
    """Refuse a value of the wrong type or out of range; ``subject`` starts the sentence."""
    if not _matches(key.type, value):
        raise ConfigError(
            f"{subject} {key.name} must be {_EXPECTED[key.type]}, got {describe(value)}"
        )
    if key.choices and value not in key.choices:
        options = " or ".join(f'"{c}"' for c in key.choices)
        if len(key.choices) > 2:
            options = "one of " + ", ".join(f'"{c}"' for c in key.choices)
        raise ConfigError(f"{subject} {key.name} must be {options}, got {describe(value)}")
    if key.minimum is None or not _is_number(value):
        return
    if value < key.minimum or (key.strict and value == key.minimum):
        bound = "greater than" if key.strict else "at least"
        raise ConfigError(f"{subject} {key.name} must be {bound} {key.minimum:g}")


def check_table(
    table: Mapping[str, Any], keys: Sequence[Key], where: str, subject: str | None = None
) -> None:
    """Refuse undeclared keys (``where`` names the table) and values of the wrong type.

    ``subject`` starts a wrong-value sentence (default: ``where``).
    """
    declared = {k.name: k for k in keys}
    for name in table:
        if name not in declared:
            raise ConfigError(unknown_key_message(str(name), where, declared))
    for name, value in table.items():
        check_value(declared[name], value, subject or where)


def table_of(value: Any, where: str) -> Mapping[str, Any]:
    """``value`` when it is a table; otherwise the error that says ``where`` must be one."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table, got {describe(value)}")
    return value
