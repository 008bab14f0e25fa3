"""Proto ⇄ domain conversion is one module, both ways: what goes out comes back unchanged."""

from __future__ import annotations

from scriptorium.domain.model import RefKind
from scriptorium.domain.outcomes import ContentOutcome, RangeMark, Resolution
from scriptorium.grpc import convert


def _outcome() -> ContentOutcome:
    return ContentOutcome(
        location="tutorial/path-params#order-matters",
        requested_location="tutorial/path-params.md#order-matters",
        url="https://example.org/tutorial/path-params/#order-matters",
        source="en",
        content="## Order matters\n\nDeclare the fixed path first.\n",
        ranges=[RangeMark(3, 3, "list"), RangeMark(5, 7, "code")],
        truncated=True,
        total_lines=120,
        doc_version="sha256:abc@r1",
        resolution=Resolution(
            "resolved",
            rule="variant",
            site="en",
            candidates=["a", "b"],
            detail="the .md suffix was dropped",
            requested_location="tutorial/path-params.md#order-matters",
            resolved_location="tutorial/path-params#order-matters",
        ),
        ref_id="ref-1",
        kind=RefKind.CODE,
        title="Order matters",
        start_line=40,
        end_line=60,
        provider="local",
        revision_skew=True,
        source_revision="r1",
        section_path=["Path Parameters", "Order matters"],
        trace_id="0" * 32,
    )


def test_a_content_answer_survives_the_wire_both_ways():
    outcome = _outcome()
    assert convert.content_outcome_from_pb(convert.content_response(outcome)) == outcome
