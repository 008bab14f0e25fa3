"""The code plugin: the ``code`` source kind and the tree-sitter block extractor."""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import BlockExtractor, SourceFactory, hookimpl
from scriptorium_plugins.code.extractor import CodeExtractor
from scriptorium_plugins.code.source import CodeSource

__all__ = ["CodeExtractor", "CodeSource"]


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register(CodeSource.kind, CodeSource)


@hookimpl
def scriptorium_register_block_extractors(register: Callable[[BlockExtractor], None]) -> None:
    register(CodeExtractor())
