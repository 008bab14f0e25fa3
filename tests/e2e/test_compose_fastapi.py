"""Code search, implementation mode and the composing RPCs over the FastAPI corpus."""

from __future__ import annotations

import grpc
import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.calls import search


def ref_for(stub, location: str) -> str:
    return stub.GetContent(pb.GetContentRequest(location=location), timeout=30).ref_id


@pytest.mark.parametrize("query", ["OAuth2PasswordBearer", "oauth2 password bearer"])
def test_code_search_finds_definitions_by_identifier_and_its_parts(stub, query):
    response = search(stub, query, kinds=[pb.CORPUS_CODE], top_k=5)
    top = response.results[0]
    assert top.kind == pb.REF_KIND_CODE
    assert top.location.startswith("fastapi/security/oauth2.py#L")
    assert top.language == "python"
    # The snippet is centred on the anchor line, which names the class.
    assert top.start_line <= top.anchor_line <= top.end_line
    assert "OAuth2PasswordBearer" in top.snippet


@pytest.mark.parametrize("name", ["Depends", "Security", "APIRouter"])
def test_a_bare_name_finds_its_definition_among_docs_and_code(stub, name):
    # "Depends" is the token "depend", which hundreds of blocks about dependencies carry; the
    # definition (a long docstring) must still be retrieved and lead the code results.
    response = search(stub, name, top_k=5)
    code = [r for r in response.results if r.kind == pb.REF_KIND_CODE]
    assert code and code[0].title.split(".")[-1] == name, [r.location for r in response.results]


def test_code_get_content_modes(stub):
    top = search(stub, "OAuth2PasswordBearer", kinds=[pb.CORPUS_CODE]).results[0]
    snippet = stub.GetContent(pb.GetContentRequest(ref_id=top.ref_id, mode=pb.CONTENT_MODE_SNIPPET))
    assert snippet.kind == pb.REF_KIND_CODE
    assert snippet.start_line <= top.anchor_line <= snippet.end_line
    full = stub.GetContent(pb.GetContentRequest(ref_id=top.ref_id, mode=pb.CONTENT_MODE_FULL))
    assert full.total_lines == len(full.content.split("\n"))
    multi = stub.GetContent(
        pb.GetContentRequest(ref_id=top.ref_id, mode=pb.CONTENT_MODE_MULTI_RANGE)
    )
    reasons = {r.reason for r in multi.ranges}
    assert {"anchor", "signature"} <= reasons
    capped = stub.GetContent(
        pb.GetContentRequest(ref_id=top.ref_id, mode=pb.CONTENT_MODE_FULL, max_lines=10)
    )
    assert capped.truncated and len(capped.content.split("\n")) == 10
    assert capped.start_line <= top.anchor_line <= capped.end_line
    whole = stub.GetContent(pb.GetContentRequest(location="fastapi/security/oauth2.py"))
    assert whole.kind == pb.REF_KIND_FILE and whole.start_line == 1


def test_implementation_mode_puts_handlers_and_wiring_above_prose(stub):
    query = "dependency that gets the current user from the token"
    plain = search(stub, query)
    impl = search(stub, query, mode="implementation", explain=True)
    kinds = [r.kind for r in impl.results[:5]]
    assert pb.REF_KIND_CODE in kinds and pb.REF_KIND_DOC in kinds
    first_code = next(r for r in impl.results if r.kind == pb.REF_KIND_CODE)
    names = {reason.name for reason in first_code.reasons}
    assert "dependency-injection" in names or "route" in names
    plain_rank = (
        [r.location for r in plain.results].index(first_code.location)
        if first_code.location in [r.location for r in plain.results]
        else 99
    )
    impl_rank = [r.location for r in impl.results].index(first_code.location)
    assert impl_rank <= plain_rank


def test_expand_related_reaches_the_example_and_the_library_code(stub):
    seed = ref_for(stub, "tutorial/background-tasks#using-backgroundtasks")
    reply = stub.ExpandRelated(pb.ExpandRelatedRequest(ref_ids=[seed], top_k=10))
    by_location = {r.location: r for r in reply.related}
    example = by_location["docs_src/background_tasks/tutorial001_py310.py"]
    assert "doc-link" in {r.name for r in example.reasons}
    library = next(r for loc, r in by_location.items() if loc.startswith("fastapi/background.py"))
    assert "imports" in {r.name for r in library.reasons}
    for related in reply.related:
        assert related.reasons and all(r.weight > 0 for r in related.reasons)
        assert related.location != "tutorial/background-tasks#using-backgroundtasks"


def test_expand_related_reports_stale_refs_and_refuses_malformed_ones(stub):
    seed = ref_for(stub, "tutorial/cors#use-corsmiddleware")
    with pytest.raises(grpc.RpcError) as err:
        stub.ExpandRelated(pb.ExpandRelatedRequest(ref_ids=["not-a-ref"]))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    reply = stub.ExpandRelated(pb.ExpandRelatedRequest(ref_ids=[seed]))
    assert reply.related


def test_summarize_flow_keeps_numbered_steps_in_order(stub):
    seed = ref_for(stub, "advanced/dataclasses#dataclasses-in-nested-data-structures")
    reply = stub.SummarizeFlow(pb.SummarizeFlowRequest(ref_ids=[seed], max_steps=4))
    assert [s.origin for s in reply.flow] == ["numbered"] * 4
    assert reply.flow[0].title.startswith("We still import")
    assert [s.index for s in reply.flow] == [1, 2, 3, 4]
    assert reply.confidence == pb.CONFIDENCE_HIGH
    again = stub.SummarizeFlow(pb.SummarizeFlowRequest(ref_ids=[seed], max_steps=4))
    assert again.flow == reply.flow


def test_summarize_flow_reads_labelled_steps_in_japanese_docs(stub):
    seed = ref_for(stub, "ja/tutorial/first-steps#recap-step-by-step")
    reply = stub.SummarizeFlow(pb.SummarizeFlowRequest(ref_ids=[seed]))
    titles = [s.title for s in reply.flow]
    assert [s.origin for s in reply.flow][:6] == ["labelled"] * 6
    assert titles[0].startswith("Step 1") and "インポート" in titles[0]
    assert all(s.locations == ["ja/tutorial/first-steps#recap-step-by-step"] for s in reply.flow)


def test_summarize_flow_without_refs_falls_back_to_the_topic(stub):
    reply = stub.SummarizeFlow(pb.SummarizeFlowRequest(topic="add CORS middleware"))
    assert reply.flow
    assert any("topic" in a for a in reply.assumptions)
    empty = stub.SummarizeFlow(pb.SummarizeFlowRequest())
    assert not empty.flow and empty.confidence == pb.CONFIDENCE_LOW


@pytest.mark.parametrize(
    ("topic", "doc_page", "sample_dir"),
    [
        ("OAuth2 password flow login", "tutorial/security/", "docs_src/security/"),
        (
            "run background tasks after returning a response",
            "tutorial/background-tasks",
            "docs_src/background_tasks/",
        ),
        (
            "enable CORS for a frontend on another origin",
            "tutorial/cors",
            ("docs_src/cors/", "fastapi/middleware/cors.py"),
        ),
    ],
)
def test_guide_implementation_is_grounded_in_the_task(stub, topic, doc_page, sample_dir):
    reply = stub.GuideImplementation(
        pb.GuideImplementationRequest(topic=topic, framework="fastapi", language="python"),
        timeout=60,
    )
    assert reply.query.startswith(topic)
    assert any(d.location.startswith(doc_page) for d in reply.docs), [
        d.location for d in reply.docs
    ]
    assert any(s.location.startswith(sample_dir) for s in reply.sample_code), [
        s.location for s in reply.sample_code
    ]
    assert reply.flow and all(step.ref_ids for step in reply.flow)
    known = {d.ref_id for d in reply.docs} | {s.ref_id for s in reply.sample_code}
    assert all(ref in known for step in reply.flow for ref in step.ref_ids)


def test_guide_says_when_the_corpus_has_no_support(stub):
    reply = stub.GuideImplementation(
        pb.GuideImplementationRequest(topic="configure kotlin coroutine flows", framework="ktor"),
        timeout=60,
    )
    assert any("ktor" in a for a in reply.assumptions)
    assert reply.confidence in (pb.CONFIDENCE_LOW, pb.CONFIDENCE_MEDIUM)


def test_guide_names_the_specific_words_no_supporting_ref_mentions(stub):
    # The corpus has deployment and background-task pages, but nothing on cron or periodic
    # jobs: the guide still offers its leads, names what they do not cover, and says low.
    uncovered = stub.GuideImplementation(
        pb.GuideImplementationRequest(topic="run periodic cron jobs", framework="fastapi"),
        timeout=60,
    )
    assert uncovered.docs or uncovered.sample_code
    named = [a for a in uncovered.assumptions if a.startswith("no supporting ref mentions")]
    assert named and "'cron'" in named[0] and "'periodic'" in named[0], uncovered.assumptions
    assert uncovered.confidence == pb.CONFIDENCE_LOW
    # Common words are not topic words: a covered topic phrased with them names nothing.
    covered = stub.GuideImplementation(
        pb.GuideImplementationRequest(
            topic="run background tasks after returning a response to their client",
            framework="fastapi",
        ),
        timeout=60,
    )
    assert not any(a.startswith("no supporting ref mentions") for a in covered.assumptions)
    assert covered.confidence != pb.CONFIDENCE_LOW
