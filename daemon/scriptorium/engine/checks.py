"""The configuration checked against the loaded plugins, before anything binds or builds.

Shared by ``serve`` and the index commands: a kind no plugin registered, or a key its plugin
does not declare, is refused with one sentence naming what is known.
"""

from __future__ import annotations

import difflib

from scriptorium.domain.outcomes import PluginError
from scriptorium.plugins import Registry
from scriptorium.settings.config import ConfigError, Settings
from scriptorium.settings.source_tables import check_source_options


def validate_source_kinds(settings: Settings, registry: Registry) -> None:
    """Every configured kind must be registered by a plugin, and each source's kind-specific
    keys must be ones that plugin declares; checked before anything binds."""
    for source in settings.sources:
        try:
            registry.source_factory(source.kind)
        except PluginError:
            known = ", ".join(sorted(registry.source_kinds)) or "none"
            close = difflib.get_close_matches(source.kind, list(registry.source_kinds), n=1)
            hint = f"; known kinds: {known}"
            if close:
                hint = f"; did you mean {close[0]!r}?{hint}"
            raise ConfigError(
                f'[[sources]] "{source.name}": unknown kind {source.kind!r}{hint}'
            ) from None
    check_source_options(settings.sources, registry.source_settings)
