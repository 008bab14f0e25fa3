"""Scriptorium: a retrieval daemon for documentation and source code."""

from scriptorium.plugins import hookimpl

__version__ = "0.1.0"
__all__ = ["__version__", "hookimpl"]
