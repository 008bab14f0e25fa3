"""The ``peer`` source kind: another Scriptorium daemon reached over gRPC.

The source's module is imported when a ``peer`` source is configured, not when the plugin
registers, so daemons without peers do not pay for it at start-up.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import SourceFactory, deferred_factory, hookimpl


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("peer", deferred_factory("scriptorium_plugins.peer.source", "PeerSource"))
