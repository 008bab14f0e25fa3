"""Scriptorium: a retrieval daemon for documentation and source code.

The package's face is small on purpose: ``import scriptorium.client`` must not load the
server (pluggy, pathspec, tantivy), so ``hookimpl`` is resolved only when asked for. Plugins
import it, and everything else they may count on, from ``scriptorium.plugin`` (internals some
plugins borrow, with no promise, are in ``scriptorium.plugin.unstable``).
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "hookimpl"]


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        from scriptorium.plugins import hookimpl

        return hookimpl
    raise AttributeError(f"module 'scriptorium' has no attribute {name!r}")
