"""What the MCP tools return: pydantic models (their JSON schemas are the tools' output schemas)
and pure functions that build them from protobuf responses. Kept whole past 500 lines: each
tool's model sits beside the function that fills it, so a schema and its answer read together.

``search_docs``, ``search_code`` and ``get_doc`` use PascalCase keys, the shape documentation
agents already know from other doc tools. The tools that mirror an RPC (``get_content``,
``expand_related``, ``summarize_flow``, ``guide_implementation``, ``list_sources``) use the proto
field names in snake_case, like ``scriptorium ... --format json``, with enums as short lower-case
words; their models are derived from the message descriptors (mcp/derive.py), so they follow the
contract rather than a copy of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

from scriptorium.mcp.derive import as_plain, enum_word, model_for, shape
from scriptorium.text import estimate_tokens, trim_to_tokens
from scriptorium.v1 import retrieval_pb2 as pb

NOT_FOUND_MESSAGE = (
    "Document not found at location '{location}'. Use 'search_docs' to find available documents."
)
_SCORE_DIGITS = 4
# Below this many tokens a shortened snippet says too little to be worth a result.
MIN_TEXT_TOKENS = 8


def page_of(location: str) -> str:
    """The page part of a location or URL (its ``#fragment`` dropped)."""
    return location.split("#", 1)[0]


_DOC_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".html", ".htm", ".rst", ".txt", ".ipynb"})
_LINE_FRAGMENT = re.compile(r"^L\d+(?:-L?\d+)?$", re.IGNORECASE)
_MODULE_PATH = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")


def doc_target(location: str) -> tuple[str, str]:
    """What get_doc fetches for a location, and in which mode.

    A page drops its ``#section`` and comes whole (full). A code file keeps its fragment: a
    ``#Symbol`` comes as its definition with the enclosing signatures (definition), ``#L10-L20``
    as exactly those lines (snippet); so does a Python module path (``pkg.mod.Class``).
    """
    page, _, fragment = location.partition("#")
    suffix = PurePosixPath(page).suffix.lower()
    if fragment and suffix and suffix not in _DOC_SUFFIXES:
        return location, "snippet" if _LINE_FRAGMENT.match(fragment) else "definition"
    if not fragment and "/" not in page and _MODULE_PATH.match(page.strip()):
        return location, "definition"
    return page, "full"


# -- search_docs / search_code / get_doc -----------------------------------------------------------


class DocHit(BaseModel):
    """One documentation page that matched a search."""

    Title: str = Field(description="Document title.")
    Path: str = Field(
        description="Location to pass to get_doc unchanged (site-qualified when "
        "the page is not on a default site)."
    )
    Url: str = Field(description="Published URL of the page; identifies the site that has it.")
    Snippet: str = Field(description="About 200 characters of the page centred on the query.")
    Score: float = Field(description="Relevance score; higher is better.")
    Library: str | None = Field(
        default=None,
        description="name@version of the installed dependency it comes from; absent for the "
        "project's own sources.",
    )


class DocHits(BaseModel):
    result: list[DocHit]
    TokensUsed: int = Field(
        description="Estimated tokens of the Snippets returned (within tokenBudget when given)."
    )
    QueryTruncated: bool | None = Field(
        default=None,
        description="Present (true) when the query was too long to search whole: only its "
        "first QueryCharsUsed characters were searched.",
    )
    QueryCharsUsed: int | None = Field(
        default=None, description="Characters of the query searched, when it was cut."
    )


class LineSpan(BaseModel):
    Start: int
    End: int


class CodeHit(BaseModel):
    """One definition (or line range) in source code that matched a search."""

    Title: str = Field(description="Symbol name, with enclosing definitions (Class.method).")
    Path: str = Field(
        description="file#Lstart-Lend location (the definition's lines); pass to get_doc or "
        "get_content to read exactly them."
    )
    Url: str
    Snippet: str = Field(description="The source lines around the matching line, as written.")
    Score: float
    Language: str
    Lines: LineSpan = Field(description="First and last line of the definition.")
    Library: str | None = Field(
        default=None,
        description="name@version of the installed dependency it comes from; absent for the "
        "project's own sources.",
    )


class CodeHits(BaseModel):
    result: list[CodeHit]
    QueryTruncated: bool | None = Field(
        default=None,
        description="Present (true) when the query was too long to search whole: only its "
        "first QueryCharsUsed characters were searched.",
    )
    QueryCharsUsed: int | None = Field(
        default=None, description="Characters of the query searched, when it was cut."
    )


class PagePart(BaseModel):
    """Where a part of a long page sits in the page."""

    Number: int = Field(description="This part's number, from 1.")
    Count: int = Field(description="How many parts the page has at this maxChars.")
    StartLine: int = Field(description="First line of the page in this part.")
    EndLine: int = Field(description="Last line of the page in this part.")


class DocPage(BaseModel):
    """A page (or one part of a long page) from get_doc, or why there is none.

    On success: Location, Url, Content; a page longer than maxChars adds Part, TotalChars and,
    before the last part, NextCursor (pass it back as cursor for the next part). When the
    location does not resolve: NotFound, Location (as asked) and Message; an ambiguous
    location, an unknown site or a last segment several pages share also carries Reason and
    Candidates (locations to pass back to get_doc).
    """

    Location: str
    Url: str | None = None
    Content: str | None = None
    Truncated: bool | None = None
    Part: PagePart | None = None
    TotalChars: int | None = Field(None, description="Characters of the whole page.")
    NextCursor: str | None = None
    NotFound: bool | None = None
    Message: str | None = None
    Reason: str | None = None
    Candidates: list[str] | None = None


def doc_hits(results: Sequence[pb.SearchResult], limit: int) -> list[DocHit]:
    """Page-level hits: the best-ranked block stands for its page, in rank order."""
    hits: list[DocHit] = []
    seen: set[str] = set()
    for r in results:
        page = page_of(r.location)
        if page in seen:
            continue
        seen.add(page)
        hits.append(
            DocHit(
                Title=r.section_path[0] if r.section_path else r.title,
                Path=page,
                Url=page_of(r.url),
                Snippet=r.preview or r.snippet,
                Score=round(r.score, _SCORE_DIGITS),
                Library=library_label(r),
            )
        )
        if len(hits) == limit:
            break
    return hits


def library_label(result: pb.SearchResult) -> str | None:
    """``httpx@0.28.1`` for a dependency's result, None for the project's own; a page of its
    published docs adds their version (``httpx@0.28.1, docs 0.28`` or ``docs latest``)."""
    if not result.library:
        return None
    label = f"{result.library}@{result.library_version}"
    return f"{label}, docs {result.docs_version}" if result.docs_version else label


def query_extent(response: pb.SearchResponse) -> dict[str, bool | int]:
    """The DocHits/CodeHits fields saying a long query was cut (none when it was not)."""
    if not response.query_truncated:
        return {}
    return {"QueryTruncated": True, "QueryCharsUsed": response.query_chars_used}


def truncation_note(response: pb.SearchResponse) -> str | None:
    """One line for the text answer when only the start of the query was searched."""
    if not response.query_truncated:
        return None
    return (
        f"Note: the query was too long to search whole; only its first "
        f"{response.query_chars_used} characters were searched."
    )


def code_hits(results: Sequence[pb.SearchResult]) -> list[CodeHit]:
    return [
        CodeHit(
            Title=r.title,
            Path=r.location,
            Url=r.url,
            Snippet=r.snippet,
            Score=round(r.score, _SCORE_DIGITS),
            Language=r.language,
            Lines=LineSpan(Start=r.start_line, End=r.end_line),
            Library=library_label(r),
        )
        for r in results
    ]


def fit_doc_hits(hits: list[DocHit], budget: int) -> int:
    """Fit the hits' Snippets into ``budget`` tokens (0: unlimited); returns what they cost.

    The best hit is kept (its Snippet shortened when it alone is over); later ones are
    shortened to what is left, or dropped when too little is.
    """
    used, kept = 0, []
    for hit in hits:
        remaining = budget - used
        cost = estimate_tokens(hit.Snippet)
        if budget and cost > remaining:
            if kept and remaining < MIN_TEXT_TOKENS:
                break
            hit.Snippet = trim_to_tokens(hit.Snippet, remaining)
            cost = estimate_tokens(hit.Snippet)
        used += cost
        kept.append(hit)
    hits[:] = kept
    return used


def doc_page(response: pb.GetContentResponse) -> DocPage:
    part = response.part if response.HasField("part") and response.part.count > 1 else None
    return DocPage(
        Location=response.location,
        Url=response.url,
        Content=response.content,
        Truncated=True if response.truncated else None,
        Part=PagePart(
            Number=part.number,
            Count=part.count,
            StartLine=response.start_line,
            EndLine=response.end_line,
        )
        if part
        else None,
        TotalChars=response.total_chars if part else None,
        NextCursor=response.next_cursor or None,
    )


def doc_missing(location: str, resolution: pb.Resolution | None) -> DocPage:
    """The not-found answer; ambiguity, unknown sites and shared leaves add why and candidates."""
    reason = resolution.reason if resolution is not None else "not_found"
    if reason == "ambiguous":
        candidates = list(resolution.candidates) if resolution is not None else []
        return DocPage(
            Location=location,
            NotFound=True,
            Reason=reason,
            Candidates=candidates,
            Message=(
                f"Location '{location}' matches several documents: {', '.join(candidates)}. "
                "Call 'get_doc' again with one of the candidates."
            ),
        )
    if reason == "unknown_site":
        site = location.split("/", 1)[0]
        return DocPage(
            Location=location,
            NotFound=True,
            Reason=reason,
            Candidates=[],
            Message=(
                f"No documentation site named '{site}' serves location '{location}'. "
                "Use 'search_docs' to find available documents."
            ),
        )
    if (
        resolution is not None
        and resolution.candidates
        and resolution.detail.startswith("no definition")
    ):
        candidates = list(resolution.candidates)
        return DocPage(
            Location=location,
            NotFound=True,
            Reason=reason,
            Candidates=candidates,
            Message=(
                f"No definition at location '{location}'; the closest names: "
                f"{', '.join(candidates)}. Call 'get_doc' again with one of the candidates."
            ),
        )
    if resolution is not None and resolution.candidates:
        # A last segment several pages share: not a guess, but the pages to choose from.
        candidates = list(resolution.candidates)
        return DocPage(
            Location=location,
            NotFound=True,
            Reason=reason,
            Candidates=candidates,
            Message=(
                f"No page at location '{location}', but its last segment names several pages: "
                f"{', '.join(candidates)}. Call 'get_doc' again with one of the candidates."
            ),
        )
    return DocPage(
        Location=location, NotFound=True, Message=NOT_FOUND_MESSAGE.format(location=location)
    )


# -- RPC mirrors -----------------------------------------------------------------------------------
#
# Derived from the message descriptors (mcp/derive.py): the proto's field names and types. What
# is spelled out here is what a tool shows differently: which fields, in which order (the order
# of the answer's keys), extra fields, rounding, and the descriptions in the output schemas.

ResolutionOut = model_for(
    pb.Resolution.DESCRIPTOR,
    descriptions={
        "reason": "resolved, not_found, unknown_site, ambiguous, site_unavailable or fetch_failed.",
        "rule": "exact, variant, canonical-leaf, moved, ref or none.",
        "candidates": "Locations to choose from when ambiguous, or when not_found because the "
        "last segment names several pages.",
    },
)


# Hand-written: the gRPC status of a failed call, not a message of the contract.
class ErrorOut(BaseModel):
    code: str = Field(description="gRPC status name, for example NOT_FOUND.")
    message: str


ContentOut = model_for(
    pb.GetContentResponse.DESCRIPTOR,
    name="ContentOut",
    doc="""A GetContent answer. ``found`` is false when the ref or location did not resolve; then
    only ``requested_location``, ``resolution`` (why, with ``candidates`` when ambiguous) and
    ``error`` (the status) are present.""",
    include=(
        *("found", "location", "requested_location", "url", "source", "ref_id", "kind", "title"),
        *("section_path", "content", "start_line", "end_line", "total_lines", "truncated"),
        *("total_chars", "part", "next_cursor", "tokens_used"),
        *("ranges", "doc_version", "revision_skew", "resolution", "error", "trace_id"),
        *("scope", "symbol", "context"),
    ),
    extra={"found": (bool, ...), "error": (ErrorOut | None, None)},
    descriptions={
        "kind": "doc, code or file.",
        "ranges": "Highlighted line ranges (multi_range mode), each with its reason.",
        "revision_skew": "True when the document changed since the ref was issued.",
        "next_cursor": "Pass back as cursor (with the same other arguments) for the next part; "
        "empty on the last part.",
        "total_chars": "Characters of the whole answer, all parts together.",
        "scope": "What content covers: section or page (docs); definition, window, lines or "
        "file (code).",
        "symbol": "The definition returned or the one the anchor sits in (Class.method).",
        "context": "definition mode: the enclosing definitions' signature lines that open "
        "content, outermost first.",
    },
    nested={"resolution": ResolutionOut},
    optional=True,
)

RelatedOut = model_for(pb.RelatedRef.DESCRIPTOR, name="RelatedOut", digits={"score": _SCORE_DIGITS})

ExpandOut = model_for(
    pb.ExpandRelatedResponse.DESCRIPTOR,
    name="ExpandOut",
    descriptions={
        "unresolved_ref_ids": "Inputs that named nothing (stale refs, unknown locations)."
    },
    nested={"related": RelatedOut},
)

FlowStepOut = model_for(
    pb.FlowStep.DESCRIPTOR,
    descriptions={
        "origin": "numbered, labelled, bullet, heading, paragraph, code or topic.",
    },
)

FlowOut = model_for(
    pb.SummarizeFlowResponse.DESCRIPTOR,
    name="FlowOut",
    include=("flow", "assumptions", "confidence", "unresolved_ref_ids", "tokens_used", "trace_id"),
    descriptions={"confidence": "low, medium or high."},
    nested={"flow": FlowStepOut},
)

RefOut = model_for(
    pb.SearchResult.DESCRIPTOR,
    name="RefOut",
    doc="A search result as GuideImplementation returns it.",
    include=(
        *("ref_id", "kind", "location", "url", "title", "section_path", "start_line", "end_line"),
        *("snippet", "preview", "score", "source", "language"),
    ),
    digits={"score": _SCORE_DIGITS},
)

GuideOut = model_for(
    pb.GuideImplementationResponse.DESCRIPTOR,
    name="GuideOut",
    nested={"flow": FlowStepOut, "docs": RefOut, "sample_code": RefOut},
)


OutlineEntryOut = model_for(
    pb.OutlineEntry.DESCRIPTOR,
    descriptions={
        "kind": "heading, or the definition kind (function, class, method, ...).",
        "location": "Pass to get_content (mode 'full') to read exactly this entry.",
        "chars": "Characters of the entry's text, nested headings or methods included.",
    },
)

OutlineOut = model_for(
    pb.GetContentResponse.DESCRIPTOR,
    name="OutlineOut",
    doc="""The outline of a document or code file. ``found`` is false when the location did not
    resolve; then ``requested_location``, ``resolution`` and ``error`` say why.""",
    include=(
        *("found", "location", "requested_location", "url", "source", "ref_id", "kind", "title"),
        *("total_lines", "doc_version", "outline", "resolution", "error"),
    ),
    extra={"found": (bool, ...), "error": (ErrorOut | None, None)},
    descriptions={"kind": "doc or file.", "total_lines": "Lines of the whole document."},
    nested={"resolution": ResolutionOut, "outline": OutlineEntryOut},
    optional=True,
)


def content_out(response: pb.GetContentResponse) -> BaseModel:
    part = response.part if response.HasField("part") else None
    return shape(response, ContentOut, found=True, part=as_plain(part) if part else None)


def outline_out(response: pb.GetContentResponse) -> BaseModel:
    return shape(response, OutlineOut, found=True)


def failed(
    model: type[BaseModel],
    code: str,
    message: str,
    resolution: pb.Resolution | None,
    requested: str,
) -> BaseModel:
    """A ``model`` answer for a ref or location that did not resolve."""
    return model(
        found=False,
        requested_location=requested,
        resolution=shape(resolution, ResolutionOut) if resolution is not None else None,
        error=ErrorOut(code=code, message=message),
    )


def content_failed(
    code: str, message: str, resolution: pb.Resolution | None, requested: str
) -> BaseModel:
    return failed(ContentOut, code, message, resolution, requested)


def expand_out(response: pb.ExpandRelatedResponse, unresolved: Sequence[str] = ()) -> BaseModel:
    """Inputs the bridge could not resolve come first, then those the daemon reported."""
    merged = [*unresolved, *response.unresolved_ref_ids]
    return shape(response, ExpandOut, unresolved_ref_ids=merged)


def flow_out(response: pb.SummarizeFlowResponse, unresolved: Sequence[str] = ()) -> BaseModel:
    merged = [*unresolved, *response.unresolved_ref_ids]
    return shape(response, FlowOut, unresolved_ref_ids=merged)


def guide_out(response: pb.GuideImplementationResponse) -> BaseModel:
    return shape(response, GuideOut)


# list_sources: hand-written, because its published names are not the proto's (documents and
# blocks for document_count and block_count; building for the two build_files_* counters, absent
# when no build is under way). The list around it is derived.


class BuildOut(BaseModel):
    files_total: int = Field(description="Files of this source the build under way has to read.")
    files_done: int = Field(description="Files it has read so far.")


class CrawlFailureOut(BaseModel):
    url: str
    http_status: int = Field(description="The HTTP status, or 0 when there was no response.")
    error: str


class CrawlOut(BaseModel):
    state: str = Field(
        description="complete, partial (failures or a bound), failed, or crawling (a refresh "
        "under way: the counts so far)."
    )
    detail: str = Field(description="One sentence with the counts.")
    fetched: int = Field(description="Pages downloaded by the last crawl.")
    unchanged: int = Field(description="Pages whose kept copy was re-used (304).")
    failed: int = Field(description="Pages that did not answer.")
    skipped: dict[str, int] | None = Field(
        default=None, description="Links not followed, by reason; absent when none were."
    )
    failures: list[CrawlFailureOut] | None = Field(
        default=None, description="The first pages that did not answer; absent when none."
    )


def crawl_out(crawl: pb.CrawlStatus) -> CrawlOut:
    failures = [
        CrawlFailureOut(url=f.url, http_status=f.http_status, error=f.error) for f in crawl.failures
    ]
    return CrawlOut(
        state=crawl.state,
        detail=crawl.detail,
        fetched=crawl.pages_fetched,
        unchanged=crawl.pages_unchanged,
        failed=crawl.pages_failed,
        skipped={s.reason: s.pages for s in crawl.skipped} or None,
        failures=failures or None,
    )


class SourceOut(BaseModel):
    name: str
    kind: str
    state: str = Field(description="loading, ready, failed or stale.")
    documents: int
    blocks: int
    generation: int
    staleness_seconds: float = Field(description="Seconds since it was last known current.")
    last_error: str
    building: BuildOut | None = Field(
        default=None, description="Progress of the build under way; absent when none is."
    )
    skipped: dict[str, int] | None = Field(
        default=None,
        description="Files the source would index that a rule left out, by rule (gitignore, "
        "generated, skip_dirs, built-in); absent when none were.",
    )
    crawl: CrawlOut | None = Field(
        default=None,
        description="What the last crawl of a fetched site (site, llms_txt) did; absent for "
        "other kinds.",
    )
    detail: str | None = Field(
        default=None,
        description="What the source says of itself (a dependencies source: how many libraries "
        "it indexes and which are declared but not installed); absent when nothing.",
    )


SourcesOut = model_for(
    pb.ListSourcesResponse.DESCRIPTOR,
    name="SourcesOut",
    include=("sources", "generation", "server_version"),
    nested={"sources": SourceOut},
)


def source_out(s: pb.SourceStatus) -> SourceOut:
    return SourceOut(
        name=s.name,
        kind=s.kind,
        state=enum_word(pb.SourceState.DESCRIPTOR, s.state),
        documents=s.document_count,
        blocks=s.block_count,
        generation=s.generation,
        staleness_seconds=round(s.staleness_seconds, 3),
        last_error=s.last_error,
        building=BuildOut(files_total=s.build_files_total, files_done=s.build_files_done)
        if s.build_files_total
        else None,
        skipped={c.rule: c.files for c in s.skipped} or None,
        crawl=crawl_out(s.crawl) if s.HasField("crawl") else None,
        detail=s.detail or None,
    )


def sources_out(response: pb.ListSourcesResponse) -> BaseModel:
    return shape(response, SourcesOut, sources=[source_out(s) for s in response.sources])
