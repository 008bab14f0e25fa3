"""The ``peer`` source kind: another Scriptorium daemon reached over gRPC."""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugins import hookimpl
from scriptorium.sources import SourceFactory
from scriptorium_plugins.peer.source import PeerSource

__all__ = ["PeerSource"]


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("peer", PeerSource)
