"""Plain BM25 baselines, built in-process over the same documents the daemon indexes.

The documents come from the daemon's own source classes and block extractors (through the
plugin registry), and the tokens from the daemon's tokenizer with the daemon's default options,
so a baseline differs from the daemon only in ranking: whole-file BM25 over title + body, and
block BM25 over the body, heading and path fields of the very blocks the daemon indexes.

An index can be kept on disk (``Bm25Index.open_or_build``), keyed by everything that shapes it,
so the next run on the same corpus commit does not cut and tokenize the corpus again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import tantivy

from scriptorium.domain.model import Block, RefKind, SourceDocument
from scriptorium.index.fields import block_tokens
from scriptorium.ranking.pipeline import RankingSettings
from scriptorium.sources.base import Source
from scriptorium.text.tokenize import TOKENIZER_VERSION, tokenize

WHOLE_FILE = "bm25-file"
BLOCK = "bm25-block"
# Bumped whenever what a baseline indexes changes: cached indexes are then rebuilt.
BASELINE_VERSION = "1"
# Index writer memory; tantivy needs at least 15 MB per thread.
_WRITER_HEAP = 64_000_000
_ID = "id"
_ENTRIES = "entries.json"

Documents = Sequence[tuple[Source, SourceDocument]]


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
    """One indexed unit (a whole document or one block) and where it points.

    ``location`` is the source's unqualified location of the unit (the page, or the block with
    its anchor), ``definition`` the qualified name a code block defines.
    """

    source: str
    path: str  # source-relative path
    corpus: str
    location: str
    definition: str | None = None


def definition(block: Block | None) -> str | None:
    """The qualified name a code block defines (``Class.method``), None for other blocks."""
    if block is None or block.kind is not RefKind.CODE or not block.symbol:
        return None
    return ".".join(block.section_path) or block.symbol


def cache_key(extractors: str) -> str:
    """Everything that shapes a baseline index besides the corpus itself."""
    parts = [BASELINE_VERSION, TOKENIZER_VERSION, json.dumps(token_options(), sort_keys=True)]
    return hashlib.sha256("\n".join([*parts, extractors]).encode()).hexdigest()[:16]


class Bm25Index:
    """A tantivy index over whole documents or blocks, with plain (unboosted) BM25."""

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.entries: list[Hit] = []
        builder = tantivy.SchemaBuilder()
        for name in fields:
            builder.add_text_field(name, stored=False, tokenizer_name="whitespace")
        builder.add_unsigned_field(_ID, stored=True, indexed=False)
        self._schema = builder.build()
        self._index: tantivy.Index | None = None

    def build(self, rows: Iterable[tuple[Hit, Sequence[str]]], path: Path | None = None) -> None:
        """Index ``rows`` (an entry and its field texts), in memory or into ``path``."""
        self._index = tantivy.Index(self._schema, path=str(path) if path else None, reuse=False)
        writer = self._index.writer(_WRITER_HEAP, 1)
        for entry, texts in rows:
            values = dict(zip(self.fields, texts, strict=True))
            writer.add_document(tantivy.Document(**values, id=len(self.entries)))
            self.entries.append(entry)
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()
        if path is not None:
            (path / _ENTRIES).write_text(json.dumps([asdict(e) for e in self.entries]))

    def open(self, path: Path) -> bool:
        """Open an index kept in ``path``; False when there is none (or it cannot be read)."""
        try:
            entries = json.loads((path / _ENTRIES).read_text())
            self._index = tantivy.Index.open(str(path))
        except (OSError, ValueError):
            return False
        self.entries = [Hit(**e) for e in entries]
        return True

    def open_or_build(self, path: Path, rows: Callable[[], Iterable[tuple[Hit, Sequence[str]]]]):
        """The index kept in ``path``, built there first when it is missing (atomically)."""
        if self.open(path):
            return self
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f"{path.name}-", dir=path.parent))
        try:
            self.build(rows(), partial)
            shutil.rmtree(path, ignore_errors=True)
            partial.rename(path)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        self._index = None
        if not self.open(path):
            raise OSError(f"the baseline index just written to {path} cannot be opened")
        return self

    def search(self, terms: Sequence[str], limit: int, corpora: frozenset[str]) -> list[Hit]:
        """The best ``limit`` entries for the OR of ``terms`` over every field."""
        if self._index is None or not terms or not self.entries:
            return []
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, name, term))
            for term in terms
            for name in self.fields
        ]
        query = tantivy.Query.boolean_query(clauses)
        searcher = self._index.searcher()
        # Over-fetch when a corpus filter applies: the filter runs here, after ranking.
        depth = limit if not corpora else min(len(self.entries), limit * 8)
        hits = []
        for _score, address in searcher.search(query, max(depth, 1)).hits:
            entry = self.entries[int(searcher.doc(address)[_ID][0])]
            if corpora and entry.corpus not in corpora:
                continue
            hits.append(entry)
            if len(hits) == limit:
                break
        return hits


def whole_file_rows(documents: Documents) -> Iterable[tuple[Hit, Sequence[str]]]:
    """Whole-file BM25: a title field (page location and title) and the full text as body."""
    options = token_options()
    for source, doc in documents:
        page = source.page_location(doc.path)
        title = f"{page} {doc.meta.title or ''}"
        yield (
            Hit(source.name, doc.path, doc.corpus.value, page),
            (" ".join(tokenize(title, **options)), " ".join(tokenize(doc.text, **options))),
        )


def block_rows(documents: Documents) -> Iterable[tuple[Hit, Sequence[str]]]:
    """Block BM25: every block the daemon's extractors cut, with the daemon's field tokens."""
    options = token_options()
    for source, doc in documents:
        page = source.page_location(doc.path)
        for block in doc.blocks:
            location = source.block_location(doc, block, None)
            hit = Hit(source.name, doc.path, doc.corpus.value, location, definition(block))
            yield hit, block_tokens(doc, block, page, options)


def whole_file_index(documents: Documents) -> Bm25Index:
    index = Bm25Index(fields=("title", "body"))
    index.build(whole_file_rows(documents))
    return index


def block_index(documents: Documents) -> Bm25Index:
    index = Bm25Index(fields=("body", "heading", "path"))
    index.build(block_rows(documents))
    return index


def cached_indexes(folder: Path, documents: Callable[[], Documents]) -> tuple[Bm25Index, Bm25Index]:
    """Both baselines kept under ``folder``; ``documents`` is called only if one must be built."""
    loaded: list[Documents] = []

    def docs() -> Documents:
        if not loaded:
            loaded.append(documents())
        return loaded[0]

    whole = Bm25Index(fields=("title", "body")).open_or_build(
        folder / "file", lambda: whole_file_rows(docs())
    )
    blocks = Bm25Index(fields=("body", "heading", "path")).open_or_build(
        folder / "block", lambda: block_rows(docs())
    )
    return whole, blocks
