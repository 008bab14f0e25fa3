"""Local trees of plain-text pages (``kind = "text"``): ``*.txt`` files as documentation.

A kind of its own rather than a default of the ``markdown`` kind: a repository's ``.txt``
files are mostly requirements, licences and data, never pages, so only a source that says its
tree is text reads them.
"""

from __future__ import annotations

from dataclasses import replace

from scriptorium.plugin import Corpus, Key, LocalTreeSource, SourceDocument
from scriptorium_plugins.plaintext.extractor import (
    DEFAULT_BLOCK_CHARS,
    PlainTextExtractor,
    cut_text,
)

INCLUDE = ("*.txt",)
MIN_BLOCK_CHARS = 200


class TextSource(LocalTreeSource):
    """A directory of plain-text pages, cut into paragraph blocks of at most ``block_chars``."""

    kind = "text"
    corpus = Corpus.DOCS
    include = INCLUDE
    settings = (
        *LocalTreeSource.keys_including(INCLUDE),
        Key(
            "block_chars",
            "integer",
            DEFAULT_BLOCK_CHARS,
            "most characters of one block of a text page (whole paragraphs up to this size)",
            minimum=MIN_BLOCK_CHARS,
        ),
    )
    respect_gitignore = True

    def __init__(self, config, context) -> None:
        super().__init__(config, context)
        self.block_chars = int(config.options.get("block_chars", DEFAULT_BLOCK_CHARS))

    def document_from_text(self, relpath: str, text: str) -> SourceDocument | None:
        extractor = self.context.extractors.for_path(relpath, self.corpus)
        doc = super().document_from_text(relpath, text)
        if doc is None or not isinstance(extractor, PlainTextExtractor):
            return doc
        if self.block_chars == DEFAULT_BLOCK_CHARS:
            return doc
        return replace(doc, blocks=cut_text(relpath, text, self.block_chars).blocks)

    def page_location(self, path: str) -> str:
        """``library/os.txt`` → ``library/os``; ``library/index.txt`` → ``library``."""
        if path.lower().endswith(".txt"):
            path = path[:-4]
        head, _, leaf = path.rpartition("/")
        if head and leaf == "index":
            return head
        return path
