"""The plugin manager: built-ins arrive through entry points, every hook is documented."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from scriptorium.plugins import PluginError, build_plugin_manager, collect

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def test_builtins_register_through_entry_points():
    pm = build_plugin_manager()
    names = {name for name, _ in pm.list_name_plugin()}
    assert {"markdown", "code", "implementation"} <= names
    registry = collect(pm)
    assert {"markdown", "code"} <= set(registry.source_kinds)
    assert {"default", "implementation"} <= set(registry.modes)
    assert {e.name for e in registry.extractors} >= {"markdown", "code"}


def test_entry_points_can_be_allow_listed(monkeypatch):
    monkeypatch.setenv("SCRIPTORIUM_PLUGINS", "markdown")
    registry = collect(build_plugin_manager())
    assert set(registry.source_kinds) == {"markdown"}
    with pytest.raises(PluginError, match="known modes: default"):
        registry.mode("implementation")


def test_unknown_kind_names_the_known_ones():
    registry = collect(build_plugin_manager())
    with pytest.raises(PluginError, match="known kinds: code, markdown"):
        registry.source_factory("nonesuch")


def test_every_hook_is_documented_with_its_signature():
    pm = build_plugin_manager(load_entry_points=False)
    text = DOCS.read_text("utf-8")
    hooks = [name for name in dir(pm.hook) if name.startswith("scriptorium_")]
    assert hooks
    for name in hooks:
        spec = getattr(pm.hook, name).spec
        assert spec.function.__doc__, f"{name} has no docstring"
        params = ", ".join(inspect.signature(spec.function).parameters)
        assert f"### `{name}({params})`" in text, f"{name} is not documented in docs/plugins.md"
