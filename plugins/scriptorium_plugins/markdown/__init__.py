"""The built-in Markdown plugin: the ``markdown`` source kind and the Markdown block extractor."""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import BlockExtractor, SourceFactory, hookimpl
from scriptorium_plugins.markdown.extractor import MarkdownExtractor
from scriptorium_plugins.markdown.source import MarkdownSource

__all__ = ["MarkdownExtractor", "MarkdownSource"]


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("markdown", MarkdownSource)


@hookimpl
def scriptorium_register_block_extractors(register: Callable[[BlockExtractor], None]) -> None:
    register(MarkdownExtractor())
