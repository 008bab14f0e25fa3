"""The ``peer`` source kind: another Scriptorium daemon reached over gRPC.

The source's module is imported when a ``peer`` source is configured, not when the plugin
registers, so daemons without peers do not pay for it at start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scriptorium.plugins import hookimpl
from scriptorium.sources import SourceConfig, SourceContext, SourceFactory

if TYPE_CHECKING:
    from scriptorium_plugins.peer.source import PeerSource

__all__ = ["PeerSource", "make_source"]


def make_source(config: SourceConfig, context: SourceContext) -> PeerSource:
    from scriptorium_plugins.peer.source import PeerSource

    return PeerSource(config, context)


def __getattr__(name: str):
    if name == "PeerSource":
        from scriptorium_plugins.peer.source import PeerSource

        return PeerSource
    raise AttributeError(name)


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("peer", make_source)
