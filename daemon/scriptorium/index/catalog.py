"""One generation served: the open tantivy index plus the metadata of every document and block.

Texts are not held here: a document's text, bodies and lines are read through the snapshot's
``TextCache`` (see ``index/texts.py``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import tantivy

from scriptorium.domain.model import Corpus, SourceDocument
from scriptorium.index.addresses import BlockAddresses
from scriptorium.index.blocktable import BlockTable, CorruptBlockTableError
from scriptorium.index.doctable import DocTable
from scriptorium.index.generation import GenerationStore, Manifest, SourceEntry, block_id
from scriptorium.index.guard import GuardedSearcher
from scriptorium.index.pack import document_record, from_record, stored
from scriptorium.index.store import CorruptBlobError, blob_name
from scriptorium.index.suffixes import PathSuffixes
from scriptorium.index.texts import DEFAULT_CACHE_BYTES, StoredDocument, TextCache
from scriptorium.text.markdown import includes_in

MEMO_LIMIT = 65_536
# Prepared preview texts are at most ~8,000 characters each: this bounds them to a few MB.
TEXT_LIMIT = 1_024
# A search asks a matcher of each corpus's pool and of the blocks only the meaning found.
MATCHER_LIMIT = 8
# One table of block addresses is made at a time (a search and the vector thread may ask).
_ADDRESSES_LOCK = threading.Lock()


@dataclass(slots=True, weakref_slot=True)
class Snapshot:
    """An immutable view the engine serves; swapped whole when a new generation lands."""

    manifest: Manifest
    index: tantivy.Index
    # Every call into tantivy goes through the guard: a panic or a read error underneath
    # becomes ``DamagedIndex`` (``index/guard.py``).
    searcher: GuardedSearcher
    docs: DocTable
    blocks: BlockTable
    # Values derived from blocks at request time (locations, ref ids, URLs in ``memo``; texts
    # prepared for previews in ``texts``). They depend only on the block and the source
    # configuration, so they live as long as this generation.
    memo: dict[tuple, object] = field(default_factory=dict)
    texts: dict[tuple, object] = field(default_factory=dict)
    # The last few queries' scoring parts (``index/queries.py``, ``matcher_of``).
    matchers: dict[tuple, object] = field(default_factory=dict)
    suffixes: PathSuffixes | None = None
    # Block id -> index address, for blocks found by another route than the index (made on
    # first use; ``index/addresses.py``).
    addresses: BlockAddresses | None = None
    # Texts, bodies and line tables of the documents, read on demand (bounded in bytes).
    cache: TextCache | None = None

    def files_ending(self, suffix: str, limit: int | None = None) -> list[tuple[str, str]]:
        """The (source, path) of the documents whose path ends with the lower-cased path
        segments ``suffix`` (``core/variable.py``), at most ``limit`` of them; the sorted
        table is built on first use."""
        table = self.suffixes
        docs = self.docs
        if table is None:
            table = PathSuffixes(len(docs), lambda at: docs.key_at(at)[1])
            self.suffixes = table
        return [docs.key_at(at) for at in table.positions(suffix, limit)]

    def block_addresses(self) -> BlockAddresses:
        """This generation's :class:`BlockAddresses` (made on first use, once)."""
        table = self.addresses
        if table is None:
            with _ADDRESSES_LOCK:
                table = self.addresses
                if table is None:
                    table = BlockAddresses(self.searcher, self.index.schema)
                    self.addresses = table
        return table

    @property
    def generation(self) -> int:
        return self.manifest.generation

    def remember(self, key: tuple, value: object) -> None:
        """Keep a small ``value``; the table is emptied whole when it reaches its cap.

        Emptying rather than evicting one by one keeps every operation a single dict step,
        safe without a lock for the request threads that share a snapshot.
        """
        self.memo = _kept(self.memo, MEMO_LIMIT, key, value)

    def remember_matcher(self, key: tuple, value: object) -> None:
        """Like ``remember`` for a query's scoring part: hundreds of term queries for a
        pasted text, so only the last few are kept."""
        self.matchers = _kept(self.matchers, MATCHER_LIMIT, key, value)

    def remember_text(self, key: tuple, value: object) -> None:
        """Like ``remember`` for values holding up to a few thousand characters."""
        self.texts = _kept(self.texts, TEXT_LIMIT, key, value)

    @classmethod
    def load(
        cls,
        store: GenerationStore,
        manifest: Manifest,
        previous: Snapshot | None = None,
        fresh: Iterable[SourceDocument] = (),
        removed: Iterable[tuple[str, str]] | None = None,
        cache: TextCache | None = None,
    ) -> Snapshot:
        """Open a verified generation, reusing what is already in memory.

        Documents the previous snapshot holds, or that were just written to this generation
        (``fresh``), are not read back; and the block table starts from the previous one, so
        an update costs in proportion to what changed. When the caller also says what this
        generation ``removed`` relative to ``previous`` (its parent), only those documents are
        looked at. Otherwise the generation's document pack is decoded (one file, one call);
        a generation written without a pack is read blob by blob.
        """
        if cache is None:
            cache = previous.cache if previous is not None and previous.cache else None
        if cache is None:
            cache = TextCache(store.blobs.texts, DEFAULT_CACHE_BYTES)
        added = [served(doc, manifest, cache) for doc in fresh]
        if previous is not None and removed is not None and manifest.parent == previous.generation:
            docs, blocks = next_tables(
                manifest.sources, previous.docs, previous.blocks, added, list(removed)
            )
        else:
            with _no_collection(frozen_after=previous is None):
                docs, blocks = _full_tables(store, manifest, previous, added, cache)
        return cls.assemble(store, manifest, docs, blocks, cache)

    @classmethod
    def assemble(
        cls,
        store: GenerationStore,
        manifest: Manifest,
        docs: DocTable,
        blocks: BlockTable,
        cache: TextCache,
    ) -> Snapshot:
        """The snapshot of a written generation whose tables are already made."""
        index = store.open_index(manifest.generation)
        searcher = GuardedSearcher(index.searcher(), manifest.generation)
        return cls(manifest, index, searcher, docs, blocks, cache=cache)


def _kept(table: dict[tuple, object], limit: int, key: tuple, value: object) -> dict:
    """``table`` with ``key`` set, or a new table holding only it once ``table`` reached
    ``limit``: the caller assigns what this returns (one step a reader may see either way)."""
    if len(table) >= limit:
        table = {}
    table[key] = value
    return table


def served(doc: SourceDocument, manifest: Manifest, cache: TextCache) -> StoredDocument:
    """The served form of a document a generation was just written with."""
    if isinstance(doc, StoredDocument):
        return doc
    blob = manifest.sources[doc.source].files[doc.path].blob
    return stored(doc, blob, cache, document_includes(doc), document_bids(doc))


def written(
    doc: SourceDocument, fingerprint: str, cache: TextCache, prime: bool = True
) -> StoredDocument:
    """The served form of a document a write is adding, its blob named as the write names it
    (``blob_name`` under the index's ``fingerprint``)."""
    return stored(
        doc,
        blob_name(doc, fingerprint),
        cache,
        document_includes(doc),
        document_bids(doc),
        prime,
    )


def document_includes(doc: SourceDocument) -> tuple[str, ...]:
    """What a page includes (its code examples), kept so no table reads every page's text."""
    return tuple(includes_in(doc.text)) if doc.corpus is Corpus.DOCS else ()


def document_bids(doc: SourceDocument) -> tuple[int, ...]:
    return tuple(
        block_id(doc.source, doc.path, doc.content_hash, i) for i in range(len(doc.blocks))
    )


def _full_tables(
    store: GenerationStore,
    manifest: Manifest,
    previous: Snapshot | None,
    added: list[StoredDocument],
    cache: TextCache,
) -> tuple[DocTable, BlockTable]:
    """Every document of a generation: from its pack (decoded on first use), else the
    previous snapshot and blobs."""
    records = store.read_pack(manifest.generation)
    if records is not None:
        if len(records.keys) != manifest.document_count:
            raise CorruptBlobError("the document pack does not match the manifest")
        docs = DocTable.opened(records, cache)
        table = store.read_block_table(manifest.generation)
        if table is None:  # written before generations stored their block table
            return docs, BlockTable.of(docs.positions)
        try:
            return docs, BlockTable.decode(table, docs.positions)
        except CorruptBlockTableError as exc:
            raise CorruptBlobError(f"generation {manifest.generation}: {exc}") from None
    reuse = previous.docs if previous else {}
    written = {(doc.source, doc.path): doc for doc in added}
    made: list[StoredDocument] = []
    for source_name, source in manifest.sources.items():
        for path, entry in source.files.items():
            key = (source_name, path)
            doc = written.get(key) or reuse.get(key)
            if doc is None or doc.content_hash != entry.hash:
                cut = store.blobs.get(entry.blob, source_name)
                doc = from_record(
                    document_record(cut, entry.blob, document_includes(cut), document_bids(cut)),
                    cache,
                )
            made.append(doc)
    docs = DocTable.of(made)
    return docs, BlockTable.of(docs.positions)


def next_tables(
    sources: dict[str, SourceEntry],
    parent_docs: DocTable | None,
    parent_blocks: BlockTable | None,
    added: list[StoredDocument],
    removed: list[tuple[str, str]],
) -> tuple[DocTable, BlockTable]:
    """The parent's documents and blocks with one generation's change applied.

    The document table keeps the manifest's order (the order a full load gives): replaced
    documents keep their place, and only when a path is new is the table put back in order.
    The documents the parent served and this change keeps are not decoded. Made before the
    generation is written: its document pack is these documents' records, its block table
    this table.
    """

    def order() -> list[tuple[str, str]]:
        return [(name, path) for name, source in sources.items() for path in source.files]

    if parent_docs is None:
        by_key = {(doc.source, doc.path): doc for doc in added}
        docs = DocTable.of([by_key[key] for key in order()])
        return docs, BlockTable.of(docs.positions)
    docs, remap, gone, came = parent_docs.changed(added, removed, order)
    if parent_blocks is None:
        return docs, BlockTable.of(docs.positions)
    return docs, parent_blocks.spliced(docs.positions, remap, gone, came)


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
