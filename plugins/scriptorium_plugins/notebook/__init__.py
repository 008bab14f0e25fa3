"""The built-in Jupyter notebook plugin: a block extractor for ``.ipynb`` files in doc trees.

The ``markdown`` source kind lists notebooks beside Markdown pages; this extractor reads their
JSON with the standard library and cuts them into cells and headings.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import BlockExtractor, hookimpl
from scriptorium_plugins.notebook.extractor import NotebookExtractor

__all__ = ["NotebookExtractor"]


@hookimpl
def scriptorium_register_block_extractors(register: Callable[[BlockExtractor], None]) -> None:
    register(NotebookExtractor())
