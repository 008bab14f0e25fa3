"""One generation in memory: the open tantivy index plus every document and block it holds."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import tantivy

from scriptorium.domain.model import SourceDocument
from scriptorium.index.generation import GenerationStore, Manifest, block_id

MEMO_LIMIT = 65_536
# Prepared preview texts are at most ~8,000 characters each: this bounds them to a few MB.
TEXT_LIMIT = 1_024


@dataclass(slots=True)
class Snapshot:
    """An immutable view the engine serves; swapped whole when a new generation lands."""

    manifest: Manifest
    index: tantivy.Index
    searcher: tantivy.Searcher
    docs: dict[tuple[str, str], SourceDocument]
    blocks: dict[int, tuple[SourceDocument, int]]
    # Values derived from blocks at request time (locations, ref ids, URLs in ``memo``; texts
    # prepared for previews in ``texts``). They depend only on the block and the source
    # configuration, so they live as long as this generation.
    memo: dict[tuple, object] = field(default_factory=dict)
    texts: dict[tuple, object] = field(default_factory=dict)
    suffixes: dict[str, list[tuple[str, str]]] | None = None

    def files_ending(self, suffix: str) -> list[tuple[str, str]]:
        """The (source, path) of every document whose path ends with the lower-cased path
        segments ``suffix`` (``core/variable.py``); the table is built on first use."""
        table = self.suffixes
        if table is None:
            table = {}
            for source, path in self.docs:
                parts = path.lower().split("/")
                for i in range(len(parts)):
                    table.setdefault("/".join(parts[i:]), []).append((source, path))
            self.suffixes = table
        return table.get(suffix, [])

    @property
    def generation(self) -> int:
        return self.manifest.generation

    def remember(self, key: tuple, value: object) -> None:
        """Keep a small ``value``; the table is emptied whole when it reaches its cap.

        Emptying rather than evicting one by one keeps every operation a single dict step,
        safe without a lock for the request threads that share a snapshot.
        """
        if len(self.memo) >= MEMO_LIMIT:
            self.memo = {}
        self.memo[key] = value

    def remember_text(self, key: tuple, value: object) -> None:
        """Like ``remember`` for values holding up to a few thousand characters."""
        if len(self.texts) >= TEXT_LIMIT:
            self.texts = {}
        self.texts[key] = value

    @classmethod
    def load(
        cls,
        store: GenerationStore,
        manifest: Manifest,
        previous: Snapshot | None = None,
        fresh: Iterable[SourceDocument] = (),
        removed: Iterable[tuple[str, str]] | None = None,
    ) -> Snapshot:
        """Open a verified generation, reusing what is already in memory.

        Documents the previous snapshot holds, or that were just written to this generation
        (``fresh``), are not read back from their blobs; and the block table starts from the
        previous one, so an update costs in proportion to what changed. When the caller also
        says what this generation ``removed`` relative to ``previous`` (its parent), only
        those documents are looked at: nothing is walked per file of the corpus.
        """
        index = store.open_index(manifest.generation)
        if previous is not None and removed is not None and manifest.parent == previous.generation:
            docs, blocks = _apply_change(manifest, previous, list(fresh), list(removed))
            return cls(manifest, index, index.searcher(), docs, blocks)
        reuse: dict[tuple[str, str], SourceDocument] = previous.docs if previous else {}
        written = {(doc.source, doc.path): doc for doc in fresh}
        docs: dict[tuple[str, str], SourceDocument] = {}
        with _no_collection(frozen_after=previous is None):
            for source_name, source in manifest.sources.items():
                for path, entry in source.files.items():
                    key = (source_name, path)
                    doc = written.get(key) or reuse.get(key)
                    if doc is None or doc.content_hash != entry.hash:
                        doc = store.blobs.get(entry.blob, source_name)
                    docs[key] = doc
            blocks = _block_table(docs, previous)
        return cls(manifest, index, index.searcher(), docs, blocks)


def _apply_change(
    manifest: Manifest,
    previous: Snapshot,
    added: list[SourceDocument],
    removed: list[tuple[str, str]],
) -> tuple[dict[tuple[str, str], SourceDocument], dict[int, tuple[SourceDocument, int]]]:
    """The parent's documents and blocks with one generation's change applied.

    The document table keeps the manifest's order (the order a full load gives): replaced
    documents keep their place, and only when a path is new is the table put back in order.
    """
    docs = dict(previous.docs)
    blocks = dict(previous.blocks)

    def drop_blocks(key: tuple[str, str], old: SourceDocument) -> None:
        for i in range(len(old.blocks)):
            blocks.pop(block_id(key[0], key[1], old.content_hash, i), None)

    in_order = True
    readded = set()
    for doc in added:
        key = (doc.source, doc.path)
        readded.add(key)
        old = docs.get(key)
        if old is None:
            in_order = False
        elif old is not doc:
            drop_blocks(key, old)
        docs[key] = doc
        for i in range(len(doc.blocks)):
            blocks[block_id(doc.source, doc.path, doc.content_hash, i)] = (doc, i)
    for key in removed:
        if key not in readded:
            old = docs.pop(key, None)
            if old is not None:
                drop_blocks(key, old)
    if not in_order:
        docs = {
            (name, path): docs[(name, path)]
            for name, source in manifest.sources.items()
            for path in source.files
        }
    return docs, blocks


def _block_table(
    docs: dict[tuple[str, str], SourceDocument], previous: Snapshot | None
) -> dict[int, tuple[SourceDocument, int]]:
    """Block id -> (document, index), starting from the previous table when there is one."""
    reuse = previous.docs if previous else {}
    blocks: dict[int, tuple[SourceDocument, int]] = dict(previous.blocks) if previous else {}
    for key, old in reuse.items():
        if docs.get(key) is not old:
            for i in range(len(old.blocks)):
                blocks.pop(block_id(key[0], key[1], old.content_hash, i), None)
    for key, doc in docs.items():
        if reuse.get(key) is not doc:
            for i in range(len(doc.blocks)):
                blocks[block_id(key[0], key[1], doc.content_hash, i)] = (doc, i)
    return blocks


@contextmanager
def _no_collection(frozen_after: bool) -> Iterator[None]:
    """Pause the cyclic garbage collector while documents are decoded.

    Loading creates millions of long-lived objects and no garbage; every collection it
    triggers walks the growing heap again, which cost more than the decoding at 10x the
    FastAPI corpus. After a first load the loaded objects are frozen (``gc.freeze``): they
    are still freed by reference counting, but later full collections, which pause searches,
    no longer walk the whole corpus.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if frozen_after:
            gc.freeze()
        if enabled:
            gc.enable()
