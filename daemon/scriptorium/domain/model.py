"""The domain model: documents, blocks, refs, candidates and results.

Everything between the sources and the gRPC servicer speaks these types; the servicer alone
translates them to and from protobuf messages.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scriptorium.text.features import BlockFeatures


def pickled_as_call(obj: Any) -> tuple:
    """How the build's frozen records are pickled: a call of their class with their fields.

    The default for a frozen, slotted dataclass asks ``dataclasses.fields`` again for every
    object it unpickles; with one record per block and page, that was a tenth of the
    building thread's time when the build helpers sent back 38,430 small pages.
    """
    return (type(obj), tuple(map(obj.__getattribute__, obj.__match_args__)))


class Corpus(enum.StrEnum):
    """Which corpus a source feeds: documentation or code."""

    DOCS = "docs"
    CODE = "code"


class RefKind(enum.StrEnum):
    """What a reference points at."""

    DOC = "doc"  # a heading block of a Markdown document or page
    CODE = "code"  # a line anchor inside a source file
    FILE = "file"  # a whole file


class SourceClass(enum.StrEnum):
    """How authoritative a source is; weights are applied by the ranking pipeline."""

    PRODUCT = "product"
    REFERENCE = "reference"
    LEDGER = "ledger"
    ARCHIVE = "archive"


@dataclass(frozen=True, slots=True)
class DocMeta:
    """Document-level metadata, mostly from YAML front matter."""

    title: str | None = None
    boost: float = 1.0
    superseded_by: str | None = None
    effective_from: datetime | None = None
    effective_to: datetime | None = None
    moved_from: tuple[str, ...] = ()
    source_class: str | None = None
    # Documents declaring the same canonical key describe the same thing; when two currently
    # effective ones disagree, search reports a conflict.
    canonical_key: str | None = None
    # 1.0 for clean input; lower when front matter was broken or the text was converted.
    parse_confidence: float = 1.0

    __reduce__ = pickled_as_call


@dataclass(frozen=True, slots=True)
class Block:
    """One retrievable unit of a document: a heading block or a code definition.

    Lines are 1-based and inclusive. ``start_line``..``end_line`` is the block's full extent (a
    heading block runs to the next heading of the same or higher level, so it contains nested
    headings). ``body`` is the text *indexed* for the block: its own text, without nested
    blocks that are indexed on their own, so nothing is counted twice.
    """

    kind: RefKind
    start_line: int
    end_line: int
    title: str
    # Heading breadcrumb (docs) or enclosing definitions (code), outermost first.
    section_path: tuple[str, ...]
    # The anchor inside the document: a heading slug (docs) or a symbol name (code); "" for the
    # preamble before the first heading or a file-level block.
    anchor: str
    body: str
    level: int = 0  # heading level (1..6) for docs, nesting depth for code
    symbol: str | None = None  # definition name for code blocks
    symbol_kind: str | None = None  # function, class, method, ... for code blocks
    # Other anchors that name the same block (a reST label before its section); a location's
    # fragment may use any of them, results use ``anchor``.
    aliases: tuple[str, ...] = ()

    __reduce__ = pickled_as_call

    @property
    def fragment(self) -> str:
        """The location fragment naming this block: a doc section's anchor, a code block's
        line range (fetched, it returns exactly the definition's lines), or "" (the page)."""
        if self.kind is RefKind.DOC:
            return self.anchor
        if self.kind is RefKind.CODE:
            return line_fragment(self.start_line, self.end_line)
        return ""


def line_fragment(start: int, end: int) -> str:
    """The fragment naming lines ``start``..``end``."""
    return f"L{start}" if start == end else f"L{start}-L{end}"


def innermost_block(blocks: Sequence[Block], line: int) -> int | None:
    """The index of the narrowest of ``blocks`` holding ``line`` (the first of equals), or
    None."""
    best, width = None, 0
    for index, block in enumerate(blocks):
        if block.start_line <= line <= block.end_line:
            span = block.end_line - block.start_line
            if best is None or span < width:
                best, width = index, span
    return best


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """A file or page as read from a source, with the blocks extracted from it."""

    source: str
    path: str  # posix path relative to the source root
    text: str
    corpus: Corpus
    content_hash: str  # hex sha256 of the UTF-8 text
    meta: DocMeta = field(default_factory=DocMeta)
    blocks: tuple[Block, ...] = ()
    language: str | None = None  # programming language for code, None for docs
    # Body lines where front matter ended (0 when there was none); content lines keep their
    # original numbering so line ranges always point into the real file.
    front_matter_lines: int = 0
    # Previews come from the blocks' bodies, which hold the text without its markup.
    preview_from_body: bool = False

    __reduce__ = pickled_as_call

    @property
    def lines(self) -> list[str]:
        from scriptorium.text.normalize import split_lines

        return split_lines(self.text)


def doc_version(doc: SourceDocument) -> str:
    """The version a hit and a fetched page carry: the first 16 hex digits of the content hash."""
    return doc.content_hash[:16]


@dataclass(frozen=True, slots=True)
class FileStat:
    """What a source knows about one file without reading it (for change detection)."""

    path: str
    size: int
    mtime_ns: int


@dataclass(slots=True)
class Reason:
    """A named, weighted contribution to a score."""

    name: str
    weight: float
    detail: str = ""


@dataclass(slots=True)
class Scores:
    lexical: float = 0.0
    dense: float = 0.0
    fused: float = 0.0
    rerank: float = 0.0


@dataclass(slots=True)
class Candidate:
    """A block on its way through the ranking pipeline.

    Mode plugins and priors change ``score`` multiplicatively or additively and must append a
    ``Reason`` for every change so ``explain`` can show it.
    """

    source: str
    document: SourceDocument
    block: Block
    score: float
    scores: Scores = field(default_factory=Scores)
    reasons: list[Reason] = field(default_factory=list)
    anchor_line: int | None = None  # best matching line for code refs
    # A code match found through the file's path alone: reported as a whole-file ref.
    file_level: bool = False
    location: str = ""
    url: str = ""
    provider: str = ""
    # False when no one will read the reasons (the search is not explained): stages may then
    # skip building them. Reasons appended anyway are harmless; they are not returned.
    explained: bool = True
    # What the index stores of the block's body for the ranking (``text/features.py``); None
    # for a candidate from elsewhere, whose body is then read.
    features: BlockFeatures | None = None
    # Weighed as a translation for this query (an English query, a translated page): the
    # window holds it back below a result of the same page in another language.
    translated: bool = False
    # Its text holds an error message the query quotes (ranking/messages.py).
    message: bool = False
    # It holds a line the query names (a traceback's frame; ranking/places.py).
    place: bool = False
    # The family of pages it is a variant of (the same guide under sibling framework, platform
    # or version folders; ranking/variants.py), when another of the family is a candidate too.
    variant: str = ""

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.source, self.document.path, self.block.start_line, self.block.end_line)

    def adjust(self, name: str, factor: float, detail: str = "") -> None:
        """Multiply the score by ``factor`` and record why."""
        if factor == 1.0:
            return
        self.score *= factor
        if self.explained:
            self.reasons.append(Reason(name, factor, detail))


@dataclass(frozen=True, slots=True)
class Query:
    """A normalised search request as the pipeline sees it (never logged raw)."""

    text: str
    terms: tuple[str, ...]
    top_k: int = 10
    snippet_lines: int = 8
    corpora: frozenset[Corpus] = frozenset({Corpus.DOCS, Corpus.CODE})
    mode: str = "default"
    sources: frozenset[str] = frozenset()
    surface: str = ""
    as_of: datetime | None = None
    token_budget: int = 0
    explain: bool = False
    # ``library``: the raw document terms of that library's files (``index.schema.doc_term``);
    # the search is restricted to them. Empty: no restriction.
    library: str = ""
    library_documents: frozenset[str] = frozenset()
    # The sources whose documents are installed libraries (for the library prior).
    library_sources: frozenset[str] = frozenset()
    # A BM25 weight per term (aligned with ``terms``); empty means every term weighs 1.
    weights: tuple[float, ...] = ()
    # The indexed files the query names by path or module name, as (source, path).
    files: frozenset[tuple[str, str]] = frozenset()
    # Of those, the one it names last when it names two or more (a traceback's innermost frame).
    last_file: tuple[str, str] | None = None
    # The case-folded names of definitions the query spells as separate words ("oauth2
    # password bearer" for OAuth2PasswordBearer), as the index has them.
    spelled_names: frozenset[str] = frozenset()
    # Identifiers a pasted text's words spell, which its documentation pool searches for too
    # (``phrase_names``).
    phrase_names: tuple[str, ...] = ()
    # Characters of the text as the caller sent it; more than len(text) when it was cut.
    received_chars: int = 0
    # Characters of it that are not searched because no reader sees them (HTML comments).
    hidden_chars: int = 0

    @property
    def truncated(self) -> bool:
        """Whether only the start of the caller's (visible) text is searched."""
        return self.received_chars - self.hidden_chars > len(self.text)

    @property
    def safe_summary(self) -> dict[str, Any]:
        """What may be logged about a query: its length and term count, never its text."""
        return {"query_chars": len(self.text), "term_count": len(self.terms)}
