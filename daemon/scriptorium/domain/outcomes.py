"""What the retrieval engine answers, before the servicer turns it into protobuf.

The engine raises ``RetrievalError`` subclasses for failures; each maps to one gRPC status code
and may carry a ``Resolution`` that the servicer attaches as a rich error detail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from scriptorium.domain.model import Corpus, Reason, RefKind, Scores


@dataclass(slots=True)
class Resolution:
    """How a ref or location was resolved (seed vocabulary: reasons and rules are fixed)."""

    reason: str  # resolved, not_found, unknown_site, ambiguous, site_unavailable, fetch_failed
    rule: str = "none"  # exact, variant, canonical-leaf, moved, ref, none
    candidates: list[str] = field(default_factory=list)
    detail: str = ""
    requested_location: str = ""
    site: str = ""
    resolved_location: str = ""


class PluginError(RuntimeError):
    """A plugin could not be loaded or registered something invalid (or a configured plugin
    name answers to none); ``scriptorium.plugins`` re-exports it where plugins are loaded."""


class RetrievalError(Exception):
    """Base for failures that become a gRPC status."""

    code = "INTERNAL"

    def __init__(self, message: str, resolution: Resolution | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.resolution = resolution


class InvalidArgument(RetrievalError):
    code = "INVALID_ARGUMENT"


class NotFound(RetrievalError):
    code = "NOT_FOUND"


class FailedPrecondition(RetrievalError):
    code = "FAILED_PRECONDITION"


class Unavailable(RetrievalError):
    code = "UNAVAILABLE"


class DeadlineExceeded(RetrievalError):
    code = "DEADLINE_EXCEEDED"


class Unimplemented(RetrievalError):
    code = "UNIMPLEMENTED"


class ResourceExhausted(RetrievalError):
    code = "RESOURCE_EXHAUSTED"


@dataclass(slots=True)
class SearchParams:
    """A search request in domain terms; the engine validates and clamps it."""

    query: str
    top_k: int = 0
    snippet_lines: int = 0
    kinds: tuple[Corpus, ...] = ()
    mode: str = ""
    sources: tuple[str, ...] = ()
    surface: str = ""
    as_of: datetime | None = None
    token_budget: int = 0
    explain: bool = False
    # One library of a dependencies source (its name); empty: no restriction.
    library: str = ""


@dataclass(slots=True)
class SearchHit:
    ref_id: str
    kind: RefKind
    location: str
    url: str
    title: str
    section_path: list[str]
    start_line: int
    end_line: int
    snippet: str
    preview: str
    score: float
    scores: Scores
    reasons: list[Reason]
    source: str
    doc_version: str
    source_class: str = "product"
    superseded_by: str = ""
    effective_from: datetime | None = None
    effective_to: datetime | None = None
    parse_confidence: float = 1.0
    source_revision: str = ""
    language: str = ""
    anchor_line: int = 0
    # The library (and version) a dependencies source's result comes from.
    library: str = ""
    library_version: str = ""
    # For a page of the library's published docs: their version (``1.2``, or ``latest``).
    docs_version: str = ""


@dataclass(slots=True)
class Conflict:
    key: str
    ref_ids: list[str]
    locations: list[str]
    note: str


@dataclass(slots=True)
class StageDrop:
    ref_id: str
    location: str
    why: str


@dataclass(slots=True)
class StageReport:
    stage: str
    kept: int
    dropped: int
    drops: list[StageDrop] = field(default_factory=list)


@dataclass(slots=True)
class UnderstoodQuery:
    terms: list[str]
    kinds: list[Corpus]
    sources: list[str]
    surface: str
    as_of: datetime | None
    mode: str
    query_chars: int
    term_count: int
    # Searched for by the documentation's pool only (``Query.phrase_names``).
    docs_terms: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SearchOutcome:
    hits: list[SearchHit]
    trace_id: str = ""
    abstained: bool = False
    abstain_reason: str = ""  # no_candidates, low_confidence, conflicting_sources
    conflicts: list[Conflict] = field(default_factory=list)
    tokens_used: int = 0
    provider: str = "none"
    understood: UnderstoodQuery | None = None
    stages: list[StageReport] = field(default_factory=list)
    failed_sources: list[tuple[str, str]] = field(default_factory=list)
    # The query was longer than limits.SEARCHED_QUERY_CHARS: only its first query_chars_used
    # characters (cut at a whitespace boundary) were searched.
    query_truncated: bool = False
    query_chars_used: int = 0


@dataclass(slots=True)
class RangeMark:
    start_line: int
    end_line: int
    reason: str


@dataclass(slots=True)
class ContentParams:
    ref_id: str = ""
    location: str = ""
    mode: str = "snippet"  # snippet, full, multi_range, definition, outline
    max_lines: int = 0
    seen_doc_version: str = ""
    max_chars: int = 0  # cap on one part's content; 0 means the whole answer at once
    cursor: str = ""  # the next_cursor of the previous part


@dataclass(slots=True)
class RelatedParams:
    """An ExpandRelated request in domain terms."""

    ref_ids: list[str]
    top_k: int = 0
    kinds: tuple[Corpus, ...] = ()
    mode: str = ""
    sources: tuple[str, ...] = ()
    token_budget: int = 0


@dataclass(slots=True)
class FlowParams:
    """A SummarizeFlow request in domain terms."""

    ref_ids: list[str]
    topic: str = ""
    style: str = ""
    max_steps: int = 0
    token_budget: int = 0


@dataclass(slots=True)
class GuideParams:
    """A GuideImplementation request in domain terms."""

    topic: str
    framework: str = ""
    language: str = ""
    max_docs: int = 0
    max_samples: int = 0
    style: str = ""
    sources: tuple[str, ...] = ()
    token_budget: int = 0


@dataclass(slots=True)
class ContentPart:
    """Where one part of a long answer sits in the whole answer (offsets are [start, end))."""

    number: int
    count: int
    start_char: int
    end_char: int
    whole_start_line: int
    whole_end_line: int
    whole_lines: int


@dataclass(slots=True)
class OutlineEntry:
    """One heading of a document or one definition of a code file, with its extent."""

    kind: str  # heading, or the definition kind (function, class, method, ...)
    title: str
    level: int
    location: str
    ref_id: str
    start_line: int
    end_line: int
    lines: int
    chars: int
    section_path: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ContentOutcome:
    location: str
    requested_location: str
    url: str
    source: str
    content: str
    ranges: list[RangeMark]
    truncated: bool
    total_lines: int
    doc_version: str
    resolution: Resolution
    ref_id: str
    kind: RefKind
    title: str
    start_line: int
    end_line: int
    provider: str
    revision_skew: bool = False
    source_revision: str = ""
    section_path: list[str] = field(default_factory=list)
    trace_id: str = ""
    total_chars: int = 0
    part: ContentPart | None = None
    next_cursor: str = ""
    tokens_used: int = 0
    outline: list[OutlineEntry] = field(default_factory=list)
    # section, page, definition, window, lines or file: what ``content`` covers.
    scope: str = ""
    # The qualified name of the definition returned or enclosing the anchor (code only).
    symbol: str = ""
    # DEFINITION mode: the enclosing definitions' signature lines that precede the definition.
    context: list[RangeMark] = field(default_factory=list)


@dataclass(slots=True)
class RelatedHit:
    ref_id: str
    kind: RefKind
    location: str
    title: str
    score: float
    reasons: list[Reason]
    source: str
    start_line: int
    end_line: int
    snippet: str
    url: str


@dataclass(slots=True)
class RelatedOutcome:
    related: list[RelatedHit]
    unresolved_ref_ids: list[str] = field(default_factory=list)
    trace_id: str = ""
    tokens_used: int = 0


@dataclass(slots=True)
class FlowStep:
    index: int
    title: str
    description: str
    ref_ids: list[str]
    locations: list[str]
    origin: str


@dataclass(slots=True)
class FlowOutcome:
    flow: list[FlowStep]
    assumptions: list[str]
    confidence: str  # low, medium, high
    trace_id: str = ""
    unresolved_ref_ids: list[str] = field(default_factory=list)
    tokens_used: int = 0


@dataclass(slots=True)
class GuideOutcome:
    query: str
    flow: list[FlowStep]
    docs: list[SearchHit]
    sample_code: list[SearchHit]
    assumptions: list[str]
    confidence: str
    trace_id: str = ""
    tokens_used: int = 0
    # The topic was longer than limits.MAX_TOPIC_CHARS: only its first topic_chars_used
    # characters (cut at a whitespace boundary) were searched.
    topic_truncated: bool = False
    topic_chars_used: int = 0


@dataclass(slots=True)
class CrawlReport:
    """What one crawl of a documentation site did, so a half-fetched site never looks whole.

    ``state`` is complete, partial (failures, or a bound cut it short) or failed (nothing
    fetched); ``skipped`` counts links not followed by reason; ``failures`` lists the first
    pages that did not answer as (url, HTTP status or 0, error).
    """

    state: str
    detail: str
    url: str = ""
    pages_fetched: int = 0
    pages_unchanged: int = 0
    pages_failed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    failures: list[tuple[str, int, str]] = field(default_factory=list)
    finished_at: datetime | None = None


@dataclass(slots=True)
class SourceReport:
    name: str
    kind: str
    state: str  # loading, ready, failed, stale
    document_count: int
    block_count: int
    generation: int
    indexed_at: datetime | None
    last_error: str
    source_class: str
    root: str
    bytes: int
    corpus: Corpus
    staleness_seconds: float = 0.0
    # Files the build under way has to read for this source, and has read (0 and 0: none).
    build_files_total: int = 0
    build_files_done: int = 0
    # The semantic retriever's vectors of this source's blocks: off, waiting, encoding, ready
    # or failed, how many blocks have one of how many, and why (a missing model, ...).
    vectors_state: str = "off"
    vectors_done: int = 0
    vectors_total: int = 0
    vectors_detail: str = ""
    # Files the last listing left out, per rule ("gitignore", "generated", ...).
    skipped: dict[str, int] = field(default_factory=dict)
    # What the last crawl did, for the kinds that fetch a site (None for the others).
    crawl: CrawlReport | None = None
    # What the source says of itself (a dependencies source: counts, what is not installed).
    detail: str = ""
    libraries: list[LibraryReport] = field(default_factory=list)


@dataclass(slots=True)
class LibraryReport:
    """One declared dependency of a dependencies source, as ListSources reports it."""

    name: str
    version: str
    installed_version: str
    ecosystem: str
    direct: bool
    installed: bool
    files: int = 0
    location: str = ""
    documentation_urls: list[str] = field(default_factory=list)
    # The documentation site attached to it (``docs_sites = true``), as ListSources says it.
    docs_url: str = ""
    docs_kind: str = ""
    docs_version: str = ""
    docs_pages: int = 0
    docs_detail: str = ""
