"""The plugin manager: built-ins arrive through entry points, every hook is documented."""

from __future__ import annotations

import inspect
import subprocess
import sys
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
    with pytest.raises(PluginError, match="known kinds: code, dependencies, llms_txt, markdown"):
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


def test_remote_source_libraries_load_only_when_such_a_source_is_configured():
    """Registering the mkdocs and peer kinds must not import their sources (a cold-start cost)."""
    probe = (
        "import sys\n"
        "from scriptorium.plugins import load_registry\n"
        "registry = load_registry()\n"
        "assert {'mkdocs', 'peer'} <= set(registry.source_kinds)\n"
        "heavy = ['scriptorium_plugins.mkdocs.source', 'scriptorium_plugins.peer.source',"
        " 'httpx', 'bs4', 'markdownify']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_a_deferred_factory_imports_its_module_when_called(tmp_path):
    from scriptorium.sources.base import SourceConfig, SourceContext, deferred_factory
    from scriptorium_plugins.peer.source import PeerSource

    factory = deferred_factory("scriptorium_plugins.peer.source", "PeerSource")
    config = SourceConfig(name="p", kind="peer", root=None, options={"target": "127.0.0.1:1"})
    context = SourceContext(extractors=collect(build_plugin_manager()).extractor_chain)
    assert isinstance(factory(config, context), PeerSource)


def test_a_plugin_supplies_the_semantic_retrievers_encoder(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRIPTORIUM_SEMANTIC", "on")
    import numpy as np

    from scriptorium.plugin import Encoder, hookimpl
    from scriptorium.semantic.service import semantic_for
    from scriptorium.settings.ranking import RankingSettings

    class Letters:
        """Vectors of letter counts: enough to tell the hook's encoder is the one used."""

        name = "letters"
        dimensions = 26

        def passages(self, texts):
            return np.stack([self.query(t) for t in texts])

        def query(self, text):
            row = np.zeros(26, dtype=np.float32)
            for ch in text.lower():
                if "a" <= ch <= "z":
                    row[ord(ch) - 97] += 1
            return row / max(float(np.linalg.norm(row)), 1e-6)

    class Plugin:
        @hookimpl
        def scriptorium_embedder(self, model, tokens):
            return Letters() if model == "letters" else None

    pm = build_plugin_manager(load_entry_points=False)
    pm.register(Plugin(), name="letters")
    registry = collect(pm)
    assert isinstance(Letters(), Encoder)
    semantic = semantic_for(
        RankingSettings(semantic_model="letters"), tmp_path, list, registry.embedder
    )
    assert semantic is not None
    encoder = semantic.builder._make_encoder()
    assert encoder.name == "letters"
    assert semantic_for(RankingSettings(semantic=False), tmp_path, list, registry.embedder) is None
