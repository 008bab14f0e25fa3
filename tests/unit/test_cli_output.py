"""The CLI's text rendering of an explained search (``scriptorium search --explain``)."""

from __future__ import annotations

from scriptorium.cli.output import format_search
from scriptorium.v1 import retrieval_pb2 as pb


def test_explain_names_the_terms_only_the_documentation_pool_searched():
    response = pb.SearchResponse(
        trace_id="t",
        provider="local",
        understood=pb.UnderstoodQuery(terms=["target", "one", "hot"], docs_terms=["one_hot"]),
    )
    text = format_search(response, explain=True)
    assert "understood: terms=['target', 'one', 'hot'] mode=default" in text
    assert "docs pool also: ['one_hot']" in text
    # Without such names, the line is not printed.
    response.understood.ClearField("docs_terms")
    assert "docs pool also" not in format_search(response, explain=True)
