"""Plain BM25 baselines, built in-process over the same documents the daemon indexes.

The documents come from the daemon's own source classes and block extractors (through the
plugin registry), and the tokens from the daemon's tokenizer with the daemon's default options,
so a baseline differs from the daemon only in ranking: whole-file BM25 over title + body, and
block BM25 over the body, heading and path fields of the very blocks the daemon indexes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import tantivy

from scriptorium.index.fields import block_tokens
from scriptorium.model import Block, RefKind, SourceDocument
from scriptorium.ranking.pipeline import RankingSettings
from scriptorium.sources import Source
from scriptorium.text.tokenize import tokenize

WHOLE_FILE = "bm25-file"
BLOCK = "bm25-block"
# Index writer memory; tantivy needs at least 15 MB per thread.
_WRITER_HEAP = 64_000_000
_ID = "id"


def token_options() -> dict[str, bool]:
    """The tokenizer options the daemon indexes and queries with by default."""
    return RankingSettings().token_options()


def query_tokens(text: str) -> list[str]:
    """Distinct query tokens with the daemon's options; not capped at the daemon's term limit,
    which is a choice of its ranking rather than part of a plain baseline."""
    options = token_options()
    tokens = tokenize(text, **options)
    if not tokens:
        tokens = tokenize(text, **{**options, "drop_stopwords": False})
    return list(dict.fromkeys(tokens))


@dataclass(frozen=True, slots=True)
class Hit:
    """One baseline result: which document (and block) and where it points."""

    source: str
    path: str  # source-relative path
    doc: SourceDocument | None = None
    block: Block | None = None
    score: float = 0.0


@dataclass
class _Entry:
    source: str
    doc: SourceDocument
    block: Block | None


@dataclass
class Bm25Index:
    """An in-memory tantivy index over whole documents or blocks, with plain (unboosted) BM25."""

    fields: tuple[str, ...]
    _entries: list[_Entry] = field(default_factory=list)
    _index: tantivy.Index | None = None
    _schema: tantivy.Schema | None = None

    def build(self, rows: Iterable[tuple[_Entry, Sequence[str]]]) -> None:
        builder = tantivy.SchemaBuilder()
        for name in self.fields:
            builder.add_text_field(name, stored=False, tokenizer_name="whitespace")
        builder.add_unsigned_field(_ID, stored=True, indexed=False)
        self._schema = builder.build()
        self._index = tantivy.Index(self._schema)
        writer = self._index.writer(_WRITER_HEAP, 1)
        for entry, texts in rows:
            values = {name: text for name, text in zip(self.fields, texts, strict=True)}
            writer.add_document(tantivy.Document(**values, id=len(self._entries)))
            self._entries.append(entry)
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()

    def search(self, terms: Sequence[str], limit: int, corpora: frozenset[str]) -> list[Hit]:
        """The best ``limit`` entries for the OR of ``terms`` over every field."""
        if self._index is None or self._schema is None or not terms or not self._entries:
            return []
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, name, term))
            for term in terms
            for name in self.fields
        ]
        query = tantivy.Query.boolean_query(clauses)
        searcher = self._index.searcher()
        # Over-fetch when a corpus filter applies: the filter runs here, after ranking.
        depth = limit if not corpora else min(len(self._entries), limit * 8)
        hits = []
        for score, address in searcher.search(query, depth).hits:
            entry = self._entries[int(searcher.doc(address)[_ID][0])]
            if corpora and entry.doc.corpus.value not in corpora:
                continue
            hits.append(Hit(entry.source, entry.doc.path, entry.doc, entry.block, float(score)))
            if len(hits) == limit:
                break
        return hits


def whole_file_index(documents: Sequence[tuple[Source, SourceDocument]]) -> Bm25Index:
    """Whole-file BM25: a title field (page location and title) and the full text as body."""
    options = token_options()
    index = Bm25Index(fields=("title", "body"))

    def rows() -> Iterable[tuple[_Entry, Sequence[str]]]:
        for source, doc in documents:
            title = f"{source.page_location(doc.path)} {doc.meta.title or ''}"
            yield (
                _Entry(source.name, doc, None),
                (" ".join(tokenize(title, **options)), " ".join(tokenize(doc.text, **options))),
            )

    index.build(rows())
    return index


def block_index(documents: Sequence[tuple[Source, SourceDocument]]) -> Bm25Index:
    """Block BM25: every block the daemon's extractors cut, with the daemon's field tokens."""
    options = token_options()
    index = Bm25Index(fields=("body", "heading", "path"))

    def rows() -> Iterable[tuple[_Entry, Sequence[str]]]:
        for source, doc in documents:
            page = source.page_location(doc.path)
            for block in doc.blocks:
                yield _Entry(source.name, doc, block), block_tokens(doc, block, page, options)

    index.build(rows())
    return index


def definition(block: Block | None) -> str | None:
    """The qualified name a code block defines (``Class.method``), None for other blocks."""
    if block is None or block.kind is not RefKind.CODE or not block.symbol:
        return None
    return ".".join(block.section_path) or block.symbol
