"""The HTTP listen address and Host names: checked when the settings are read, so a typo is one
sentence."""

from __future__ import annotations

from scriptorium.settings.schema import ConfigError


def http_listen(value: str, key: str) -> str:
    """A ``host:port`` with a numeric port (0 picks a free one); unix sockets are gRPC's alone."""
    value = value.strip()
    host, sep, port = value.rpartition(":")
    if not sep or not host.strip("[]") or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"{key} must be a 'host:port' address, got {value!r}")
    return value


def allowed_hosts(values: list[str], key: str) -> list[str]:
    """Host names as a Host header carries them (``name``, ``name:port``, ``[v6]``, ``*``)."""
    out = []
    for value in values:
        name = value.strip().lower()
        if not name or any(ch.isspace() or ch in "/@?#," for ch in name):
            raise ConfigError(
                f"{key} entries must be host names such as 'docs.internal' or "
                f"'docs.internal:8443', got {value!r}"
            )
        out.append(name)
    return out
