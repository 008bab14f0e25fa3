"""The configured sources: built once from the settings and the plugin registry.

Locally indexed sources and remote ones (which answer at request time) are kept apart; every
service that needs to know a source by name asks the catalog.
"""

from __future__ import annotations

from typing import Any, Protocol

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.settings.schema import ConfigError
from scriptorium.sources.base import Source, SourceContext, SourceFactory
from scriptorium.sources.remote import RemoteSource


class SourceKinds(Protocol):
    """What the catalog needs of the plugin ``Registry``: the extractors and each kind's factory
    (``PluginError`` for a kind no plugin registered)."""

    @property
    def extractor_chain(self) -> ExtractorChain: ...

    def source_factory(self, kind: str) -> SourceFactory: ...


class SourceCatalog:
    """Every configured source, local and remote, by name and in configuration order."""

    def __init__(self, settings: Any, registry: SourceKinds) -> None:
        context = SourceContext(extractors=registry.extractor_chain)
        self.local: list[Source] = []
        self.remote: list[RemoteSource] = []
        for config in settings.sources:
            factory = registry.source_factory(config.kind)
            try:
                source = factory(config, context)
            except ConfigError:
                raise
            except ValueError as exc:  # a plugin refusing its settings: say so, no traceback
                raise ConfigError(str(exc)) from exc
            if isinstance(source, RemoteSource):
                self.remote.append(source)
            else:
                self.local.append(source)
        self.by_name: dict[str, Source] = {s.name: s for s in self.local}
        self.remote_by_name: dict[str, RemoteSource] = {s.name: s for s in self.remote}

    def knows(self, name: str) -> bool:
        return name in self.by_name or name in self.remote_by_name

    def names(self) -> list[str]:
        """Every source name, local then remote (for "known sources" messages)."""
        return [*self.by_name, *self.remote_by_name]

    def source_class(self, name: str) -> str:
        """The source's class for the class-weight prior ("product" for an unknown one)."""
        source = self.by_name.get(name) or self.remote_by_name.get(name)
        return source.source_class if source else "product"
