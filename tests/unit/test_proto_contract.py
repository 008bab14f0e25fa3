"""The wire contract: services, RPC message pairs and the field names clients rely on.

Field names are the contract (renames break every generated client), so each name the product
design promises is pinned here against the compiled descriptor.
"""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from scriptorium.v1 import retrieval_pb2, retrieval_pb2_grpc

FILE = retrieval_pb2.DESCRIPTOR
SERVICE = FILE.services_by_name["RetrievalService"]
RPCS = (
    "Search",
    "GetContent",
    "ExpandRelated",
    "SummarizeFlow",
    "GuideImplementation",
    "ListSources",
)

CONTRACT_FIELDS: dict[str, tuple[str, ...]] = {
    "SearchRequest": (
        "query",
        "top_k",
        "snippet_lines",
        "kinds",
        "mode",
        "sources",
        "surface",
        "as_of",
        "token_budget",
        "explain",
    ),
    "SearchResult": (
        "ref_id",
        "kind",
        "location",
        "url",
        "title",
        "section_path",
        "start_line",
        "end_line",
        "snippet",
        "preview",
        "score",
        "scores",
        "reasons",
        "source",
        "doc_version",
        "superseded_by",
        "effective_from",
        "effective_to",
    ),
    "Scores": ("lexical", "dense", "fused", "rerank"),
    "Reason": ("name", "weight", "detail"),
    "SearchResponse": (
        "results",
        "trace_id",
        "abstained",
        "abstain_reason",
        "conflicts",
        "tokens_used",
        "provider",
    ),
    "GetContentRequest": ("ref_id", "location", "mode", "max_lines"),
    "GetContentResponse": (
        "location",
        "requested_location",
        "url",
        "source",
        "content",
        "ranges",
        "truncated",
        "total_lines",
        "doc_version",
        "resolution",
    ),
    "Range": ("start_line", "end_line", "reason"),
    "Resolution": ("reason", "rule", "candidates", "detail"),
    "ExpandRelatedRequest": ("ref_ids",),
    "ExpandRelatedResponse": ("related",),
    "RelatedRef": ("ref_id", "kind", "location", "score", "reasons"),
    "SummarizeFlowRequest": ("ref_ids", "topic", "style"),
    "SummarizeFlowResponse": ("flow", "assumptions", "confidence"),
    "FlowStep": ("title", "description", "ref_ids"),
    "GuideImplementationRequest": ("topic", "framework", "language"),
    "GuideImplementationResponse": (
        "query",
        "flow",
        "docs",
        "sample_code",
        "assumptions",
        "confidence",
    ),
    "ListSourcesResponse": ("sources",),
    "SourceStatus": ("name", "kind", "state", "generation", "last_error"),
}

REPEATED: dict[str, tuple[str, ...]] = {
    "SearchRequest": ("kinds", "sources"),
    "SearchResult": ("section_path", "reasons"),
    "SearchResponse": ("results", "conflicts"),
    "GetContentResponse": ("ranges",),
    "Resolution": ("candidates",),
    "ExpandRelatedRequest": ("ref_ids",),
    "ExpandRelatedResponse": ("related",),
    "SummarizeFlowRequest": ("ref_ids",),
    "SummarizeFlowResponse": ("flow", "assumptions"),
    "GuideImplementationResponse": ("flow", "docs", "sample_code", "assumptions"),
    "ListSourcesResponse": ("sources",),
}

MESSAGE_TYPES: dict[tuple[str, str], str] = {
    ("SearchRequest", "as_of"): "google.protobuf.Timestamp",
    ("SearchResult", "scores"): "scriptorium.v1.Scores",
    ("SearchResult", "reasons"): "scriptorium.v1.Reason",
    ("SearchResult", "effective_from"): "google.protobuf.Timestamp",
    ("SearchResult", "effective_to"): "google.protobuf.Timestamp",
    ("SearchResponse", "results"): "scriptorium.v1.SearchResult",
    ("GetContentResponse", "resolution"): "scriptorium.v1.Resolution",
    ("GetContentResponse", "ranges"): "scriptorium.v1.Range",
    ("GuideImplementationResponse", "docs"): "scriptorium.v1.SearchResult",
    ("GuideImplementationResponse", "sample_code"): "scriptorium.v1.SearchResult",
    ("ListSourcesResponse", "sources"): "scriptorium.v1.SourceStatus",
}

ENUM_FIELDS: dict[tuple[str, str], str] = {
    ("SearchRequest", "kinds"): "scriptorium.v1.Corpus",
    ("SearchResult", "kind"): "scriptorium.v1.RefKind",
    ("SearchResponse", "abstain_reason"): "scriptorium.v1.AbstainReason",
    ("GetContentRequest", "mode"): "scriptorium.v1.ContentMode",
    ("SummarizeFlowRequest", "style"): "scriptorium.v1.FlowStyle",
    ("SummarizeFlowResponse", "confidence"): "scriptorium.v1.Confidence",
    ("SourceStatus", "state"): "scriptorium.v1.SourceState",
}

ENUM_VALUES: dict[str, tuple[str, ...]] = {
    "RefKind": ("DOC", "CODE", "FILE"),
    "Corpus": ("DOCS", "CODE"),
    "AbstainReason": ("NO_CANDIDATES", "LOW_CONFIDENCE", "CONFLICTING_SOURCES"),
    "ContentMode": ("SNIPPET", "FULL", "MULTI_RANGE"),
    "FlowStyle": ("COMPACT", "DETAILED"),
    "Confidence": ("LOW", "MEDIUM", "HIGH"),
    "SourceState": ("LOADING", "READY", "FAILED", "STALE"),
}


def _message(name: str) -> Descriptor:
    assert name in FILE.message_types_by_name, f"message {name} is missing from the contract"
    return FILE.message_types_by_name[name]


def _field(message: str, name: str) -> FieldDescriptor:
    descriptor = _message(message)
    assert name in descriptor.fields_by_name, f"{message}.{name} is missing from the contract"
    return descriptor.fields_by_name[name]


def _enum_prefix(name: str) -> str:
    """RefKind -> REF_KIND_: buf STANDARD wants enum values prefixed with the enum name."""
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(name)).upper() + "_"


def test_package_and_path() -> None:
    assert FILE.package == "scriptorium.v1"
    assert FILE.name == "scriptorium/v1/retrieval.proto"
    assert list(FILE.services_by_name) == ["RetrievalService"]


def test_service_has_exactly_the_six_rpcs() -> None:
    assert [method.name for method in SERVICE.methods] == list(RPCS)


@pytest.mark.parametrize("rpc", RPCS)
def test_rpc_uses_its_own_request_and_response(rpc: str) -> None:
    method = SERVICE.methods_by_name[rpc]
    assert method.input_type.full_name == f"scriptorium.v1.{rpc}Request"
    assert method.output_type.full_name == f"scriptorium.v1.{rpc}Response"
    assert not method.client_streaming
    assert not method.server_streaming


@pytest.mark.parametrize("rpc", RPCS)
def test_generated_stub_exposes_the_rpc(rpc: str) -> None:
    servicer = retrieval_pb2_grpc.RetrievalServiceServicer
    assert callable(getattr(servicer, rpc, None)), f"servicer lacks {rpc}: run `make gen`"


@pytest.mark.parametrize(
    ("message", "name"),
    [(message, name) for message, names in CONTRACT_FIELDS.items() for name in names],
)
def test_contract_field_exists(message: str, name: str) -> None:
    _field(message, name)


@pytest.mark.parametrize(
    ("message", "name"),
    [(message, name) for message, names in REPEATED.items() for name in names],
)
def test_list_fields_are_repeated(message: str, name: str) -> None:
    field = _field(message, name)
    assert field.is_repeated, f"{message}.{name} must be repeated"


@pytest.mark.parametrize(("key", "type_name"), sorted(MESSAGE_TYPES.items()))
def test_message_field_types(key: tuple[str, str], type_name: str) -> None:
    field = _field(*key)
    assert field.message_type is not None, f"{'.'.join(key)} must be a message"
    assert field.message_type.full_name == type_name


@pytest.mark.parametrize(("key", "type_name"), sorted(ENUM_FIELDS.items()))
def test_enum_field_types(key: tuple[str, str], type_name: str) -> None:
    field = _field(*key)
    assert field.enum_type is not None, f"{'.'.join(key)} must be an enum"
    assert field.enum_type.full_name == type_name


@pytest.mark.parametrize(("enum", "values"), sorted(ENUM_VALUES.items()))
def test_enum_values(enum: str, values: tuple[str, ...]) -> None:
    assert enum in FILE.enum_types_by_name, f"enum {enum} is missing from the contract"
    descriptor: EnumDescriptor = FILE.enum_types_by_name[enum]
    prefix = _enum_prefix(enum)
    assert descriptor.values_by_number[0].name == f"{prefix}UNSPECIFIED"
    names = set(descriptor.values_by_name)
    for value in values:
        assert f"{prefix}{value}" in names, f"{enum} lacks {prefix}{value}"


def test_scalar_field_kinds() -> None:
    assert _field("SearchRequest", "query").type == FieldDescriptor.TYPE_STRING
    assert _field("SearchRequest", "top_k").type == FieldDescriptor.TYPE_INT32
    assert _field("SearchRequest", "explain").type == FieldDescriptor.TYPE_BOOL
    assert _field("SearchResult", "score").type == FieldDescriptor.TYPE_DOUBLE
    assert _field("SearchResponse", "abstained").type == FieldDescriptor.TYPE_BOOL
    assert _field("GetContentResponse", "content").type == FieldDescriptor.TYPE_STRING
    assert _field("GetContentResponse", "truncated").type == FieldDescriptor.TYPE_BOOL
