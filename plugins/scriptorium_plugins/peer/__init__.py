"""The ``peer`` source kind: another Scriptorium daemon reached over gRPC.

The source's module is imported when a ``peer`` source is configured, not when the plugin
registers, so daemons without peers do not pay for it at start-up.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import ORDER_KEY, Key, deferred_factory, hookimpl

# Declared here so that checking a configuration does not import the source's module.
SETTINGS: tuple[Key, ...] = (
    Key("target", "string", None, "host:port of the peer daemon"),
    Key("token", "string", None, "bearer token the peer expects"),
    Key("tls_ca", "string", None, "CA certificate (PEM) of a TLS peer"),
    Key("timeout_seconds", "number", 5.0, "deadline of one call to the peer"),
    Key("retry_cooldown_seconds", "number", 300.0, "pause after the peer failed", minimum=0),
    ORDER_KEY,
)


@hookimpl
def scriptorium_register_source_kinds(register: Callable[..., None]) -> None:
    register(
        "peer", deferred_factory("scriptorium_plugins.peer.source", "PeerSource"), settings=SETTINGS
    )
