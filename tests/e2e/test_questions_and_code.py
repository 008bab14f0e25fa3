"""A question that names no identifier asks for the docs, and so does a sentence about using a
name: served as ``scriptorium serve REPO`` serves a clone (its Markdown as ``docs``, its code as
``code``), the page that explains retries comes before the code that matches the same words,
and the tests below both."""

from __future__ import annotations

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import explained, running
from tests.support.trees import write, write_tree

FILES = {
    "docs/retries.md": "# Retries\n\nA failed request is retried on connection errors. Pass "
    "`retries=3` to the transport to retry a failed request three times before it gives up.\n\n"
    "## Retrying by hand\n\nCall `retry_failed_request(request, retries)` to retry one "
    "request yourself.\n",
    "pkg/transport.py": '"""The transport."""\n\n\ndef retry_failed_request(request, retries):\n'
    '    """Retry a failed request: each failed request is retried up to retries times."""\n'
    "    for _ in range(retries):\n        request = request.again()  # retried request\n"
    "    return request\n",
    "pkg/__tests__/transport.test.js": "function retriesFailedRequest() {\n"
    "  // which function retries a failed request: a failed request retries\n"
    "  retry(failedRequest, retries)\n}\n",
}


@pytest.fixture(scope="module", params=[None, 1.0], ids=["shipped", "factor-off"])
def served(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("questions")
    repo = write_tree(root / "repo", FILES)
    args = [str(repo)]
    if request.param is not None:
        config = write(
            root / "config.toml",
            f"[ranking]\nquestion_code_factor = {request.param}\n"
            f"usage_question_code_factor = {request.param}\n",
        )
        args += ["--config", str(config)]
    with running(args, root / "state") as daemon:
        yield request.param, daemon


def _where(results: list[pb.SearchResult]) -> list[str]:
    return [f"{r.source}:{r.location}" for r in results]


def _reasons(result: pb.SearchResult) -> dict[str, str]:
    return {reason.name: reason.detail for reason in result.reasons}


def _page_and_code(daemon, query: str, page: str) -> tuple[list[pb.SearchResult], int, int]:
    """The results of ``query``, the place of ``page`` among them and of the transport's code."""
    results = explained(daemon, query)
    found = _where(results)
    code = next(i for i, f in enumerate(found) if f.startswith("code:pkg/transport.py"))
    return results, found.index(f"docs:docs/retries#{page}"), code


def test_a_question_gets_the_page_first_and_code_when_it_asks_for_code(served):
    factor, daemon = served
    results, page, code = _page_and_code(daemon, "how do I retry a failed request", "retries")
    found = _where(results)
    if factor is None:
        assert page < code, found
        assert "question" in _reasons(results[code]), results[code].reasons
    else:  # without the factor the code's stronger match wins: what the lever is for
        assert code < page, found
    # A question that names the function, or asks for one, is about the code: no factor.
    for query in ("where is retry_failed_request", "which function retries a failed request"):
        for result in explained(daemon, query):
            assert "question" not in _reasons(result), (query, result.location, result.reasons)


def test_a_sentence_about_using_a_name_gets_the_page_first_and_a_lookup_the_code(served):
    factor, daemon = served
    query = "how do I use retry_failed_request by hand"
    results, page, code = _page_and_code(daemon, query, "retrying-by-hand")
    found = _where(results)
    if factor is None:
        assert page < code, found
        assert _reasons(results[code])["question"] == (
            "a question about using the names it gives"
        ), results[code].reasons
    else:
        assert code < page, found
    # The bare name, or the name after a keyword that opens a definition, is a lookup.
    for query in ("retry_failed_request", "def retry_failed_request"):
        results = explained(daemon, query)
        assert _where(results)[0].startswith("code:pkg/transport.py"), (query, _where(results))
        assert all("question" not in _reasons(r) for r in results), query


def test_a_name_spelled_as_words_is_looked_up(served):
    _, daemon = served
    results = explained(daemon, "retry failed request")
    assert _where(results)[0].startswith("code:pkg/transport.py"), _where(results)
    reasons = _reasons(results[0])
    assert "question" not in reasons and reasons.get("definition") == "defines a queried name"


def test_a_javascript_test_file_yields_to_the_code_it_tests(served):
    _, daemon = served
    results = explained(daemon, "which function retries a failed request")
    found = _where(results)
    test = next(i for i, f in enumerate(found) if "__tests__" in f)
    code = next(i for i, f in enumerate(found) if f.startswith("code:pkg/transport.py"))
    assert code < test, found
    assert _reasons(results[test]).get("auxiliary") == "tests", results[test].reasons
