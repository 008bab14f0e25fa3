"""Long queries against a real daemon: an agent pasting a whole issue with its traceback gets
an answer from the query's start and is told so; only past the hard cap is it refused.

One daemon (default receive limit) serves a copy of the FastAPI tutorial docs and two example
programs; the gRPC stub, the CLI and the MCP bridge each send it the same long query.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import grpc
import pytest

from scriptorium.client import Client
from scriptorium.limits import MAX_QUERY_CHARS, MAX_TOPIC_CHARS, SEARCHED_QUERY_CHARS
from scriptorium.v1 import retrieval_pb2 as pb
from tests.e2e.test_mcp import McpSession
from tests.support.daemon import CORPUS, Daemon, cli

CALL_TIMEOUT = 60.0
QUESTION = "How do I declare path parameters with types? The docs page on path parameters"
FRAME = (
    '  File "/srv/app/routers/items_{n}.py", line {n}, in read_item\n'
    "    return await dependant.call(**values)  # TypeError: value is not a valid integer\n"
)


def issue_text(chars: int) -> str:
    """An issue as an agent pastes it: the question, then a traceback of about ``chars``."""
    text, n = QUESTION + "\n\nTraceback (most recent call last):\n", 0
    while len(text) < chars:
        text += FRAME.format(n=n)
        n += 1
    return text


@pytest.fixture(scope="module")
def daemon(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    work = tmp_path_factory.mktemp("long-queries")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", work / "project/docs/tutorial")
    (work / "project/src").mkdir()
    shutil.copy(CORPUS / "docs_src/path_params/tutorial001_py310.py", work / "project/src/p.py")
    with Daemon([str(work / "project"), "--no-watch"], work / "state") as running:
        yield running


def test_a_20_kb_issue_is_answered_from_its_start_and_says_so(daemon: Daemon) -> None:
    query = issue_text(20_000)
    reply = daemon.stub.Search(pb.SearchRequest(query=query), timeout=CALL_TIMEOUT)
    assert reply.query_truncated
    used = reply.query_chars_used
    assert SEARCHED_QUERY_CHARS - 200 < used <= SEARCHED_QUERY_CHARS
    assert query[used].isspace() and not query[used - 1].isspace(), "cut inside a word"
    assert reply.results, "a long query must still be answered"
    assert any("path-params" in r.location for r in reply.results[:3])


def test_a_short_query_is_searched_whole(daemon: Daemon) -> None:
    reply = daemon.stub.Search(pb.SearchRequest(query=QUESTION), timeout=CALL_TIMEOUT)
    assert not reply.query_truncated
    assert reply.query_chars_used == len(QUESTION)


def test_a_query_past_the_hard_cap_is_invalid_and_names_the_limit(daemon: Daemon) -> None:
    query = "path " * (MAX_QUERY_CHARS // 5 + 1)
    with pytest.raises(grpc.RpcError) as caught:
        daemon.stub.Search(pb.SearchRequest(query=query), timeout=CALL_TIMEOUT)
    err = caught.value
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert str(MAX_QUERY_CHARS) in err.details() and str(SEARCHED_QUERY_CHARS) in err.details()
    assert "Traceback" not in err.details() and "path path" not in err.details()
    assert daemon.stub.Search(pb.SearchRequest(query=QUESTION), timeout=CALL_TIMEOUT).results


def test_a_long_guide_topic_is_used_from_its_start_and_says_so(daemon: Daemon) -> None:
    topic = issue_text(5_000)
    reply = daemon.stub.GuideImplementation(
        pb.GuideImplementationRequest(topic=topic), timeout=CALL_TIMEOUT
    )
    assert reply.topic_truncated
    assert 0 < reply.topic_chars_used <= MAX_TOPIC_CHARS
    assert reply.docs
    short = daemon.stub.GuideImplementation(
        pb.GuideImplementationRequest(topic="path parameters"), timeout=CALL_TIMEOUT
    )
    assert not short.topic_truncated and short.topic_chars_used == len("path parameters")
    with pytest.raises(grpc.RpcError) as caught:
        daemon.stub.GuideImplementation(
            pb.GuideImplementationRequest(topic="oauth " * (MAX_QUERY_CHARS // 6 + 1)),
            timeout=CALL_TIMEOUT,
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert str(MAX_QUERY_CHARS) in caught.value.details()


def test_the_python_client_returns_the_flag(daemon: Daemon) -> None:
    with Client(daemon.address) as client:
        reply = client.search(issue_text(20_000), top_k=3)
    assert reply.query_truncated and reply.query_chars_used <= SEARCHED_QUERY_CHARS


def test_the_cli_prints_a_one_line_note(daemon: Daemon) -> None:
    long = cli(daemon, "search", issue_text(20_000))
    assert long.returncode == 0, long.stderr
    notes = [line for line in long.stdout.splitlines() if line.startswith("note: the query")]
    assert len(notes) == 1 and "characters were searched" in notes[0]
    short = cli(daemon, "search", QUESTION)
    assert short.returncode == 0, short.stderr
    assert "note: the query" not in short.stdout


def test_mcp_search_docs_says_the_query_was_cut(daemon: Daemon) -> None:
    with McpSession(["--target", daemon.address]) as session:
        long = session.call("search_docs", {"query": issue_text(20_000), "maxResults": 3})
        short = session.call("search_docs", {"query": QUESTION, "maxResults": 3})
    assert not long.is_error
    assert long.structured_content["QueryTruncated"] is True
    assert 0 < long.structured_content["QueryCharsUsed"] <= SEARCHED_QUERY_CHARS
    assert json.loads(long.content[0].text) == long.structured_content["result"]
    assert "only its first" in long.content[-1].text
    assert "QueryTruncated" not in short.structured_content and len(short.content) == 1
