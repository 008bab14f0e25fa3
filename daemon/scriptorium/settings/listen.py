"""The HTTP listen address: checked when the settings are read, so a typo is one sentence."""

from __future__ import annotations

from scriptorium.settings.schema import ConfigError


def http_listen(value: str, key: str) -> str:
    """A ``host:port`` with a numeric port (0 picks a free one); unix sockets are gRPC's alone."""
    value = value.strip()
    host, sep, port = value.rpartition(":")
    if not sep or not host.strip("[]") or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"{key} must be a 'host:port' address, got {value!r}")
    return value
