import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RefKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REF_KIND_UNSPECIFIED: _ClassVar[RefKind]
    REF_KIND_DOC: _ClassVar[RefKind]
    REF_KIND_CODE: _ClassVar[RefKind]
    REF_KIND_FILE: _ClassVar[RefKind]

class Corpus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CORPUS_UNSPECIFIED: _ClassVar[Corpus]
    CORPUS_DOCS: _ClassVar[Corpus]
    CORPUS_CODE: _ClassVar[Corpus]

class AbstainReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ABSTAIN_REASON_UNSPECIFIED: _ClassVar[AbstainReason]
    ABSTAIN_REASON_NO_CANDIDATES: _ClassVar[AbstainReason]
    ABSTAIN_REASON_LOW_CONFIDENCE: _ClassVar[AbstainReason]
    ABSTAIN_REASON_CONFLICTING_SOURCES: _ClassVar[AbstainReason]

class ContentMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTENT_MODE_UNSPECIFIED: _ClassVar[ContentMode]
    CONTENT_MODE_SNIPPET: _ClassVar[ContentMode]
    CONTENT_MODE_FULL: _ClassVar[ContentMode]
    CONTENT_MODE_MULTI_RANGE: _ClassVar[ContentMode]
    CONTENT_MODE_DEFINITION: _ClassVar[ContentMode]
    CONTENT_MODE_OUTLINE: _ClassVar[ContentMode]

class FlowStyle(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FLOW_STYLE_UNSPECIFIED: _ClassVar[FlowStyle]
    FLOW_STYLE_COMPACT: _ClassVar[FlowStyle]
    FLOW_STYLE_DETAILED: _ClassVar[FlowStyle]

class Confidence(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONFIDENCE_UNSPECIFIED: _ClassVar[Confidence]
    CONFIDENCE_LOW: _ClassVar[Confidence]
    CONFIDENCE_MEDIUM: _ClassVar[Confidence]
    CONFIDENCE_HIGH: _ClassVar[Confidence]

class SourceState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SOURCE_STATE_UNSPECIFIED: _ClassVar[SourceState]
    SOURCE_STATE_LOADING: _ClassVar[SourceState]
    SOURCE_STATE_READY: _ClassVar[SourceState]
    SOURCE_STATE_FAILED: _ClassVar[SourceState]
    SOURCE_STATE_STALE: _ClassVar[SourceState]
REF_KIND_UNSPECIFIED: RefKind
REF_KIND_DOC: RefKind
REF_KIND_CODE: RefKind
REF_KIND_FILE: RefKind
CORPUS_UNSPECIFIED: Corpus
CORPUS_DOCS: Corpus
CORPUS_CODE: Corpus
ABSTAIN_REASON_UNSPECIFIED: AbstainReason
ABSTAIN_REASON_NO_CANDIDATES: AbstainReason
ABSTAIN_REASON_LOW_CONFIDENCE: AbstainReason
ABSTAIN_REASON_CONFLICTING_SOURCES: AbstainReason
CONTENT_MODE_UNSPECIFIED: ContentMode
CONTENT_MODE_SNIPPET: ContentMode
CONTENT_MODE_FULL: ContentMode
CONTENT_MODE_MULTI_RANGE: ContentMode
CONTENT_MODE_DEFINITION: ContentMode
CONTENT_MODE_OUTLINE: ContentMode
FLOW_STYLE_UNSPECIFIED: FlowStyle
FLOW_STYLE_COMPACT: FlowStyle
FLOW_STYLE_DETAILED: FlowStyle
CONFIDENCE_UNSPECIFIED: Confidence
CONFIDENCE_LOW: Confidence
CONFIDENCE_MEDIUM: Confidence
CONFIDENCE_HIGH: Confidence
SOURCE_STATE_UNSPECIFIED: SourceState
SOURCE_STATE_LOADING: SourceState
SOURCE_STATE_READY: SourceState
SOURCE_STATE_FAILED: SourceState
SOURCE_STATE_STALE: SourceState

class Scores(_message.Message):
    __slots__ = ("lexical", "dense", "fused", "rerank")
    LEXICAL_FIELD_NUMBER: _ClassVar[int]
    DENSE_FIELD_NUMBER: _ClassVar[int]
    FUSED_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    lexical: float
    dense: float
    fused: float
    rerank: float
    def __init__(self, lexical: _Optional[float] = ..., dense: _Optional[float] = ..., fused: _Optional[float] = ..., rerank: _Optional[float] = ...) -> None: ...

class Reason(_message.Message):
    __slots__ = ("name", "weight", "detail")
    NAME_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    weight: float
    detail: str
    def __init__(self, name: _Optional[str] = ..., weight: _Optional[float] = ..., detail: _Optional[str] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("query", "top_k", "snippet_lines", "kinds", "mode", "sources", "surface", "as_of", "token_budget", "explain", "library")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_LINES_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    SURFACE_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    query: str
    top_k: int
    snippet_lines: int
    kinds: _containers.RepeatedScalarFieldContainer[Corpus]
    mode: str
    sources: _containers.RepeatedScalarFieldContainer[str]
    surface: str
    as_of: _timestamp_pb2.Timestamp
    token_budget: int
    explain: bool
    library: str
    def __init__(self, query: _Optional[str] = ..., top_k: _Optional[int] = ..., snippet_lines: _Optional[int] = ..., kinds: _Optional[_Iterable[_Union[Corpus, str]]] = ..., mode: _Optional[str] = ..., sources: _Optional[_Iterable[str]] = ..., surface: _Optional[str] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., token_budget: _Optional[int] = ..., explain: _Optional[bool] = ..., library: _Optional[str] = ...) -> None: ...

class SearchResult(_message.Message):
    __slots__ = ("ref_id", "kind", "location", "url", "title", "section_path", "start_line", "end_line", "snippet", "preview", "score", "scores", "reasons", "source", "doc_version", "superseded_by", "effective_from", "effective_to", "source_class", "parse_confidence", "source_revision", "language", "anchor_line", "library", "library_version", "docs_version")
    REF_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DOC_VERSION_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_FROM_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_TO_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CLASS_FIELD_NUMBER: _ClassVar[int]
    PARSE_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REVISION_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    ANCHOR_LINE_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_FIELD_NUMBER: _ClassVar[int]
    LIBRARY_VERSION_FIELD_NUMBER: _ClassVar[int]
    DOCS_VERSION_FIELD_NUMBER: _ClassVar[int]
    ref_id: str
    kind: RefKind
    location: str
    url: str
    title: str
    section_path: _containers.RepeatedScalarFieldContainer[str]
    start_line: int
    end_line: int
    snippet: str
    preview: str
    score: float
    scores: Scores
    reasons: _containers.RepeatedCompositeFieldContainer[Reason]
    source: str
    doc_version: str
    superseded_by: str
    effective_from: _timestamp_pb2.Timestamp
    effective_to: _timestamp_pb2.Timestamp
    source_class: str
    parse_confidence: float
    source_revision: str
    language: str
    anchor_line: int
    library: str
    library_version: str
    docs_version: str
    def __init__(self, ref_id: _Optional[str] = ..., kind: _Optional[_Union[RefKind, str]] = ..., location: _Optional[str] = ..., url: _Optional[str] = ..., title: _Optional[str] = ..., section_path: _Optional[_Iterable[str]] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., snippet: _Optional[str] = ..., preview: _Optional[str] = ..., score: _Optional[float] = ..., scores: _Optional[_Union[Scores, _Mapping]] = ..., reasons: _Optional[_Iterable[_Union[Reason, _Mapping]]] = ..., source: _Optional[str] = ..., doc_version: _Optional[str] = ..., superseded_by: _Optional[str] = ..., effective_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., effective_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source_class: _Optional[str] = ..., parse_confidence: _Optional[float] = ..., source_revision: _Optional[str] = ..., language: _Optional[str] = ..., anchor_line: _Optional[int] = ..., library: _Optional[str] = ..., library_version: _Optional[str] = ..., docs_version: _Optional[str] = ...) -> None: ...

class Conflict(_message.Message):
    __slots__ = ("key", "ref_ids", "locations", "note")
    KEY_FIELD_NUMBER: _ClassVar[int]
    REF_IDS_FIELD_NUMBER: _ClassVar[int]
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    key: str
    ref_ids: _containers.RepeatedScalarFieldContainer[str]
    locations: _containers.RepeatedScalarFieldContainer[str]
    note: str
    def __init__(self, key: _Optional[str] = ..., ref_ids: _Optional[_Iterable[str]] = ..., locations: _Optional[_Iterable[str]] = ..., note: _Optional[str] = ...) -> None: ...

class UnderstoodQuery(_message.Message):
    __slots__ = ("terms", "kinds", "sources", "surface", "as_of", "mode", "query_chars", "term_count", "docs_terms")
    TERMS_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    SURFACE_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    QUERY_CHARS_FIELD_NUMBER: _ClassVar[int]
    TERM_COUNT_FIELD_NUMBER: _ClassVar[int]
    DOCS_TERMS_FIELD_NUMBER: _ClassVar[int]
    terms: _containers.RepeatedScalarFieldContainer[str]
    kinds: _containers.RepeatedScalarFieldContainer[Corpus]
    sources: _containers.RepeatedScalarFieldContainer[str]
    surface: str
    as_of: _timestamp_pb2.Timestamp
    mode: str
    query_chars: int
    term_count: int
    docs_terms: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, terms: _Optional[_Iterable[str]] = ..., kinds: _Optional[_Iterable[_Union[Corpus, str]]] = ..., sources: _Optional[_Iterable[str]] = ..., surface: _Optional[str] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., mode: _Optional[str] = ..., query_chars: _Optional[int] = ..., term_count: _Optional[int] = ..., docs_terms: _Optional[_Iterable[str]] = ...) -> None: ...

class StageDrop(_message.Message):
    __slots__ = ("ref_id", "location", "why")
    REF_ID_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    ref_id: str
    location: str
    why: str
    def __init__(self, ref_id: _Optional[str] = ..., location: _Optional[str] = ..., why: _Optional[str] = ...) -> None: ...

class StageReport(_message.Message):
    __slots__ = ("stage", "kept", "dropped", "drops")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    DROPS_FIELD_NUMBER: _ClassVar[int]
    stage: str
    kept: int
    dropped: int
    drops: _containers.RepeatedCompositeFieldContainer[StageDrop]
    def __init__(self, stage: _Optional[str] = ..., kept: _Optional[int] = ..., dropped: _Optional[int] = ..., drops: _Optional[_Iterable[_Union[StageDrop, _Mapping]]] = ...) -> None: ...

class SourceFailure(_message.Message):
    __slots__ = ("source", "detail")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    source: str
    detail: str
    def __init__(self, source: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("results", "trace_id", "abstained", "abstain_reason", "conflicts", "tokens_used", "provider", "understood", "stages", "failed_sources", "query_truncated", "query_chars_used")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    ABSTAINED_FIELD_NUMBER: _ClassVar[int]
    ABSTAIN_REASON_FIELD_NUMBER: _ClassVar[int]
    CONFLICTS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    UNDERSTOOD_FIELD_NUMBER: _ClassVar[int]
    STAGES_FIELD_NUMBER: _ClassVar[int]
    FAILED_SOURCES_FIELD_NUMBER: _ClassVar[int]
    QUERY_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    QUERY_CHARS_USED_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[SearchResult]
    trace_id: str
    abstained: bool
    abstain_reason: AbstainReason
    conflicts: _containers.RepeatedCompositeFieldContainer[Conflict]
    tokens_used: int
    provider: str
    understood: UnderstoodQuery
    stages: _containers.RepeatedCompositeFieldContainer[StageReport]
    failed_sources: _containers.RepeatedCompositeFieldContainer[SourceFailure]
    query_truncated: bool
    query_chars_used: int
    def __init__(self, results: _Optional[_Iterable[_Union[SearchResult, _Mapping]]] = ..., trace_id: _Optional[str] = ..., abstained: _Optional[bool] = ..., abstain_reason: _Optional[_Union[AbstainReason, str]] = ..., conflicts: _Optional[_Iterable[_Union[Conflict, _Mapping]]] = ..., tokens_used: _Optional[int] = ..., provider: _Optional[str] = ..., understood: _Optional[_Union[UnderstoodQuery, _Mapping]] = ..., stages: _Optional[_Iterable[_Union[StageReport, _Mapping]]] = ..., failed_sources: _Optional[_Iterable[_Union[SourceFailure, _Mapping]]] = ..., query_truncated: _Optional[bool] = ..., query_chars_used: _Optional[int] = ...) -> None: ...

class GetContentRequest(_message.Message):
    __slots__ = ("ref_id", "location", "mode", "max_lines", "seen_doc_version", "max_chars", "cursor")
    REF_ID_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    MAX_LINES_FIELD_NUMBER: _ClassVar[int]
    SEEN_DOC_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_CHARS_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    ref_id: str
    location: str
    mode: ContentMode
    max_lines: int
    seen_doc_version: str
    max_chars: int
    cursor: str
    def __init__(self, ref_id: _Optional[str] = ..., location: _Optional[str] = ..., mode: _Optional[_Union[ContentMode, str]] = ..., max_lines: _Optional[int] = ..., seen_doc_version: _Optional[str] = ..., max_chars: _Optional[int] = ..., cursor: _Optional[str] = ...) -> None: ...

class Range(_message.Message):
    __slots__ = ("start_line", "end_line", "reason")
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    start_line: int
    end_line: int
    reason: str
    def __init__(self, start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Resolution(_message.Message):
    __slots__ = ("reason", "rule", "candidates", "detail", "requested_location", "site", "resolved_location")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_LOCATION_FIELD_NUMBER: _ClassVar[int]
    SITE_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_LOCATION_FIELD_NUMBER: _ClassVar[int]
    reason: str
    rule: str
    candidates: _containers.RepeatedScalarFieldContainer[str]
    detail: str
    requested_location: str
    site: str
    resolved_location: str
    def __init__(self, reason: _Optional[str] = ..., rule: _Optional[str] = ..., candidates: _Optional[_Iterable[str]] = ..., detail: _Optional[str] = ..., requested_location: _Optional[str] = ..., site: _Optional[str] = ..., resolved_location: _Optional[str] = ...) -> None: ...

class GetContentResponse(_message.Message):
    __slots__ = ("location", "requested_location", "url", "source", "content", "ranges", "truncated", "total_lines", "doc_version", "resolution", "ref_id", "kind", "title", "start_line", "end_line", "provider", "revision_skew", "source_revision", "section_path", "trace_id", "scope", "symbol", "context", "total_chars", "part", "next_cursor", "tokens_used", "outline")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_LOCATION_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    RANGES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    DOC_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    REF_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    REVISION_SKEW_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REVISION_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CHARS_FIELD_NUMBER: _ClassVar[int]
    PART_FIELD_NUMBER: _ClassVar[int]
    NEXT_CURSOR_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    OUTLINE_FIELD_NUMBER: _ClassVar[int]
    location: str
    requested_location: str
    url: str
    source: str
    content: str
    ranges: _containers.RepeatedCompositeFieldContainer[Range]
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
    revision_skew: bool
    source_revision: str
    section_path: _containers.RepeatedScalarFieldContainer[str]
    trace_id: str
    scope: str
    symbol: str
    context: _containers.RepeatedCompositeFieldContainer[Range]
    total_chars: int
    part: ContentPart
    next_cursor: str
    tokens_used: int
    outline: _containers.RepeatedCompositeFieldContainer[OutlineEntry]
    def __init__(self, location: _Optional[str] = ..., requested_location: _Optional[str] = ..., url: _Optional[str] = ..., source: _Optional[str] = ..., content: _Optional[str] = ..., ranges: _Optional[_Iterable[_Union[Range, _Mapping]]] = ..., truncated: _Optional[bool] = ..., total_lines: _Optional[int] = ..., doc_version: _Optional[str] = ..., resolution: _Optional[_Union[Resolution, _Mapping]] = ..., ref_id: _Optional[str] = ..., kind: _Optional[_Union[RefKind, str]] = ..., title: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., provider: _Optional[str] = ..., revision_skew: _Optional[bool] = ..., source_revision: _Optional[str] = ..., section_path: _Optional[_Iterable[str]] = ..., trace_id: _Optional[str] = ..., scope: _Optional[str] = ..., symbol: _Optional[str] = ..., context: _Optional[_Iterable[_Union[Range, _Mapping]]] = ..., total_chars: _Optional[int] = ..., part: _Optional[_Union[ContentPart, _Mapping]] = ..., next_cursor: _Optional[str] = ..., tokens_used: _Optional[int] = ..., outline: _Optional[_Iterable[_Union[OutlineEntry, _Mapping]]] = ...) -> None: ...

class ContentPart(_message.Message):
    __slots__ = ("number", "count", "start_char", "end_char", "whole_start_line", "whole_end_line", "whole_lines")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    START_CHAR_FIELD_NUMBER: _ClassVar[int]
    END_CHAR_FIELD_NUMBER: _ClassVar[int]
    WHOLE_START_LINE_FIELD_NUMBER: _ClassVar[int]
    WHOLE_END_LINE_FIELD_NUMBER: _ClassVar[int]
    WHOLE_LINES_FIELD_NUMBER: _ClassVar[int]
    number: int
    count: int
    start_char: int
    end_char: int
    whole_start_line: int
    whole_end_line: int
    whole_lines: int
    def __init__(self, number: _Optional[int] = ..., count: _Optional[int] = ..., start_char: _Optional[int] = ..., end_char: _Optional[int] = ..., whole_start_line: _Optional[int] = ..., whole_end_line: _Optional[int] = ..., whole_lines: _Optional[int] = ...) -> None: ...

class OutlineEntry(_message.Message):
    __slots__ = ("kind", "title", "level", "location", "ref_id", "start_line", "end_line", "lines", "chars", "section_path")
    KIND_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    REF_ID_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    CHARS_FIELD_NUMBER: _ClassVar[int]
    SECTION_PATH_FIELD_NUMBER: _ClassVar[int]
    kind: str
    title: str
    level: int
    location: str
    ref_id: str
    start_line: int
    end_line: int
    lines: int
    chars: int
    section_path: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, kind: _Optional[str] = ..., title: _Optional[str] = ..., level: _Optional[int] = ..., location: _Optional[str] = ..., ref_id: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., lines: _Optional[int] = ..., chars: _Optional[int] = ..., section_path: _Optional[_Iterable[str]] = ...) -> None: ...

class ExpandRelatedRequest(_message.Message):
    __slots__ = ("ref_ids", "top_k", "kinds", "mode", "sources", "token_budget")
    REF_IDS_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    ref_ids: _containers.RepeatedScalarFieldContainer[str]
    top_k: int
    kinds: _containers.RepeatedScalarFieldContainer[Corpus]
    mode: str
    sources: _containers.RepeatedScalarFieldContainer[str]
    token_budget: int
    def __init__(self, ref_ids: _Optional[_Iterable[str]] = ..., top_k: _Optional[int] = ..., kinds: _Optional[_Iterable[_Union[Corpus, str]]] = ..., mode: _Optional[str] = ..., sources: _Optional[_Iterable[str]] = ..., token_budget: _Optional[int] = ...) -> None: ...

class RelatedRef(_message.Message):
    __slots__ = ("ref_id", "kind", "location", "title", "score", "reasons", "source", "start_line", "end_line", "snippet", "url")
    REF_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    ref_id: str
    kind: RefKind
    location: str
    title: str
    score: float
    reasons: _containers.RepeatedCompositeFieldContainer[Reason]
    source: str
    start_line: int
    end_line: int
    snippet: str
    url: str
    def __init__(self, ref_id: _Optional[str] = ..., kind: _Optional[_Union[RefKind, str]] = ..., location: _Optional[str] = ..., title: _Optional[str] = ..., score: _Optional[float] = ..., reasons: _Optional[_Iterable[_Union[Reason, _Mapping]]] = ..., source: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., snippet: _Optional[str] = ..., url: _Optional[str] = ...) -> None: ...

class ExpandRelatedResponse(_message.Message):
    __slots__ = ("related", "unresolved_ref_ids", "trace_id", "tokens_used")
    RELATED_FIELD_NUMBER: _ClassVar[int]
    UNRESOLVED_REF_IDS_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    related: _containers.RepeatedCompositeFieldContainer[RelatedRef]
    unresolved_ref_ids: _containers.RepeatedScalarFieldContainer[str]
    trace_id: str
    tokens_used: int
    def __init__(self, related: _Optional[_Iterable[_Union[RelatedRef, _Mapping]]] = ..., unresolved_ref_ids: _Optional[_Iterable[str]] = ..., trace_id: _Optional[str] = ..., tokens_used: _Optional[int] = ...) -> None: ...

class FlowStep(_message.Message):
    __slots__ = ("index", "title", "description", "ref_ids", "locations", "origin")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REF_IDS_FIELD_NUMBER: _ClassVar[int]
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    index: int
    title: str
    description: str
    ref_ids: _containers.RepeatedScalarFieldContainer[str]
    locations: _containers.RepeatedScalarFieldContainer[str]
    origin: str
    def __init__(self, index: _Optional[int] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., ref_ids: _Optional[_Iterable[str]] = ..., locations: _Optional[_Iterable[str]] = ..., origin: _Optional[str] = ...) -> None: ...

class SummarizeFlowRequest(_message.Message):
    __slots__ = ("ref_ids", "topic", "style", "max_steps", "token_budget")
    REF_IDS_FIELD_NUMBER: _ClassVar[int]
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    STYLE_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    ref_ids: _containers.RepeatedScalarFieldContainer[str]
    topic: str
    style: FlowStyle
    max_steps: int
    token_budget: int
    def __init__(self, ref_ids: _Optional[_Iterable[str]] = ..., topic: _Optional[str] = ..., style: _Optional[_Union[FlowStyle, str]] = ..., max_steps: _Optional[int] = ..., token_budget: _Optional[int] = ...) -> None: ...

class SummarizeFlowResponse(_message.Message):
    __slots__ = ("flow", "assumptions", "confidence", "trace_id", "unresolved_ref_ids", "tokens_used")
    FLOW_FIELD_NUMBER: _ClassVar[int]
    ASSUMPTIONS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    UNRESOLVED_REF_IDS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    flow: _containers.RepeatedCompositeFieldContainer[FlowStep]
    assumptions: _containers.RepeatedScalarFieldContainer[str]
    confidence: Confidence
    trace_id: str
    unresolved_ref_ids: _containers.RepeatedScalarFieldContainer[str]
    tokens_used: int
    def __init__(self, flow: _Optional[_Iterable[_Union[FlowStep, _Mapping]]] = ..., assumptions: _Optional[_Iterable[str]] = ..., confidence: _Optional[_Union[Confidence, str]] = ..., trace_id: _Optional[str] = ..., unresolved_ref_ids: _Optional[_Iterable[str]] = ..., tokens_used: _Optional[int] = ...) -> None: ...

class GuideImplementationRequest(_message.Message):
    __slots__ = ("topic", "framework", "language", "max_docs", "max_samples", "style", "sources", "token_budget")
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    FRAMEWORK_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    MAX_DOCS_FIELD_NUMBER: _ClassVar[int]
    MAX_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    STYLE_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    topic: str
    framework: str
    language: str
    max_docs: int
    max_samples: int
    style: FlowStyle
    sources: _containers.RepeatedScalarFieldContainer[str]
    token_budget: int
    def __init__(self, topic: _Optional[str] = ..., framework: _Optional[str] = ..., language: _Optional[str] = ..., max_docs: _Optional[int] = ..., max_samples: _Optional[int] = ..., style: _Optional[_Union[FlowStyle, str]] = ..., sources: _Optional[_Iterable[str]] = ..., token_budget: _Optional[int] = ...) -> None: ...

class GuideImplementationResponse(_message.Message):
    __slots__ = ("query", "flow", "docs", "sample_code", "assumptions", "confidence", "trace_id", "tokens_used", "topic_truncated", "topic_chars_used")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    FLOW_FIELD_NUMBER: _ClassVar[int]
    DOCS_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_CODE_FIELD_NUMBER: _ClassVar[int]
    ASSUMPTIONS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    TOPIC_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    TOPIC_CHARS_USED_FIELD_NUMBER: _ClassVar[int]
    query: str
    flow: _containers.RepeatedCompositeFieldContainer[FlowStep]
    docs: _containers.RepeatedCompositeFieldContainer[SearchResult]
    sample_code: _containers.RepeatedCompositeFieldContainer[SearchResult]
    assumptions: _containers.RepeatedScalarFieldContainer[str]
    confidence: Confidence
    trace_id: str
    tokens_used: int
    topic_truncated: bool
    topic_chars_used: int
    def __init__(self, query: _Optional[str] = ..., flow: _Optional[_Iterable[_Union[FlowStep, _Mapping]]] = ..., docs: _Optional[_Iterable[_Union[SearchResult, _Mapping]]] = ..., sample_code: _Optional[_Iterable[_Union[SearchResult, _Mapping]]] = ..., assumptions: _Optional[_Iterable[str]] = ..., confidence: _Optional[_Union[Confidence, str]] = ..., trace_id: _Optional[str] = ..., tokens_used: _Optional[int] = ..., topic_truncated: _Optional[bool] = ..., topic_chars_used: _Optional[int] = ...) -> None: ...

class ListSourcesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SourceStatus(_message.Message):
    __slots__ = ("name", "kind", "state", "document_count", "block_count", "generation", "indexed_at", "last_error", "source_class", "root", "bytes", "corpus", "staleness_seconds", "build_files_total", "build_files_done", "vectors_state", "vectors_done", "vectors_total", "vectors_detail", "skipped", "crawl", "detail", "libraries")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    BLOCK_COUNT_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CLASS_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    CORPUS_FIELD_NUMBER: _ClassVar[int]
    STALENESS_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BUILD_FILES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    BUILD_FILES_DONE_FIELD_NUMBER: _ClassVar[int]
    VECTORS_STATE_FIELD_NUMBER: _ClassVar[int]
    VECTORS_DONE_FIELD_NUMBER: _ClassVar[int]
    VECTORS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    VECTORS_DETAIL_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    CRAWL_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    LIBRARIES_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: str
    state: SourceState
    document_count: int
    block_count: int
    generation: int
    indexed_at: _timestamp_pb2.Timestamp
    last_error: str
    source_class: str
    root: str
    bytes: int
    corpus: Corpus
    staleness_seconds: float
    build_files_total: int
    build_files_done: int
    vectors_state: str
    vectors_done: int
    vectors_total: int
    vectors_detail: str
    skipped: _containers.RepeatedCompositeFieldContainer[SkipCount]
    crawl: CrawlStatus
    detail: str
    libraries: _containers.RepeatedCompositeFieldContainer[LibraryStatus]
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., state: _Optional[_Union[SourceState, str]] = ..., document_count: _Optional[int] = ..., block_count: _Optional[int] = ..., generation: _Optional[int] = ..., indexed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_error: _Optional[str] = ..., source_class: _Optional[str] = ..., root: _Optional[str] = ..., bytes: _Optional[int] = ..., corpus: _Optional[_Union[Corpus, str]] = ..., staleness_seconds: _Optional[float] = ..., build_files_total: _Optional[int] = ..., build_files_done: _Optional[int] = ..., vectors_state: _Optional[str] = ..., vectors_done: _Optional[int] = ..., vectors_total: _Optional[int] = ..., vectors_detail: _Optional[str] = ..., skipped: _Optional[_Iterable[_Union[SkipCount, _Mapping]]] = ..., crawl: _Optional[_Union[CrawlStatus, _Mapping]] = ..., detail: _Optional[str] = ..., libraries: _Optional[_Iterable[_Union[LibraryStatus, _Mapping]]] = ...) -> None: ...

class CrawlStatus(_message.Message):
    __slots__ = ("state", "detail", "pages_fetched", "pages_unchanged", "skipped", "pages_failed", "failures", "finished_at", "url")
    STATE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    PAGES_FETCHED_FIELD_NUMBER: _ClassVar[int]
    PAGES_UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    PAGES_FAILED_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    state: str
    detail: str
    pages_fetched: int
    pages_unchanged: int
    skipped: _containers.RepeatedCompositeFieldContainer[CrawlSkip]
    pages_failed: int
    failures: _containers.RepeatedCompositeFieldContainer[CrawlFailure]
    finished_at: _timestamp_pb2.Timestamp
    url: str
    def __init__(self, state: _Optional[str] = ..., detail: _Optional[str] = ..., pages_fetched: _Optional[int] = ..., pages_unchanged: _Optional[int] = ..., skipped: _Optional[_Iterable[_Union[CrawlSkip, _Mapping]]] = ..., pages_failed: _Optional[int] = ..., failures: _Optional[_Iterable[_Union[CrawlFailure, _Mapping]]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., url: _Optional[str] = ...) -> None: ...

class CrawlSkip(_message.Message):
    __slots__ = ("reason", "pages")
    REASON_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    reason: str
    pages: int
    def __init__(self, reason: _Optional[str] = ..., pages: _Optional[int] = ...) -> None: ...

class CrawlFailure(_message.Message):
    __slots__ = ("url", "http_status", "error")
    URL_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    url: str
    http_status: int
    error: str
    def __init__(self, url: _Optional[str] = ..., http_status: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class LibraryStatus(_message.Message):
    __slots__ = ("name", "version", "installed_version", "ecosystem", "direct", "installed", "files", "location", "documentation_urls", "docs_url", "docs_kind", "docs_version", "docs_pages", "docs_detail")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    INSTALLED_VERSION_FIELD_NUMBER: _ClassVar[int]
    ECOSYSTEM_FIELD_NUMBER: _ClassVar[int]
    DIRECT_FIELD_NUMBER: _ClassVar[int]
    INSTALLED_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTATION_URLS_FIELD_NUMBER: _ClassVar[int]
    DOCS_URL_FIELD_NUMBER: _ClassVar[int]
    DOCS_KIND_FIELD_NUMBER: _ClassVar[int]
    DOCS_VERSION_FIELD_NUMBER: _ClassVar[int]
    DOCS_PAGES_FIELD_NUMBER: _ClassVar[int]
    DOCS_DETAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    installed_version: str
    ecosystem: str
    direct: bool
    installed: bool
    files: int
    location: str
    documentation_urls: _containers.RepeatedScalarFieldContainer[str]
    docs_url: str
    docs_kind: str
    docs_version: str
    docs_pages: int
    docs_detail: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., installed_version: _Optional[str] = ..., ecosystem: _Optional[str] = ..., direct: _Optional[bool] = ..., installed: _Optional[bool] = ..., files: _Optional[int] = ..., location: _Optional[str] = ..., documentation_urls: _Optional[_Iterable[str]] = ..., docs_url: _Optional[str] = ..., docs_kind: _Optional[str] = ..., docs_version: _Optional[str] = ..., docs_pages: _Optional[int] = ..., docs_detail: _Optional[str] = ...) -> None: ...

class SkipCount(_message.Message):
    __slots__ = ("rule", "files")
    RULE_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    rule: str
    files: int
    def __init__(self, rule: _Optional[str] = ..., files: _Optional[int] = ...) -> None: ...

class ListSourcesResponse(_message.Message):
    __slots__ = ("sources", "server_version", "generation")
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    sources: _containers.RepeatedCompositeFieldContainer[SourceStatus]
    server_version: str
    generation: int
    def __init__(self, sources: _Optional[_Iterable[_Union[SourceStatus, _Mapping]]] = ..., server_version: _Optional[str] = ..., generation: _Optional[int] = ...) -> None: ...
