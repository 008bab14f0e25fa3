"""The built-in reStructuredText plugin: a block extractor for ``.rst`` files in doc trees.

The ``markdown`` source kind lists ``.rst`` files beside Markdown ones; this extractor cuts them.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import BlockExtractor, hookimpl
from scriptorium_plugins.rst.extractor import RstExtractor

__all__ = ["RstExtractor"]


@hookimpl
def scriptorium_register_block_extractors(register: Callable[[BlockExtractor], None]) -> None:
    register(RstExtractor())
