"""Proto ⇄ domain conversion is one module, both ways: what goes out comes back unchanged."""

from __future__ import annotations

from scriptorium.domain.model import Corpus, RefKind
from scriptorium.domain.outcomes import (
    ContentOutcome,
    FlowParams,
    GuideParams,
    RangeMark,
    RelatedParams,
    Resolution,
)
from scriptorium.grpc import convert
from scriptorium.v1 import retrieval_pb2 as pb


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


def test_composed_requests_become_their_params() -> None:
    related = convert.related_params(
        pb.ExpandRelatedRequest(
            ref_ids=["r1", "r2"],
            top_k=4,
            kinds=[pb.CORPUS_CODE],
            mode="implementation",
            sources=["en"],
        )
    )
    assert related == RelatedParams(["r1", "r2"], 4, (Corpus.CODE,), "implementation", ("en",))
    flow = convert.flow_params(
        pb.SummarizeFlowRequest(
            ref_ids=["r1"], topic="auth", style=pb.FLOW_STYLE_COMPACT, max_steps=3
        )
    )
    assert flow == FlowParams(["r1"], "auth", convert.flow_style_from_pb(pb.FLOW_STYLE_COMPACT), 3)
    guide = convert.guide_params(
        pb.GuideImplementationRequest(
            topic="login",
            framework="fastapi",
            language="python",
            max_docs=2,
            max_samples=1,
            sources=["code"],
        )
    )
    assert guide == GuideParams("login", "fastapi", "python", 2, 1, "", ("code",))
