"""What the MCP tools return: pydantic models (their JSON schemas are the tools' output schemas)
and pure functions that build them from protobuf responses.

``search_docs``, ``search_code`` and ``get_doc`` use PascalCase keys, the shape documentation
agents already know from other doc tools. The tools that mirror an RPC (``get_content``,
``expand_related``, ``summarize_flow``, ``guide_implementation``) use the proto field names in
snake_case, like ``scriptorium ... --format json``, with enums as short lower-case words.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from scriptorium.v1 import retrieval_pb2 as pb

NOT_FOUND_MESSAGE = (
    "Document not found at location '{location}'. Use 'search_docs' to find available documents."
)
_SCORE_DIGITS = 4


def _enum_word(enum: object, value: int, prefix: str) -> str:
    """``REF_KIND_DOC`` -> ``doc``; the zero value -> ``""``."""
    if value == 0:
        return ""
    return enum.Name(value).removeprefix(prefix).lower()  # type: ignore[attr-defined]


def ref_kind_word(value: int) -> str:
    return _enum_word(pb.RefKind, value, "REF_KIND_")


def confidence_word(value: int) -> str:
    return _enum_word(pb.Confidence, value, "CONFIDENCE_")


def page_of(location: str) -> str:
    """The page part of a location or URL (its ``#fragment`` dropped)."""
    return location.split("#", 1)[0]


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


class DocHits(BaseModel):
    result: list[DocHit]


class LineSpan(BaseModel):
    Start: int
    End: int


class CodeHit(BaseModel):
    """One definition (or line range) in source code that matched a search."""

    Title: str = Field(description="Symbol name, with enclosing definitions (Class.method).")
    Path: str = Field(
        description="file#Lnn location; pass to get_content (or get_doc for the whole file)."
    )
    Url: str
    Snippet: str = Field(description="The source lines around the matching line, as written.")
    Score: float
    Language: str
    Lines: LineSpan = Field(description="First and last line of the definition.")


class CodeHits(BaseModel):
    result: list[CodeHit]


class DocPage(BaseModel):
    """A whole page from get_doc, or why there is none.

    On success: Location, Url, Content. When the location does not resolve: NotFound, Location
    (as asked) and Message; an ambiguous location, an unknown site or a last segment several
    pages share also carries Reason and Candidates (locations to pass back to get_doc).
    """

    Location: str
    Url: str | None = None
    Content: str | None = None
    Truncated: bool | None = None
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
            )
        )
        if len(hits) == limit:
            break
    return hits


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
        )
        for r in results
    ]


def doc_page(response: pb.GetContentResponse) -> DocPage:
    return DocPage(
        Location=response.location,
        Url=response.url,
        Content=response.content,
        Truncated=True if response.truncated else None,
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


class ResolutionOut(BaseModel):
    reason: str = Field(
        description="resolved, not_found, unknown_site, ambiguous, "
        "site_unavailable or fetch_failed."
    )
    rule: str = Field(description="exact, variant, canonical-leaf, moved, ref or none.")
    candidates: list[str] = Field(
        description="Locations to choose from when ambiguous, or when not_found because the "
        "last segment names several pages."
    )
    detail: str
    requested_location: str
    site: str
    resolved_location: str


class RangeOut(BaseModel):
    start_line: int
    end_line: int
    reason: str


class ErrorOut(BaseModel):
    code: str = Field(description="gRPC status name, for example NOT_FOUND.")
    message: str


class ContentOut(BaseModel):
    """A GetContent answer. ``found`` is false when the ref or location did not resolve; then
    only ``requested_location``, ``resolution`` (why, with ``candidates`` when ambiguous) and
    ``error`` (the status) are present."""

    found: bool
    location: str | None = None
    requested_location: str | None = None
    url: str | None = None
    source: str | None = None
    ref_id: str | None = None
    kind: str | None = Field(None, description="doc, code or file.")
    title: str | None = None
    section_path: list[str] | None = None
    content: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    total_lines: int | None = None
    truncated: bool | None = None
    ranges: list[RangeOut] | None = Field(
        None, description="Highlighted line ranges (multi_range mode), each with its reason."
    )
    doc_version: str | None = None
    revision_skew: bool | None = Field(
        None, description="True when the document changed since the ref was issued."
    )
    resolution: ResolutionOut | None = None
    error: ErrorOut | None = None
    trace_id: str | None = None


class ReasonOut(BaseModel):
    name: str
    weight: float
    detail: str


class RelatedOut(BaseModel):
    ref_id: str
    kind: str
    location: str
    title: str
    score: float
    reasons: list[ReasonOut]
    source: str
    start_line: int
    end_line: int
    snippet: str
    url: str


class ExpandOut(BaseModel):
    related: list[RelatedOut]
    unresolved_ref_ids: list[str] = Field(
        description="Inputs that named nothing (stale refs, unknown locations)."
    )
    trace_id: str


class FlowStepOut(BaseModel):
    index: int
    title: str
    description: str
    ref_ids: list[str]
    locations: list[str]
    origin: str = Field(
        description="numbered, labelled, bullet, heading, paragraph, code or topic."
    )


class FlowOut(BaseModel):
    flow: list[FlowStepOut]
    assumptions: list[str]
    confidence: str = Field(description="low, medium or high.")
    unresolved_ref_ids: list[str]
    trace_id: str


class RefOut(BaseModel):
    """A search result as GuideImplementation returns it."""

    ref_id: str
    kind: str
    location: str
    url: str
    title: str
    section_path: list[str]
    start_line: int
    end_line: int
    snippet: str
    preview: str
    score: float
    source: str
    language: str


class GuideOut(BaseModel):
    query: str
    flow: list[FlowStepOut]
    docs: list[RefOut]
    sample_code: list[RefOut]
    assumptions: list[str]
    confidence: str
    trace_id: str


def resolution_out(message: pb.Resolution) -> ResolutionOut:
    return ResolutionOut(
        reason=message.reason,
        rule=message.rule,
        candidates=list(message.candidates),
        detail=message.detail,
        requested_location=message.requested_location,
        site=message.site,
        resolved_location=message.resolved_location,
    )


def content_out(response: pb.GetContentResponse) -> ContentOut:
    return ContentOut(
        found=True,
        location=response.location,
        requested_location=response.requested_location,
        url=response.url,
        source=response.source,
        ref_id=response.ref_id,
        kind=ref_kind_word(response.kind),
        title=response.title,
        section_path=list(response.section_path),
        content=response.content,
        start_line=response.start_line,
        end_line=response.end_line,
        total_lines=response.total_lines,
        truncated=response.truncated,
        ranges=[
            RangeOut(start_line=r.start_line, end_line=r.end_line, reason=r.reason)
            for r in response.ranges
        ],
        doc_version=response.doc_version,
        revision_skew=response.revision_skew,
        resolution=resolution_out(response.resolution),
        trace_id=response.trace_id,
    )


def content_failed(
    code: str, message: str, resolution: pb.Resolution | None, requested: str
) -> ContentOut:
    return ContentOut(
        found=False,
        requested_location=requested,
        resolution=resolution_out(resolution) if resolution is not None else None,
        error=ErrorOut(code=code, message=message),
    )


def _reasons(reasons: Sequence[pb.Reason]) -> list[ReasonOut]:
    return [ReasonOut(name=r.name, weight=r.weight, detail=r.detail) for r in reasons]


def expand_out(response: pb.ExpandRelatedResponse, unresolved: Sequence[str] = ()) -> ExpandOut:
    return ExpandOut(
        related=[
            RelatedOut(
                ref_id=r.ref_id,
                kind=ref_kind_word(r.kind),
                location=r.location,
                title=r.title,
                score=round(r.score, _SCORE_DIGITS),
                reasons=_reasons(r.reasons),
                source=r.source,
                start_line=r.start_line,
                end_line=r.end_line,
                snippet=r.snippet,
                url=r.url,
            )
            for r in response.related
        ],
        unresolved_ref_ids=[*unresolved, *response.unresolved_ref_ids],
        trace_id=response.trace_id,
    )


def _steps(steps: Sequence[pb.FlowStep]) -> list[FlowStepOut]:
    return [
        FlowStepOut(
            index=s.index,
            title=s.title,
            description=s.description,
            ref_ids=list(s.ref_ids),
            locations=list(s.locations),
            origin=s.origin,
        )
        for s in steps
    ]


def flow_out(response: pb.SummarizeFlowResponse, unresolved: Sequence[str] = ()) -> FlowOut:
    return FlowOut(
        flow=_steps(response.flow),
        assumptions=list(response.assumptions),
        confidence=confidence_word(response.confidence),
        unresolved_ref_ids=[*unresolved, *response.unresolved_ref_ids],
        trace_id=response.trace_id,
    )


def _ref_out(r: pb.SearchResult) -> RefOut:
    return RefOut(
        ref_id=r.ref_id,
        kind=ref_kind_word(r.kind),
        location=r.location,
        url=r.url,
        title=r.title,
        section_path=list(r.section_path),
        start_line=r.start_line,
        end_line=r.end_line,
        snippet=r.snippet,
        preview=r.preview,
        score=round(r.score, _SCORE_DIGITS),
        source=r.source,
        language=r.language,
    )


def guide_out(response: pb.GuideImplementationResponse) -> GuideOut:
    return GuideOut(
        query=response.query,
        flow=_steps(response.flow),
        docs=[_ref_out(r) for r in response.docs],
        sample_code=[_ref_out(r) for r in response.sample_code],
        assumptions=list(response.assumptions),
        confidence=confidence_word(response.confidence),
        trace_id=response.trace_id,
    )


class BuildOut(BaseModel):
    files_total: int = Field(description="Files of this source the build under way has to read.")
    files_done: int = Field(description="Files it has read so far.")


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


class SourcesOut(BaseModel):
    sources: list[SourceOut]
    generation: int
    server_version: str


def sources_out(response: pb.ListSourcesResponse) -> SourcesOut:
    return SourcesOut(
        sources=[
            SourceOut(
                name=s.name,
                kind=s.kind,
                state=_enum_word(pb.SourceState, s.state, "SOURCE_STATE_"),
                documents=s.document_count,
                blocks=s.block_count,
                generation=s.generation,
                staleness_seconds=round(s.staleness_seconds, 3),
                last_error=s.last_error,
                building=BuildOut(files_total=s.build_files_total, files_done=s.build_files_done)
                if s.build_files_total
                else None,
            )
            for s in response.sources
        ],
        generation=response.generation,
        server_version=response.server_version,
    )
