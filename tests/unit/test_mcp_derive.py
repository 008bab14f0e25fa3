"""Models derived from the contract's descriptors: types, enum words, Timestamps, misspellings."""

from __future__ import annotations

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from scriptorium.client._wire import enum_prefix, enum_word
from scriptorium.mcp.derive import model_for, shape
from scriptorium.v1 import retrieval_pb2 as pb


@pytest.mark.parametrize("enum", list(pb.DESCRIPTOR.enum_types_by_name.values()), ids=str)
def test_every_enum_value_carries_the_prefix_its_word_drops(enum) -> None:
    prefix = enum_prefix(enum)
    assert all(value.name.startswith(prefix) for value in enum.values), prefix
    words = [enum_word(enum, value.number) for value in enum.values]
    assert words[0] == "" and all(w and w == w.lower() for w in words[1:])


def test_enum_words() -> None:
    assert enum_prefix(pb.RefKind.DESCRIPTOR) == "REF_KIND_"
    assert enum_word(pb.RefKind.DESCRIPTOR, pb.REF_KIND_FILE) == "file"
    assert enum_word(pb.SourceState.DESCRIPTOR, pb.SOURCE_STATE_STALE) == "stale"
    with pytest.raises(ValueError, match=r"scriptorium\.v1\.RefKind"):
        enum_word(pb.RefKind.DESCRIPTOR, 99)


def test_a_whole_message_with_scalars_enums_repeated_nested_and_timestamps() -> None:
    model = model_for(pb.SourceStatus.DESCRIPTOR)
    assert list(model.model_fields) == [f.name for f in pb.SourceStatus.DESCRIPTOR.fields]
    status = pb.SourceStatus(
        name="en",
        state=pb.SOURCE_STATE_READY,
        document_count=2**40,
        corpus=pb.CORPUS_DOCS,
        staleness_seconds=1.5,
        indexed_at=Timestamp(seconds=1_700_000_000, nanos=250_000_000),
    )
    out = shape(status, model).model_dump()
    assert out["state"] == "ready" and out["corpus"] == "docs"
    assert out["document_count"] == 2**40 and out["staleness_seconds"] == 1.5
    assert out["indexed_at"] == "2023-11-14T22:13:20.250000+00:00"
    assert shape(pb.SourceStatus(), model).model_dump()["indexed_at"] is None

    flow = shape(
        pb.SummarizeFlowResponse(flow=[pb.FlowStep(index=1, ref_ids=["r1.a"])]),
        model_for(pb.SummarizeFlowResponse.DESCRIPTOR),
    ).model_dump()
    assert flow["flow"][0]["index"] == 1 and flow["flow"][0]["ref_ids"] == ["r1.a"]
    assert flow["confidence"] == ""


def test_include_orders_the_fields_and_extras_keep_their_defaults() -> None:
    model = model_for(
        pb.Range.DESCRIPTOR,
        include=("reason", "marked", "start_line"),
        extra={"marked": (bool, False)},
    )
    assert list(model.model_fields) == ["reason", "marked", "start_line"]
    assert shape(pb.Range(start_line=3, reason="list"), model).model_dump() == {
        "reason": "list",
        "marked": False,
        "start_line": 3,
    }


def test_rounding_and_descriptions_are_per_field() -> None:
    model = model_for(
        pb.Reason.DESCRIPTOR, digits={"weight": 2}, descriptions={"name": "Why it relates."}
    )
    assert shape(pb.Reason(weight=0.123456), model).model_dump()["weight"] == 0.12
    assert model.model_json_schema()["properties"]["name"]["description"] == "Why it relates."


@pytest.mark.parametrize(
    "option",
    [
        {"include": ("start_line", "end_lines")},
        {"descriptions": {"reasons": "typo"}},
        {"digits": {"score": 4}},
        {"nested": {"range": model_for(pb.Range.DESCRIPTOR)}},
    ],
)
def test_a_field_the_message_lacks_is_refused(option) -> None:
    with pytest.raises(ValueError, match=r"scriptorium\.v1\.Range has no field"):
        model_for(pb.Range.DESCRIPTOR, **option)
