"""The plugin manager: discovers plugins through the ``scriptorium`` entry-point group.

Built-in plugins (``scriptorium_plugins.*``) are declared in this project's own
``[project.entry-points.scriptorium]`` table, so they load exactly like third-party ones.
``SCRIPTORIUM_PLUGINS`` (a comma-separated list of entry-point names) restricts which load.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pluggy

from scriptorium import hookspecs
from scriptorium.blocks.extractors import BlockExtractor, ExtractorChain
from scriptorium.domain.outcomes import PluginError
from scriptorium.ranking.modes import DefaultMode, RankingMode
from scriptorium.settings.schema import Key
from scriptorium.sources.base import SourceFactory
from scriptorium.text.quoting import clipped

ENTRY_POINT_GROUP = "scriptorium"
hookimpl = pluggy.HookimplMarker("scriptorium")


@dataclass
class Registry:
    """Everything the loaded plugins contributed."""

    source_kinds: dict[str, SourceFactory] = field(default_factory=dict)
    # The kind-specific [[sources]] keys each kind declares; None: the kind declares none, so
    # its keys are not checked (a plugin written before kinds could declare them).
    source_settings: dict[str, tuple[Key, ...] | None] = field(default_factory=dict)
    modes: dict[str, RankingMode] = field(default_factory=dict)
    extractors: list[BlockExtractor] = field(default_factory=list)
    # scriptorium_rerank of each plugin implementing it, by plugin name (``[ranking] reranker``
    # selects one).
    rerankers: dict[str, Callable[..., Any]] = field(default_factory=dict)
    # scriptorium_embedder (first result wins): a plugin's encoder for the semantic retriever.
    embedder: Callable[..., Any] | None = None

    @property
    def extractor_chain(self) -> ExtractorChain:
        return ExtractorChain(self.extractors)

    def mode(self, name: str) -> RankingMode:
        try:
            return self.modes[name or "default"]
        except KeyError:
            known = ", ".join(sorted(self.modes))
            message = f"unknown ranking mode {clipped(name)}; known modes: {known}"
            raise PluginError(message) from None

    def source_factory(self, kind: str) -> SourceFactory:
        try:
            return self.source_kinds[kind]
        except KeyError:
            known = ", ".join(sorted(self.source_kinds)) or "none"
            raise PluginError(f"unknown source kind {kind!r}; known kinds: {known}") from None


def build_plugin_manager(*, load_entry_points: bool = True) -> pluggy.PluginManager:
    """A plugin manager with our hookspecs and every allowed entry-point plugin registered."""
    pm = pluggy.PluginManager("scriptorium")
    pm.add_hookspecs(hookspecs)
    if load_entry_points:
        allowed = os.environ.get("SCRIPTORIUM_PLUGINS")
        allow = {n.strip() for n in allowed.split(",") if n.strip()} if allowed else None
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if allow is not None and ep.name not in allow:
                continue
            if pm.get_plugin(ep.name) is not None:
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # a broken plugin must say which one it was
                raise PluginError(f"plugin {ep.name!r} ({ep.value}) failed to load: {exc}") from exc
            pm.register(plugin, name=ep.name)
    # A misspelled hook implementation fails at start-up, not silently.
    pm.check_pending()
    return pm


def collect(pm: pluggy.PluginManager) -> Registry:
    """Call every registration hook and gather the results, refusing duplicates."""
    registry = Registry()
    registry.modes["default"] = DefaultMode()

    def register_kind(
        name: str, factory: SourceFactory, settings: Sequence[Key] | None = None
    ) -> None:
        if name in registry.source_kinds:
            raise PluginError(f"source kind {name!r} is registered twice")
        if settings is None:
            settings = getattr(factory, "settings", None)
        if settings is not None and not all(isinstance(k, Key) for k in settings):
            raise PluginError(f"source kind {name!r}: settings must be scriptorium.plugin.Key")
        registry.source_kinds[name] = factory
        registry.source_settings[name] = tuple(settings) if settings is not None else None

    def register_mode(mode: RankingMode) -> None:
        if not isinstance(mode, RankingMode):
            raise PluginError(f"{mode!r} does not implement RankingMode")
        if mode.name in registry.modes:
            raise PluginError(f"ranking mode {mode.name!r} is registered twice")
        registry.modes[mode.name] = mode

    def register_extractor(extractor: BlockExtractor) -> None:
        if not isinstance(extractor, BlockExtractor):
            raise PluginError(f"{extractor!r} does not implement BlockExtractor")
        registry.extractors.append(extractor)

    pm.hook.scriptorium_register_source_kinds(register=register_kind)
    pm.hook.scriptorium_register_ranking_modes(register=register_mode)
    pm.hook.scriptorium_register_block_extractors(register=register_extractor)
    registry.rerankers = rerank_callers(pm)
    registry.embedder = pm.hook.scriptorium_embedder
    return registry


def rerank_callers(pm: pluggy.PluginManager) -> dict[str, Callable[..., Any]]:
    """Each plugin's ``scriptorium_rerank`` alone, so the one configured is the one called."""
    names = {impl.plugin_name for impl in pm.hook.scriptorium_rerank.get_hookimpls()}
    plugins = dict(pm.list_name_plugin())
    return {
        name: pm.subset_hook_caller(
            "scriptorium_rerank",
            remove_plugins=[p for other, p in plugins.items() if other != name],
        )
        for name in sorted(names)
    }


def load_registry() -> Registry:
    return collect(build_plugin_manager())
