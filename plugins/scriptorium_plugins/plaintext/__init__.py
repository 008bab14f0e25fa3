"""The built-in plain-text plugin: the ``text`` source kind and its block extractor.

Plain-text pages (a ``.txt`` tree such as DevDocs' plain export) have no headings; their
paragraphs are grouped into blocks of a bounded size so a long page is many blocks.
"""

from __future__ import annotations

from collections.abc import Callable

from scriptorium.plugin import BlockExtractor, SourceFactory, hookimpl
from scriptorium_plugins.plaintext.extractor import PlainTextExtractor
from scriptorium_plugins.plaintext.source import TextSource

__all__ = ["PlainTextExtractor", "TextSource"]


@hookimpl
def scriptorium_register_source_kinds(register: Callable[[str, SourceFactory], None]) -> None:
    register("text", TextSource)


@hookimpl
def scriptorium_register_block_extractors(register: Callable[[BlockExtractor], None]) -> None:
    register(PlainTextExtractor())
