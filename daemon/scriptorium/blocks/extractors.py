"""The block-extractor seam: how a document's text is cut into retrievable blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from scriptorium.domain.model import Block, Corpus, DocMeta


@dataclass(frozen=True, slots=True)
class Extraction:
    """What an extractor makes of one document."""

    blocks: tuple[Block, ...]
    meta: DocMeta = field(default_factory=DocMeta)
    language: str | None = None
    front_matter_lines: int = 0
    # The blocks' bodies are what a reader sees (markup removed, as the reST extractor makes
    # them): previews are cut from them instead of from the source lines.
    preview_from_body: bool = False
    # The document's text as served and cut, when it is not the file's own: a notebook's cells
    # rendered from its JSON. Blocks' lines point into this text; None keeps the file's.
    text: str | None = None


@runtime_checkable
class BlockExtractor(Protocol):
    """Cuts documents into blocks. Registered through ``scriptorium_register_block_extractors``."""

    name: str
    # Stored in every index generation: changing it forces affected documents to be re-cut.
    version: str
    # Lower runs first; the first extractor that accepts a document wins.
    priority: int

    def accepts(self, path: str, corpus: Corpus) -> bool:
        """Whether this extractor handles the file at ``path`` in the given corpus."""
        ...

    def extract(self, path: str, text: str) -> Extraction:
        """Cut ``text`` (the file at ``path``) into blocks. Must not raise on messy input."""
        ...


class ExtractorChain:
    """The registered extractors in priority order."""

    def __init__(self, extractors: list[BlockExtractor]) -> None:
        self._extractors = sorted(extractors, key=lambda e: (e.priority, e.name))

    def __iter__(self):
        return iter(self._extractors)

    def for_path(self, path: str, corpus: Corpus) -> BlockExtractor | None:
        for extractor in self._extractors:
            if extractor.accepts(path, corpus):
                return extractor
        return None

    @property
    def fingerprint(self) -> str:
        """A stable summary of extractor names and versions, stored with every generation."""
        return ",".join(f"{e.name}={e.version}" for e in self._extractors)
