"""What the RPC-mirroring MCP tools publish must not change by accident.

``get_content``, ``outline``, ``expand_related``, ``summarize_flow``, ``guide_implementation`` and
``list_sources`` answer with JSON built from the protobuf responses, and publish the JSON schema
of that answer. This pins both against a recorded copy: the text of each answer (key order
included, as the tools' text block shows it) for responses with every field set and for empty
ones, and each tool's output schema as the MCP server lists it (key order aside).

After a deliberate change to the published shape, record it again with
``.venv/bin/python -m tests.unit.test_mcp_shapes`` and review the diff of the recorded file.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from scriptorium.mcp import shapes
from scriptorium.mcp.backend import Backend
from scriptorium.mcp.tools import build_server
from scriptorium.v1 import retrieval_pb2 as pb

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "mcp_shapes.json"
RPC_TOOLS = (
    "get_content",
    "outline",
    "expand_related",
    "summarize_flow",
    "guide_implementation",
    "list_sources",
)


def _fill(message: Message, numbers: Iterator[int], depth: int = 0) -> Message:
    """Set every field of ``message`` (nested ones too) to a distinct, non-default value.

    Floating-point values carry more digits than any published rounding keeps, enums a non-zero
    value, repeated fields two entries.
    """
    for field in message.DESCRIPTOR.fields:
        if field.message_type is not None:
            if depth > 3:
                continue
            if field.is_repeated:
                for _ in range(2):
                    _fill(getattr(message, field.name).add(), numbers, depth + 1)
            else:
                _fill(getattr(message, field.name), numbers, depth + 1)
            continue
        values = [_scalar(field, next(numbers)) for _ in range(2)]
        if field.is_repeated:
            getattr(message, field.name).extend(values)
        else:
            setattr(message, field.name, values[0])
    return message


def _scalar(field: FieldDescriptor, n: int) -> Any:
    if field.enum_type is not None:
        return field.enum_type.values[1 + n % (len(field.enum_type.values) - 1)].number
    if field.type == FieldDescriptor.TYPE_STRING:
        return f"{field.name}-{n}"
    if field.type == FieldDescriptor.TYPE_BOOL:
        return True
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return n + 0.123456789
    return n


def full(kind: type[Message]) -> Message:
    """A ``kind`` with every field set."""
    return _fill(kind(), count(1))


def _covers_every_field(descriptor: Descriptor, message: Message) -> bool:
    return all(
        bool(getattr(message, f.name))
        if f.is_repeated
        else (
            message.HasField(f.name)
            if f.message_type
            else getattr(message, f.name) != f.default_value
        )
        for f in descriptor.fields
    )


def _answers() -> dict[str, Callable[[], Any]]:
    """Each case: how one tool's answer is built from a response."""
    unbuilt = full(pb.ListSourcesResponse)
    unbuilt.sources[1].build_files_total = 0
    resolution = full(pb.Resolution)
    return {
        "get_content/full": lambda: shapes.content_out(full(pb.GetContentResponse)),
        "get_content/empty": lambda: shapes.content_out(pb.GetContentResponse()),
        "get_content/failed": lambda: shapes.content_failed(
            "FAILED_PRECONDITION", "ambiguous", resolution, "handbook/onboarding"
        ),
        "get_content/failed_without_resolution": lambda: shapes.content_failed(
            "NOT_FOUND", "no such ref", None, "r1.gone"
        ),
        "outline/full": lambda: shapes.outline_out(full(pb.GetContentResponse)),
        "outline/empty": lambda: shapes.outline_out(pb.GetContentResponse()),
        "outline/failed": lambda: shapes.failed(
            shapes.OutlineOut, "NOT_FOUND", "not_found", resolution, "nowhere"
        ),
        "expand_related/full": lambda: shapes.expand_out(
            full(pb.ExpandRelatedResponse), ["nowhere/at-all"]
        ),
        "expand_related/empty": lambda: shapes.expand_out(pb.ExpandRelatedResponse()),
        "expand_related/nothing_resolved": lambda: shapes.ExpandOut(
            related=[], unresolved_ref_ids=["a", "b"], trace_id="", tokens_used=0
        ),
        "summarize_flow/full": lambda: shapes.flow_out(
            full(pb.SummarizeFlowResponse), ["nowhere/at-all"]
        ),
        "summarize_flow/empty": lambda: shapes.flow_out(pb.SummarizeFlowResponse()),
        "guide_implementation/full": lambda: shapes.guide_out(full(pb.GuideImplementationResponse)),
        "guide_implementation/empty": lambda: shapes.guide_out(pb.GuideImplementationResponse()),
        "list_sources/full": lambda: shapes.sources_out(unbuilt),
        "list_sources/empty": lambda: shapes.sources_out(pb.ListSourcesResponse()),
    }


def answer_text(build: Callable[[], Any]) -> str:
    """An answer as the tools dump it (``_answer`` in mcp/tools.py)."""
    return json.dumps(build().model_dump(mode="json", exclude_none=True), indent=2)


def output_schemas() -> dict[str, Any]:
    """The output schema of each RPC-mirroring tool, as the MCP server lists it."""
    server = build_server(Backend("127.0.0.1:1"))
    tools = {t.name: t for t in asyncio.run(server.list_tools())}
    return {name: tools[name].output_schema for name in RPC_TOOLS}


def _unordered(schema: Any) -> Any:
    """The schema with its ``required`` lists sorted: field order may change, names may not."""
    if isinstance(schema, dict):
        return {
            key: sorted(value) if key == "required" else _unordered(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_unordered(item) for item in schema]
    return schema


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "kind",
    [
        pb.GetContentResponse,
        pb.ExpandRelatedResponse,
        pb.SummarizeFlowResponse,
        pb.GuideImplementationResponse,
        pb.ListSourcesResponse,
    ],
)
def test_the_full_responses_set_every_field(kind: type[Message]) -> None:
    def walk(message: Message) -> Iterator[Message]:
        yield message
        for f in message.DESCRIPTOR.fields:
            if f.message_type is None:
                continue
            values = getattr(message, f.name)
            for value in values if f.is_repeated else [values]:
                yield from walk(value)

    for message in walk(full(kind)):
        assert _covers_every_field(message.DESCRIPTOR, message), message.DESCRIPTOR.full_name


@pytest.mark.parametrize("case", sorted(_answers()))
def test_answer_text_is_unchanged(recorded: dict[str, Any], case: str) -> None:
    assert answer_text(_answers()[case]) == recorded["answers"][case]


@pytest.mark.parametrize("tool", RPC_TOOLS)
def test_output_schema_is_unchanged(recorded: dict[str, Any], tool: str) -> None:
    assert _unordered(output_schemas()[tool]) == _unordered(recorded["schemas"][tool])


def test_every_case_is_recorded(recorded: dict[str, Any]) -> None:
    assert set(recorded["answers"]) == set(_answers())
    assert set(recorded["schemas"]) == set(RPC_TOOLS)


def record() -> None:
    """Write today's answers and schemas to the recorded file."""
    answers = {case: answer_text(build) for case, build in _answers().items()}
    data = {"answers": answers, "schemas": output_schemas()}
    RECORDED.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(
        f"recorded {len(data['answers'])} answers and {len(data['schemas'])} schemas in {RECORDED}"
    )


if __name__ == "__main__":
    record()
    sys.exit(0)
