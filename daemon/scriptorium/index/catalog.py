"""One generation in memory: the open tantivy index plus every document and block it holds."""

from __future__ import annotations

from dataclasses import dataclass

import tantivy

from scriptorium.index.generation import GenerationStore, Manifest, block_id
from scriptorium.model import SourceDocument


@dataclass(slots=True)
class Snapshot:
    """An immutable view the engine serves; swapped whole when a new generation lands."""

    manifest: Manifest
    index: tantivy.Index
    searcher: tantivy.Searcher
    docs: dict[tuple[str, str], SourceDocument]
    blocks: dict[int, tuple[SourceDocument, int]]

    @property
    def generation(self) -> int:
        return self.manifest.generation

    @classmethod
    def load(
        cls, store: GenerationStore, manifest: Manifest, previous: Snapshot | None = None
    ) -> Snapshot:
        """Open a verified generation, reusing documents the previous snapshot already holds."""
        index = store.open_index(manifest.generation)
        reuse: dict[tuple[str, str], SourceDocument] = previous.docs if previous else {}
        docs: dict[tuple[str, str], SourceDocument] = {}
        blocks: dict[int, tuple[SourceDocument, int]] = {}
        for source_name, source in manifest.sources.items():
            for path, entry in source.files.items():
                key = (source_name, path)
                doc = reuse.get(key)
                if doc is None or doc.content_hash != entry.hash:
                    doc = store.blobs.get(entry.blob, source_name)
                docs[key] = doc
                for i in range(len(doc.blocks)):
                    blocks[block_id(source_name, path, doc.content_hash, i)] = (doc, i)
        return cls(manifest, index, index.searcher(), docs, blocks)
