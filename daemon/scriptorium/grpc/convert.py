"""Translation between protobuf messages and domain types.

Kept whole past 500 lines: it is one table of mappings, each message both ways, so a contract
change is one edit in one place (the servicer and the client both read it).

Pure functions only: the servicer calls these on the way in and out, and nothing here knows
about gRPC contexts or the engine. An enum value the contract does not define is an
``InvalidArgument``; a zero (``_UNSPECIFIED``) value means "use the default".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from scriptorium.domain.model import Corpus, Reason, RefKind, Scores
from scriptorium.domain.outcomes import (
    Conflict,
    ContentOutcome,
    ContentParams,
    ContentPart,
    CrawlReport,
    FlowOutcome,
    FlowParams,
    FlowStep,
    GuideOutcome,
    GuideParams,
    InvalidArgument,
    OutlineEntry,
    RangeMark,
    RelatedHit,
    RelatedOutcome,
    RelatedParams,
    Resolution,
    SearchHit,
    SearchOutcome,
    SearchParams,
    SourceReport,
    StageReport,
    UnderstoodQuery,
)
from scriptorium.v1 import retrieval_pb2 as pb

# -- enums ---------------------------------------------------------------------------------------

_CORPUS_TO_PB = {Corpus.DOCS: pb.CORPUS_DOCS, Corpus.CODE: pb.CORPUS_CODE}
_CORPUS_FROM_PB = {v: k for k, v in _CORPUS_TO_PB.items()}
_REF_KIND_TO_PB = {
    RefKind.DOC: pb.REF_KIND_DOC,
    RefKind.CODE: pb.REF_KIND_CODE,
    RefKind.FILE: pb.REF_KIND_FILE,
}
_REF_KIND_FROM_PB = {v: k for k, v in _REF_KIND_TO_PB.items()}
_CONTENT_MODE_FROM_PB = {
    pb.CONTENT_MODE_UNSPECIFIED: "snippet",
    pb.CONTENT_MODE_SNIPPET: "snippet",
    pb.CONTENT_MODE_FULL: "full",
    pb.CONTENT_MODE_MULTI_RANGE: "multi_range",
    pb.CONTENT_MODE_DEFINITION: "definition",
    pb.CONTENT_MODE_OUTLINE: "outline",
}
_CONTENT_MODE_TO_PB = {
    "snippet": pb.CONTENT_MODE_SNIPPET,
    "full": pb.CONTENT_MODE_FULL,
    "multi_range": pb.CONTENT_MODE_MULTI_RANGE,
    "definition": pb.CONTENT_MODE_DEFINITION,
    "outline": pb.CONTENT_MODE_OUTLINE,
}
_FLOW_STYLE_FROM_PB = {
    pb.FLOW_STYLE_UNSPECIFIED: "",
    pb.FLOW_STYLE_COMPACT: "compact",
    pb.FLOW_STYLE_DETAILED: "detailed",
}
_FLOW_STYLE_TO_PB = {v: k for k, v in _FLOW_STYLE_FROM_PB.items()}
_ABSTAIN_TO_PB = {
    "no_candidates": pb.ABSTAIN_REASON_NO_CANDIDATES,
    "low_confidence": pb.ABSTAIN_REASON_LOW_CONFIDENCE,
    "conflicting_sources": pb.ABSTAIN_REASON_CONFLICTING_SOURCES,
}
_CONFIDENCE_TO_PB = {
    "low": pb.CONFIDENCE_LOW,
    "medium": pb.CONFIDENCE_MEDIUM,
    "high": pb.CONFIDENCE_HIGH,
}
_STATE_TO_PB = {
    "loading": pb.SOURCE_STATE_LOADING,
    "ready": pb.SOURCE_STATE_READY,
    "failed": pb.SOURCE_STATE_FAILED,
    "stale": pb.SOURCE_STATE_STALE,
}


def corpus_to_pb(corpus: Corpus | str) -> int:
    return _CORPUS_TO_PB[Corpus(corpus)]


def corpus_from_pb(value: int) -> Corpus:
    try:
        return _CORPUS_FROM_PB[value]
    except KeyError:
        raise InvalidArgument(f"unknown corpus value {value}") from None


def kinds_from_pb(values: Iterable[int]) -> tuple[Corpus, ...]:
    """Requested corpora without repeats; unspecified entries are ignored (empty means both)."""
    out: list[Corpus] = []
    for value in values:
        if value == pb.CORPUS_UNSPECIFIED:
            continue
        corpus = corpus_from_pb(value)
        if corpus not in out:
            out.append(corpus)
    return tuple(out)


def ref_kind_to_pb(kind: RefKind | str) -> int:
    return _REF_KIND_TO_PB[RefKind(kind)]


def ref_kind_from_pb(value: int) -> RefKind:
    try:
        return _REF_KIND_FROM_PB[value]
    except KeyError:
        raise InvalidArgument(f"unknown ref kind value {value}") from None


def content_mode_from_pb(value: int) -> str:
    try:
        return _CONTENT_MODE_FROM_PB[value]
    except KeyError:
        raise InvalidArgument(f"unknown content mode value {value}") from None


def content_mode_to_pb(mode: str) -> int:
    return _CONTENT_MODE_TO_PB.get(mode, pb.CONTENT_MODE_UNSPECIFIED)


def flow_style_from_pb(value: int) -> str:
    try:
        return _FLOW_STYLE_FROM_PB[value]
    except KeyError:
        raise InvalidArgument(f"unknown flow style value {value}") from None


def flow_style_to_pb(style: str) -> int:
    return _FLOW_STYLE_TO_PB.get(style, pb.FLOW_STYLE_UNSPECIFIED)


def abstain_reason_to_pb(reason: str) -> int:
    return _ABSTAIN_TO_PB.get(reason, pb.ABSTAIN_REASON_UNSPECIFIED)


def confidence_to_pb(confidence: str) -> int:
    return _CONFIDENCE_TO_PB.get(confidence, pb.CONFIDENCE_UNSPECIFIED)


def source_state_to_pb(state: str) -> int:
    return _STATE_TO_PB.get(state, pb.SOURCE_STATE_UNSPECIFIED)


# -- timestamps ----------------------------------------------------------------------------------


def datetime_from_pb(message: Any, field_name: str) -> datetime | None:
    """The aware (UTC) datetime in ``message.field_name``, or None when the field is unset."""
    if not message.HasField(field_name):
        return None
    timestamp: Timestamp = getattr(message, field_name)
    return timestamp.ToDatetime(tzinfo=UTC)


def datetime_to_pb(value: datetime | None, target: Timestamp) -> None:
    """Fill ``target`` from ``value``; a naive datetime is taken as UTC, None leaves it unset."""
    if value is None:
        return
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    target.FromDatetime(value)


# -- requests ------------------------------------------------------------------------------------


def search_params(request: pb.SearchRequest) -> SearchParams:
    return SearchParams(
        query=request.query,
        top_k=request.top_k,
        snippet_lines=request.snippet_lines,
        kinds=kinds_from_pb(request.kinds),
        mode=request.mode,
        sources=tuple(request.sources),
        surface=request.surface,
        as_of=datetime_from_pb(request, "as_of"),
        token_budget=request.token_budget,
        explain=request.explain,
        library=request.library,
    )


def content_params(request: pb.GetContentRequest) -> ContentParams:
    return ContentParams(
        ref_id=request.ref_id,
        location=request.location,
        mode=content_mode_from_pb(request.mode),
        max_lines=request.max_lines,
        seen_doc_version=request.seen_doc_version,
        max_chars=request.max_chars,
        cursor=request.cursor,
    )


def related_params(request: pb.ExpandRelatedRequest) -> RelatedParams:
    return RelatedParams(
        ref_ids=list(request.ref_ids),
        top_k=request.top_k,
        kinds=kinds_from_pb(request.kinds),
        mode=request.mode,
        sources=tuple(request.sources),
        token_budget=request.token_budget,
    )


def flow_params(request: pb.SummarizeFlowRequest) -> FlowParams:
    return FlowParams(
        ref_ids=list(request.ref_ids),
        topic=request.topic,
        style=flow_style_from_pb(request.style),
        max_steps=request.max_steps,
        token_budget=request.token_budget,
    )


def guide_params(request: pb.GuideImplementationRequest) -> GuideParams:
    return GuideParams(
        topic=request.topic,
        framework=request.framework,
        language=request.language,
        max_docs=request.max_docs,
        max_samples=request.max_samples,
        style=flow_style_from_pb(request.style),
        sources=tuple(request.sources),
        token_budget=request.token_budget,
    )


# -- shared pieces -------------------------------------------------------------------------------


def scores_to_pb(scores: Scores) -> pb.Scores:
    return pb.Scores(
        lexical=scores.lexical, dense=scores.dense, fused=scores.fused, rerank=scores.rerank
    )


def reasons_to_pb(reasons: Sequence[Reason]) -> list[pb.Reason]:
    return [pb.Reason(name=r.name, weight=r.weight, detail=r.detail) for r in reasons]


def resolution_to_pb(resolution: Resolution) -> pb.Resolution:
    return pb.Resolution(
        reason=resolution.reason,
        rule=resolution.rule,
        candidates=list(resolution.candidates),
        detail=resolution.detail,
        requested_location=resolution.requested_location,
        site=resolution.site,
        resolved_location=resolution.resolved_location,
    )


def resolution_from_pb(message: pb.Resolution) -> Resolution:
    return Resolution(
        reason=message.reason,
        rule=message.rule,
        candidates=list(message.candidates),
        detail=message.detail,
        requested_location=message.requested_location,
        site=message.site,
        resolved_location=message.resolved_location,
    )


def flow_step_to_pb(step: FlowStep) -> pb.FlowStep:
    return pb.FlowStep(
        index=step.index,
        title=step.title,
        description=step.description,
        ref_ids=list(step.ref_ids),
        locations=list(step.locations),
        origin=step.origin,
    )


# -- responses -----------------------------------------------------------------------------------


def search_result_to_pb(hit: SearchHit) -> pb.SearchResult:
    result = pb.SearchResult()
    fill_search_result(result, hit)
    return result


def fill_search_result(result: pb.SearchResult, hit: SearchHit) -> None:
    """Set every field of ``result`` from ``hit``.

    Assigning fields one by one on a message that is already in place (``results.add()``)
    costs about half of building it from keyword arguments and then copying it into the
    response, and this runs for every result of every search.
    """
    result.ref_id = hit.ref_id
    result.kind = _REF_KIND_TO_PB[hit.kind]
    result.location = hit.location
    result.url = hit.url
    result.title = hit.title
    result.section_path.extend(hit.section_path)
    result.start_line = hit.start_line
    result.end_line = hit.end_line
    result.snippet = hit.snippet
    result.preview = hit.preview
    result.score = hit.score
    scores, target = hit.scores, result.scores
    target.SetInParent()
    target.lexical = scores.lexical
    target.dense = scores.dense
    target.fused = scores.fused
    target.rerank = scores.rerank
    if hit.reasons:
        result.reasons.extend(reasons_to_pb(hit.reasons))
    result.source = hit.source
    result.doc_version = hit.doc_version
    result.superseded_by = hit.superseded_by
    result.source_class = hit.source_class
    result.parse_confidence = hit.parse_confidence
    result.source_revision = hit.source_revision
    result.language = hit.language
    result.anchor_line = hit.anchor_line
    result.library = hit.library
    result.library_version = hit.library_version
    result.docs_version = hit.docs_version
    datetime_to_pb(hit.effective_from, result.effective_from)
    datetime_to_pb(hit.effective_to, result.effective_to)


def _fill_results(target: Any, hits: Sequence[SearchHit]) -> None:
    add = target.add
    for hit in hits:
        fill_search_result(add(), hit)


def _conflict_to_pb(conflict: Conflict) -> pb.Conflict:
    return pb.Conflict(
        key=conflict.key,
        ref_ids=list(conflict.ref_ids),
        locations=list(conflict.locations),
        note=conflict.note,
    )


def _understood_to_pb(understood: UnderstoodQuery) -> pb.UnderstoodQuery:
    message = pb.UnderstoodQuery(
        terms=list(understood.terms),
        kinds=[corpus_to_pb(k) for k in understood.kinds],
        sources=list(understood.sources),
        surface=understood.surface,
        mode=understood.mode,
        query_chars=understood.query_chars,
        term_count=understood.term_count,
        docs_terms=list(understood.docs_terms),
    )
    datetime_to_pb(understood.as_of, message.as_of)
    return message


def _stage_to_pb(stage: StageReport) -> pb.StageReport:
    return pb.StageReport(
        stage=stage.stage,
        kept=stage.kept,
        dropped=stage.dropped,
        drops=[pb.StageDrop(ref_id=d.ref_id, location=d.location, why=d.why) for d in stage.drops],
    )


def search_response(outcome: SearchOutcome) -> pb.SearchResponse:
    response = pb.SearchResponse(
        trace_id=outcome.trace_id,
        abstained=outcome.abstained,
        abstain_reason=abstain_reason_to_pb(outcome.abstain_reason),
        conflicts=[_conflict_to_pb(c) for c in outcome.conflicts],
        tokens_used=outcome.tokens_used,
        provider=outcome.provider,
        stages=[_stage_to_pb(s) for s in outcome.stages],
        failed_sources=[
            pb.SourceFailure(source=name, detail=detail) for name, detail in outcome.failed_sources
        ],
        query_truncated=outcome.query_truncated,
        query_chars_used=outcome.query_chars_used,
    )
    _fill_results(response.results, outcome.hits)
    if outcome.understood is not None:
        response.understood.CopyFrom(_understood_to_pb(outcome.understood))
    return response


def _ranges_to_pb(ranges: Iterable[RangeMark]) -> list[pb.Range]:
    return [pb.Range(start_line=r.start_line, end_line=r.end_line, reason=r.reason) for r in ranges]


def _ranges_from_pb(ranges: Iterable[pb.Range]) -> list[RangeMark]:
    return [RangeMark(r.start_line, r.end_line, r.reason) for r in ranges]


def content_response(outcome: ContentOutcome) -> pb.GetContentResponse:
    return pb.GetContentResponse(
        location=outcome.location,
        requested_location=outcome.requested_location,
        url=outcome.url,
        source=outcome.source,
        content=outcome.content,
        ranges=_ranges_to_pb(outcome.ranges),
        truncated=outcome.truncated,
        total_lines=outcome.total_lines,
        doc_version=outcome.doc_version,
        resolution=resolution_to_pb(outcome.resolution),
        ref_id=outcome.ref_id,
        kind=ref_kind_to_pb(outcome.kind),
        title=outcome.title,
        start_line=outcome.start_line,
        end_line=outcome.end_line,
        provider=outcome.provider,
        revision_skew=outcome.revision_skew,
        source_revision=outcome.source_revision,
        section_path=list(outcome.section_path),
        trace_id=outcome.trace_id,
        scope=outcome.scope,
        symbol=outcome.symbol,
        context=_ranges_to_pb(outcome.context),
        total_chars=outcome.total_chars,
        part=_part_to_pb(outcome.part),
        next_cursor=outcome.next_cursor,
        tokens_used=outcome.tokens_used,
        outline=[_outline_entry_to_pb(e) for e in outcome.outline],
    )


def _part_to_pb(part: ContentPart | None) -> pb.ContentPart | None:
    if part is None:
        return None
    return pb.ContentPart(
        number=part.number,
        count=part.count,
        start_char=part.start_char,
        end_char=part.end_char,
        whole_start_line=part.whole_start_line,
        whole_end_line=part.whole_end_line,
        whole_lines=part.whole_lines,
    )


def _outline_entry_to_pb(entry: OutlineEntry) -> pb.OutlineEntry:
    return pb.OutlineEntry(
        kind=entry.kind,
        title=entry.title,
        level=entry.level,
        location=entry.location,
        ref_id=entry.ref_id,
        start_line=entry.start_line,
        end_line=entry.end_line,
        lines=entry.lines,
        chars=entry.chars,
        section_path=list(entry.section_path),
    )


def content_outcome_from_pb(reply: pb.GetContentResponse) -> ContentOutcome:
    """The inverse of ``content_response``: a peer's answer in domain terms, as it sent it."""
    return ContentOutcome(
        location=reply.location,
        requested_location=reply.requested_location,
        url=reply.url,
        source=reply.source,
        content=reply.content,
        ranges=_ranges_from_pb(reply.ranges),
        truncated=reply.truncated,
        total_lines=reply.total_lines,
        doc_version=reply.doc_version,
        resolution=resolution_from_pb(reply.resolution),
        ref_id=reply.ref_id,
        kind=ref_kind_from_pb(reply.kind) if reply.kind else RefKind.DOC,
        title=reply.title,
        start_line=reply.start_line,
        end_line=reply.end_line,
        provider=reply.provider,
        revision_skew=reply.revision_skew,
        source_revision=reply.source_revision,
        section_path=list(reply.section_path),
        trace_id=reply.trace_id,
        scope=reply.scope,
        symbol=reply.symbol,
        context=_ranges_from_pb(reply.context),
        total_chars=reply.total_chars,
        tokens_used=reply.tokens_used,
    )


def _related_to_pb(hit: RelatedHit) -> pb.RelatedRef:
    return pb.RelatedRef(
        ref_id=hit.ref_id,
        kind=ref_kind_to_pb(hit.kind),
        location=hit.location,
        title=hit.title,
        score=hit.score,
        reasons=reasons_to_pb(hit.reasons),
        source=hit.source,
        start_line=hit.start_line,
        end_line=hit.end_line,
        snippet=hit.snippet,
        url=hit.url,
    )


def related_response(outcome: RelatedOutcome) -> pb.ExpandRelatedResponse:
    return pb.ExpandRelatedResponse(
        related=[_related_to_pb(h) for h in outcome.related],
        unresolved_ref_ids=list(outcome.unresolved_ref_ids),
        trace_id=outcome.trace_id,
        tokens_used=outcome.tokens_used,
    )


def flow_response(outcome: FlowOutcome) -> pb.SummarizeFlowResponse:
    return pb.SummarizeFlowResponse(
        flow=[flow_step_to_pb(s) for s in outcome.flow],
        assumptions=list(outcome.assumptions),
        confidence=confidence_to_pb(outcome.confidence),
        trace_id=outcome.trace_id,
        unresolved_ref_ids=list(outcome.unresolved_ref_ids),
        tokens_used=outcome.tokens_used,
    )


def guide_response(outcome: GuideOutcome) -> pb.GuideImplementationResponse:
    response = pb.GuideImplementationResponse(
        query=outcome.query,
        flow=[flow_step_to_pb(s) for s in outcome.flow],
        assumptions=list(outcome.assumptions),
        confidence=confidence_to_pb(outcome.confidence),
        trace_id=outcome.trace_id,
        tokens_used=outcome.tokens_used,
        topic_truncated=outcome.topic_truncated,
        topic_chars_used=outcome.topic_chars_used,
    )
    _fill_results(response.docs, outcome.docs)
    _fill_results(response.sample_code, outcome.sample_code)
    return response


def source_status_to_pb(report: SourceReport) -> pb.SourceStatus:
    status = pb.SourceStatus(
        name=report.name,
        kind=report.kind,
        state=source_state_to_pb(report.state),
        document_count=report.document_count,
        block_count=report.block_count,
        generation=report.generation,
        last_error=report.last_error,
        source_class=report.source_class,
        root=report.root,
        bytes=report.bytes,
        corpus=corpus_to_pb(report.corpus),
        staleness_seconds=report.staleness_seconds,
        build_files_total=report.build_files_total,
        build_files_done=report.build_files_done,
        vectors_state=report.vectors_state,
        vectors_done=report.vectors_done,
        vectors_total=report.vectors_total,
        vectors_detail=report.vectors_detail,
        skipped=[pb.SkipCount(rule=r, files=n) for r, n in report.skipped.items()],
        detail=report.detail,
        libraries=[
            pb.LibraryStatus(
                name=lib.name,
                version=lib.version,
                installed_version=lib.installed_version,
                ecosystem=lib.ecosystem,
                direct=lib.direct,
                installed=lib.installed,
                files=lib.files,
                location=lib.location,
                documentation_urls=lib.documentation_urls,
                docs_url=lib.docs_url,
                docs_kind=lib.docs_kind,
                docs_version=lib.docs_version,
                docs_pages=lib.docs_pages,
                docs_detail=lib.docs_detail,
            )
            for lib in report.libraries
        ],
    )
    datetime_to_pb(report.indexed_at, status.indexed_at)
    if report.crawl is not None:
        _fill_crawl(status.crawl, report.crawl)
    return status


def _fill_crawl(out: pb.CrawlStatus, crawl: CrawlReport) -> None:
    out.state = crawl.state
    out.detail = crawl.detail
    out.url = crawl.url
    out.pages_fetched = crawl.pages_fetched
    out.pages_unchanged = crawl.pages_unchanged
    out.pages_failed = crawl.pages_failed
    out.skipped.extend(pb.CrawlSkip(reason=r, pages=n) for r, n in crawl.skipped.items())
    out.failures.extend(
        pb.CrawlFailure(url=url, http_status=code, error=error)
        for url, code, error in crawl.failures
    )
    datetime_to_pb(crawl.finished_at, out.finished_at)


def list_sources_response(
    reports: Sequence[SourceReport], server_version: str
) -> pb.ListSourcesResponse:
    """The newest generation any source is served from stands for the whole index."""
    return pb.ListSourcesResponse(
        sources=[source_status_to_pb(r) for r in reports],
        server_version=server_version,
        generation=max((r.generation for r in reports), default=0),
    )
