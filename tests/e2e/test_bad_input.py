"""Bad input against a real daemon: every call gets a clear status and the daemon keeps serving.

One daemon serves the whole module: a copy of the FastAPI tutorial docs and the ``fastapi``
package, watched (so stale refs can be produced by editing files), with a small receive limit
(so an oversized message can be sent cheaply). After every bad call a normal Search must still
answer.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker, times_reached
from scriptorium.grpc.status import resolution_from_error
from scriptorium.limits import MAX_TOPIC_CHARS, SEARCHED_QUERY_CHARS
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.calls import search
from tests.support.daemon import CORPUS, Daemon
from tests.support.trees import write
from tests.support.waiting import wait_for

MAX_RECEIVE = 200_000
CALL_TIMEOUT = 15.0
SECRET = "quuxplughsecret"


# -- fixture ---------------------------------------------------------------------------------------


class Tree:
    """The served tree and the things around it that must never be served."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.docs = root / "docs"
        self.code = root / "code"
        self.outside = root / "outside"


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Tree:
    t = Tree(tmp_path_factory.mktemp("bad-input"))
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", t.docs / "tutorial")
    shutil.copytree(CORPUS / "fastapi", t.code / "fastapi")
    write(t.docs / "stale.md", "# Stale page\n\n## Ocelot section\n\nThe ocelot waits.\n")
    write(t.docs / "gone.md", "# Gone page\n\n## Narwhal section\n\nThe narwhal swims.\n")
    secret = write(t.outside / "secret.md", f"# Secret\n\n{SECRET}\n")
    # A file outside the root that shares its leaf name with a page inside it.
    write(t.outside / "path-params.md", f"# Path params impostor\n\n{SECRET}\n")
    (t.docs / "leak.md").symlink_to(secret)
    (t.docs / "leakdir").symlink_to(t.outside, target_is_directory=True)
    return t


def tree_config(path: Path, tree: Tree, server: str) -> Path:
    """The tree's docs and code as two default sources, under ``[server]`` lines ``server``."""
    return write(
        path,
        f"""
[server]
{server}

[[sources]]
name = "docs"
kind = "markdown"
root = "{tree.docs}"
default = true

[[sources]]
name = "code"
kind = "code"
root = "{tree.code}"
default = true
""",
    )


@pytest.fixture(scope="module")
def daemon(tree: Tree) -> Iterator[Daemon]:
    config = tree_config(
        tree.root / "scriptorium.toml",
        tree,
        f"watch = true\nwatch_interval = 0.2\nmax_receive_message_bytes = {MAX_RECEIVE}",
    )
    d = Daemon(["--config", str(config)], tree.root / "state")
    d.start()
    yield d
    d.terminate()


@pytest.fixture()
def stub(daemon: Daemon):
    return daemon.stub


def assert_serving(stub) -> None:
    """A normal search still answers with results."""
    reply = search(stub, "declare path parameters")
    assert reply.results, "a normal Search returned nothing after the bad call"


def rpc_error(call: Callable[[], object]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value


def forge(source: str, kind: str, path: str, anchor: str = "", line: str = "1") -> str:
    """A ref id in the daemon's (documented, opaque) encoding, to probe what it accepts."""
    raw = "\x1f".join([source, kind, path, anchor, line, "0" * 12])
    return "r1." + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


# -- Search ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", " ", "   \t\n\r  ", "\u3000\u00a0"])
def test_empty_and_whitespace_queries_return_nothing(stub, query):
    reply = search(stub, query)
    assert list(reply.results) == []
    assert reply.trace_id
    assert_serving(stub)


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("path " * 20_000, "a 100 kB query"),
        ("a" * 10_000, "a single 10 kB token"),
        ("b" * (SEARCHED_QUERY_CHARS + 1), "one character over what is searched"),
    ],
)
def test_long_queries_are_answered_from_their_start_and_say_so(stub, query, why):
    # Past the hard cap (limits.MAX_QUERY_CHARS) a query is refused: tests/e2e/test_long_queries.py,
    # against a daemon whose receive limit lets such a message through.
    reply = search(stub, query)
    assert reply.query_truncated, why
    assert 0 < reply.query_chars_used <= SEARCHED_QUERY_CHARS, why
    assert_serving(stub)


def test_query_at_the_searched_length_is_answered_whole(stub):
    reply = search(stub, "x" * SEARCHED_QUERY_CHARS)
    assert list(reply.results) == []
    assert reply.abstain_reason == pb.ABSTAIN_REASON_NO_CANDIDATES
    assert not reply.query_truncated and reply.query_chars_used == SEARCHED_QUERY_CHARS
    assert_serving(stub)


@pytest.mark.parametrize(
    "query",
    [
        "\x00\x01path\x07 parameters\x7f\x1b[31m",
        "\x00",
        "path\u200bparameters\u202e\ufeff",
        "\x80\x81\x9f\xa0\xff binary-ish \ufffd\ufffd",
    ],
)
def test_control_and_binaryish_characters_are_answered(stub, query):
    reply = search(stub, query)
    assert reply.trace_id
    assert_serving(stub)


def test_control_characters_do_not_hide_the_words_around_them(stub):
    plain = [r.location for r in search(stub, "path parameters").results]
    noisy = [r.location for r in search(stub, "\x00path\x07 \x1bparameters\x7f").results]
    assert noisy and noisy[0] == plain[0]


@pytest.mark.parametrize("query", ["!!! ??? ... ;;; ---", "*", "\\", '+-&&||!(){}[]^"~*?:\\/'])
def test_punctuation_only_abstains_with_no_candidates(stub, query):
    reply = search(stub, query)
    assert list(reply.results) == []
    assert reply.abstained
    assert reply.abstain_reason == pb.ABSTAIN_REASON_NO_CANDIDATES
    assert_serving(stub)


def test_stopwords_only_is_answered_without_error(stub):
    reply = search(stub, "the of and", explain=True)
    # Stopwords are kept as terms (they can matter in code); the answer is well formed either way.
    assert reply.trace_id
    assert reply.understood.term_count == len(reply.understood.terms) >= 1
    assert_serving(stub)


@pytest.mark.parametrize(
    "query",
    [
        "foo(bar",
        '"unterminated',
        "title:x^2",
        "body:[* TO *]",
        "a AND OR NOT",
        "~2 path",
        "path-params OR 1=1; DROP TABLE",
    ],
)
def test_query_syntax_characters_are_plain_text(stub, query):
    reply = search(stub, query)
    assert reply.trace_id
    assert_serving(stub)


def test_query_syntax_does_not_change_the_terms(stub):
    reply = search(stub, "title:path^2", explain=True)
    assert reply.understood.terms, "the words around syntax characters are still terms"
    assert not any(":" in t or "^" in t for t in reply.understood.terms)


def test_mixed_scripts_are_answered(stub):
    reply = search(stub, "FastAPI パス 参数 path параметры الطريق")
    assert reply.results, "the English terms of a mixed-script query still match"
    assert_serving(stub)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("top_k", -5, 10),
        ("top_k", 0, 10),
        ("top_k", 2**31 - 1, 25),
    ],
)
def test_top_k_out_of_range_is_clamped(stub, field, value, expected):
    reply = search(stub, "parameter", **{field: value})
    assert len(reply.results) == expected
    assert_serving(stub)


@pytest.mark.parametrize(("value", "cap"), [(-3, 8), (0, 8), (10**6, 40)])
def test_snippet_lines_out_of_range_are_clamped(stub, value, cap):
    reply = search(stub, "path parameters", snippet_lines=value)
    assert reply.results
    assert all(len(r.snippet.splitlines()) <= cap for r in reply.results)
    assert_serving(stub)


def test_negative_token_budget_is_invalid(stub):
    err = rpc_error(lambda: search(stub, "path parameters", token_budget=-1))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "token_budget" in err.details()
    assert_serving(stub)


def test_negative_token_budget_of_a_composing_call_is_invalid(stub):
    ref = search(stub, "declare path parameters").results[0].ref_id
    calls = [
        lambda: stub.ExpandRelated(
            pb.ExpandRelatedRequest(ref_ids=[ref], token_budget=-1), timeout=CALL_TIMEOUT
        ),
        lambda: stub.SummarizeFlow(
            pb.SummarizeFlowRequest(ref_ids=[ref], token_budget=-1), timeout=CALL_TIMEOUT
        ),
        lambda: stub.GuideImplementation(
            pb.GuideImplementationRequest(topic="path parameters", token_budget=-1),
            timeout=CALL_TIMEOUT,
        ),
    ]
    for call in calls:
        err = rpc_error(call)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "token_budget" in err.details()
    assert_serving(stub)


def test_unknown_mode_names_the_known_ones(stub):
    err = rpc_error(lambda: search(stub, "path parameters", mode="no-such-mode"))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "default" in err.details() and "implementation" in err.details()
    assert_serving(stub)


def test_unknown_source_names_the_known_ones(stub):
    err = rpc_error(lambda: search(stub, "path parameters", sources=["docs", "nope"]))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "nope" in err.details() and "code" in err.details()
    assert_serving(stub)


@pytest.mark.parametrize("value", [7, -1, 2**31 - 1])
def test_unknown_corpus_enum_value_is_invalid(stub, value):
    err = rpc_error(lambda: search(stub, "path parameters", kinds=[value]))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert str(value) in err.details()
    assert_serving(stub)


# -- GetContent ------------------------------------------------------------------------------------


def get(stub, **kw) -> pb.GetContentResponse:
    return stub.GetContent(pb.GetContentRequest(**kw), timeout=CALL_TIMEOUT)


@pytest.mark.parametrize(
    "ref_id",
    [
        "r1.!!!",
        "not-a-ref",
        "r1.",
        "r2." + "A" * 20,
        "r1." + "A" * 5000,
        forge("docs", "z", "tutorial/path-params.md"),
        forge("code", "c", "fastapi/routing.py", line="-4"),
        forge("code", "c", "fastapi/routing.py", line="four"),
        forge("", "d", "tutorial/path-params.md"),
    ],
)
def test_malformed_refs_are_invalid(stub, ref_id):
    err = rpc_error(lambda: get(stub, ref_id=ref_id))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "ref_id" in err.details()
    assert_serving(stub)


def test_neither_or_both_of_ref_and_location_is_invalid(stub):
    assert rpc_error(lambda: get(stub)).code() == grpc.StatusCode.INVALID_ARGUMENT
    both = rpc_error(lambda: get(stub, ref_id="r1.x", location="tutorial/path-params"))
    assert both.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_serving(stub)


def test_ref_to_unknown_source_is_unknown_site(stub):
    err = rpc_error(lambda: get(stub, ref_id=forge("nope", "d", "tutorial/path-params.md")))
    assert err.code() == grpc.StatusCode.NOT_FOUND
    resolution = resolution_from_error(err)
    assert resolution is not None and resolution.reason == "unknown_site"
    assert_serving(stub)


def test_ref_past_the_end_of_a_file_is_not_found(stub):
    err = rpc_error(
        lambda: get(stub, ref_id=forge("code", "c", "fastapi/routing.py", line="9" * 21))
    )
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert resolution_from_error(err).reason == "not_found"
    assert_serving(stub)


def _first_result(stub, query: str, location_prefix: str) -> pb.SearchResult:
    for result in search(stub, query, kinds=[pb.CORPUS_DOCS]).results:
        if result.location.startswith(location_prefix):
            return result
    raise AssertionError(f"no result for {location_prefix!r}")


def test_stale_ref_to_changed_file_is_served_with_revision_skew(stub, tree):
    old = _first_result(stub, "ocelot", "stale")
    write(tree.docs / "stale.md", "# Stale page\n\n## Ocelot section\n\nThe ocelot now sleeps.\n")

    def changed() -> bool:
        return get(stub, location="stale").doc_version != old.doc_version

    assert wait_for(changed), "the edit was never indexed"
    reply = get(stub, ref_id=old.ref_id, seen_doc_version=old.doc_version)
    assert reply.revision_skew
    assert reply.doc_version != old.doc_version
    assert "now sleeps" in reply.content
    assert reply.resolution.reason == "resolved"
    assert_serving(stub)


def test_stale_ref_to_deleted_file_is_not_found(stub, tree):
    old = _first_result(stub, "narwhal", "gone")
    (tree.docs / "gone.md").unlink()
    assert wait_for(
        lambda: not any(r.location.startswith("gone") for r in search(stub, "narwhal").results)
    )
    err = rpc_error(lambda: get(stub, ref_id=old.ref_id))
    assert err.code() == grpc.StatusCode.NOT_FOUND
    resolution = resolution_from_error(err)
    assert resolution is not None and resolution.reason == "not_found"
    assert_serving(stub)


@pytest.mark.parametrize(
    "location",
    [
        "../../etc/passwd",
        "tutorial/../../../etc/passwd",
        "%2e%2e/%2e%2e/etc/passwd",
        "..%2f..%2fetc%2fpasswd",
        "tutorial/%2E%2E/%2E%2E/outside/secret",
        "..\\..\\outside\\secret",
        "C:\\Windows\\win.ini",
        "//server/share/secret",
        "~/.ssh/id_rsa",
        "tutorial/path-params\x00.md",
        "tutorial/path-params%00",
        "tutorial/path-params\x07",
    ],
)
def test_traversal_and_control_locations_are_invalid(stub, location):
    err = rpc_error(lambda: get(stub, location=location))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_serving(stub)


@pytest.mark.parametrize("location", ["/etc/passwd", "file:///etc/passwd", "%252e%252e/etc/passwd"])
def test_absolute_and_double_encoded_locations_are_not_found(stub, location):
    err = rpc_error(lambda: get(stub, location=location))
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert resolution_from_error(err).reason == "not_found"
    assert_serving(stub)


def test_absolute_path_outside_the_root_never_reads_that_file(stub, tree):
    """Only indexed pages can answer: a shared leaf name resolves to the page inside the root."""
    location = str(tree.outside / "path-params.md")
    try:
        reply = get(stub, location=location, mode=pb.CONTENT_MODE_FULL)
    except grpc.RpcError as err:
        assert err.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)
    else:
        assert SECRET not in reply.content
        assert reply.location == "tutorial/path-params"
    assert_serving(stub)


@pytest.mark.parametrize(
    ("source", "kind", "path"),
    [
        ("docs", "d", "../outside/secret.md"),
        ("docs", "d", "tutorial/../../outside/secret.md"),
        ("docs", "f", "/etc/passwd"),
        ("code", "f", "/etc/passwd"),
        ("docs", "d", "C:/Windows/win.ini"),
        ("docs", "d", "tutorial/path-params.md\x00.png"),
        ("docs", "d", "..\\outside\\secret.md"),
    ],
)
def test_forged_refs_escaping_the_root_are_invalid(stub, source, kind, path):
    err = rpc_error(lambda: get(stub, ref_id=forge(source, kind, path)))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "refused" in err.details()
    assert_serving(stub)


@pytest.mark.parametrize("target", ["leak", "leak.md", "leakdir/secret", "leakdir/path-params"])
def test_symlinks_out_of_the_root_are_never_served(stub, target):
    try:
        reply = get(stub, location=target, mode=pb.CONTENT_MODE_FULL)
    except grpc.RpcError as err:
        assert err.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION)
    else:
        # Only a page inside the root may answer (here by its unique leaf name).
        assert SECRET not in reply.content
        assert not reply.location.startswith("leak")
    forged = rpc_error(
        lambda: get(stub, ref_id=forge("docs", "d", target.removesuffix(".md") + ".md"))
    )
    assert forged.code() == grpc.StatusCode.NOT_FOUND
    assert not search(stub, SECRET).results
    assert_serving(stub)


def test_symlink_created_at_run_time_is_not_indexed(stub, tree):
    (tree.docs / "late-leak.md").symlink_to(tree.outside / "secret.md")
    write(tree.docs / "canary.md", "# Canary\n\nThe quetzal canary sings.\n")
    # The canary is written after the symlink, so once it is searchable the link was seen too.
    assert wait_for(lambda: bool(search(stub, "quetzal").results))
    assert not search(stub, SECRET).results
    err = rpc_error(lambda: get(stub, location="late-leak"))
    assert err.code() == grpc.StatusCode.NOT_FOUND


def test_negative_max_lines_is_invalid(stub):
    err = rpc_error(lambda: get(stub, location="tutorial/path-params", max_lines=-1))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "max_lines" in err.details()
    assert_serving(stub)


def test_huge_max_lines_is_capped_to_the_document(stub):
    reply = get(
        stub, location="tutorial/path-params", mode=pb.CONTENT_MODE_FULL, max_lines=2**31 - 1
    )
    assert not reply.truncated
    assert 0 < len(reply.content.splitlines()) <= reply.total_lines
    assert_serving(stub)


@pytest.mark.parametrize("mode", [9, -2, 2**31 - 1])
def test_unknown_content_mode_is_invalid(stub, mode):
    err = rpc_error(lambda: get(stub, location="tutorial/path-params", mode=mode))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "content mode" in err.details()
    assert_serving(stub)


def test_overlong_location_is_invalid(stub):
    err = rpc_error(lambda: get(stub, location="a/" * 5000))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "longer than" in err.details()
    assert_serving(stub)


# -- the composing calls ---------------------------------------------------------------------------


def test_composing_calls_reject_bad_enums_and_clamp_counts(stub):
    refs = [r.ref_id for r in search(stub, "path parameters").results[:2]]
    flow = rpc_error(
        lambda: stub.SummarizeFlow(
            pb.SummarizeFlowRequest(ref_ids=refs, style=9), timeout=CALL_TIMEOUT
        )
    )
    assert flow.code() == grpc.StatusCode.INVALID_ARGUMENT
    related = rpc_error(
        lambda: stub.ExpandRelated(
            pb.ExpandRelatedRequest(ref_ids=refs, kinds=[9]), timeout=CALL_TIMEOUT
        )
    )
    assert related.code() == grpc.StatusCode.INVALID_ARGUMENT
    guide = rpc_error(
        lambda: stub.GuideImplementation(
            pb.GuideImplementationRequest(topic="path parameters", style=9), timeout=CALL_TIMEOUT
        )
    )
    assert guide.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Negative counts fall back to the defaults rather than failing.
    assert stub.ExpandRelated(pb.ExpandRelatedRequest(ref_ids=refs, top_k=-3), timeout=CALL_TIMEOUT)
    steps = stub.SummarizeFlow(
        pb.SummarizeFlowRequest(ref_ids=refs, max_steps=-9), timeout=CALL_TIMEOUT
    )
    assert steps.flow
    guided = stub.GuideImplementation(
        pb.GuideImplementationRequest(topic="path parameters", max_docs=-4, max_samples=-1),
        timeout=CALL_TIMEOUT,
    )
    assert 0 < len(guided.docs) <= 10 and len(guided.sample_code) <= 10
    assert_serving(stub)


def test_composing_calls_reject_missing_or_garbage_input(stub):
    empty = rpc_error(lambda: stub.ExpandRelated(pb.ExpandRelatedRequest(), timeout=CALL_TIMEOUT))
    assert empty.code() == grpc.StatusCode.INVALID_ARGUMENT
    garbage = rpc_error(
        lambda: stub.ExpandRelated(pb.ExpandRelatedRequest(ref_ids=["r1.!!"]), timeout=CALL_TIMEOUT)
    )
    assert garbage.code() == grpc.StatusCode.INVALID_ARGUMENT
    no_topic = rpc_error(
        lambda: stub.GuideImplementation(
            pb.GuideImplementationRequest(topic=" "), timeout=CALL_TIMEOUT
        )
    )
    assert no_topic.code() == grpc.StatusCode.INVALID_ARGUMENT
    long_topic = stub.GuideImplementation(
        pb.GuideImplementationRequest(topic="oauth " * 2000), timeout=CALL_TIMEOUT
    )
    assert long_topic.topic_truncated and long_topic.topic_chars_used <= MAX_TOPIC_CHARS
    malformed = rpc_error(
        lambda: stub.SummarizeFlow(
            pb.SummarizeFlowRequest(ref_ids=["r1.!!"], topic="path parameters"),
            timeout=CALL_TIMEOUT,
        )
    )
    assert malformed.code() == grpc.StatusCode.INVALID_ARGUMENT
    # A well-formed ref that resolves to nothing is reported, and the flow falls back to the topic.
    missing = forge("docs", "d", "no/such/page.md")
    fallback = stub.SummarizeFlow(
        pb.SummarizeFlowRequest(ref_ids=[missing], topic="path parameters"), timeout=CALL_TIMEOUT
    )
    assert list(fallback.unresolved_ref_ids) == [missing]
    assert fallback.flow
    assert_serving(stub)


# -- transport-level abuse -------------------------------------------------------------------------


def test_message_above_the_receive_limit_is_resource_exhausted(stub):
    err = rpc_error(lambda: search(stub, "a " * (MAX_RECEIVE // 2 + 1000)))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    location = rpc_error(lambda: get(stub, location="x" * (MAX_RECEIVE + 10)))
    assert location.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert_serving(stub)


def _raw_search(daemon: Daemon, payload: bytes) -> grpc.RpcError:
    call = daemon.channel.unary_unary(
        "/scriptorium.v1.RetrievalService/Search",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    return rpc_error(lambda: call(payload, timeout=CALL_TIMEOUT))


GARBAGE = [
    b"\xff\xfe\xfd\x00\x01 not a protobuf",
    b"\x0a\x03\xff\xfe\xfd",  # field 1 (query) holding invalid UTF-8
    b"\x0a\xff\xff\xff\xff\x0f",  # a length prefix far past the end of the message
]


@pytest.mark.parametrize("payload", GARBAGE)
def test_undecodable_request_bytes_fail_and_the_daemon_keeps_serving(daemon, payload):
    err = _raw_search(daemon, payload)
    assert err.code() != grpc.StatusCode.OK
    assert_serving(daemon.stub)


def test_undecodable_request_bytes_are_invalid_argument(daemon):
    assert _raw_search(daemon, GARBAGE[1]).code() == grpc.StatusCode.INVALID_ARGUMENT


def _log_since(daemon: Daemon, offset: int) -> str:
    return daemon.log_path.read_bytes()[offset:].decode("utf-8", "replace")


class Held:
    """A daemon of its own whose GuideImplementation and Search calls wait at the pause points
    ``rpc.guide`` and ``rpc.search`` (in a worker thread, before any work) until their release
    files exist: a call held there cannot finish before its deadline or its cancellation."""

    def __init__(self, daemon: Daemon, work: Path) -> None:
        self.daemon = daemon
        self.guide = work / "release-guide"
        self.search = work / "release-search"

    def release(self) -> None:
        self.guide.touch()
        self.search.touch()


@pytest.fixture()
def held(tree: Tree, tmp_path: Path) -> Iterator[Held]:
    config = tree_config(tmp_path / "scriptorium.toml", tree, "watch = false")
    pauses = f"rpc.guide={tmp_path / 'release-guide'},rpc.search={tmp_path / 'release-search'}"
    d = Daemon(
        ["--config", str(config), "--log-level", "debug"],
        tmp_path / "state",
        env={FAULT_PAUSE: pauses},
    )
    h = Held(d, tmp_path)
    d.start()
    try:
        yield h
    finally:
        h.release()
        d.terminate()


def assert_no_failure_logged(daemon: Daemon, offset: int) -> None:
    log = _log_since(daemon, offset)
    assert "Traceback" not in log and " failed with " not in log, log


def test_deadline_expiring_mid_call_is_deadline_exceeded(held):
    daemon = held.daemon
    stub = daemon.stub
    request = pb.GuideImplementationRequest(
        topic="oauth2 password bearer security scopes", framework="fastapi", language="python"
    )
    offset = daemon.log_path.stat().st_size
    # Should a deadline pass before the call even reached its worker thread, a longer one is
    # tried, so the test always sees the work held (the marker) when the deadline expires.
    for timeout in (0.5, 2.0, 8.0, 32.0):
        err = rpc_error(lambda t=timeout: stub.GuideImplementation(request, timeout=t))
        assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        if reached_marker(held.guide).exists():
            break
    assert reached_marker(held.guide).exists(), "the call never reached its worker thread"
    # Nothing releases the pause yet, so each call held there can only leave it because the
    # server saw its deadline pass, and it then stops at its next checkpoint. Releasing first
    # would race the server's own notice of the deadline, which a busy machine delays.
    stopped = "guide_implementation stopped at a checkpoint: call cancelled"
    assert wait_for(
        lambda: _log_since(daemon, offset).count(stopped) >= times_reached(held.guide), 60
    ), _log_since(daemon, offset)
    held.release()
    # Going on, a call's first step would log the query it understood (only the handler's own
    # check of the mode, before the thread, understands an empty one).
    assert not re.search(r"query understood: [1-9]", _log_since(daemon, offset))
    assert_serving(stub)
    assert stub.GuideImplementation(request, timeout=60).docs
    assert_no_failure_logged(daemon, offset)


def _shared_workers() -> int:
    """The size of the daemon's shared worker pool: asyncio's default executor's."""
    return min(32, (os.cpu_count() or 1) + 4)


def test_cancelled_calls_leave_the_daemon_serving(held):
    daemon = held.daemon
    stub = daemon.stub
    offset = daemon.log_path.stat().st_size
    # The calls' deadline lies well past the 60 s the wait for the markers below may take, so
    # the cancel is what ends them: with a deadline equal to that wait, a busy machine let it
    # pass first (DEADLINE_EXCEEDED instead of CANCELLED).
    deadline = 600
    futures = [
        stub.GuideImplementation.future(
            pb.GuideImplementationRequest(topic=f"request body nested models {i}"),
            timeout=deadline,
        )
        for i in range(12)
    ]
    # Twelve held guides fill the worker threads such calls share (six on two cores); a held
    # Search still reaches its pause point, which it holds in a thread of its own.
    assert wait_for(lambda: times_reached(held.guide) >= min(12, _shared_workers()), 60)
    futures += [
        stub.Search.future(pb.SearchRequest(query=f"dependencies yield {i}"), timeout=deadline)
        for i in range(12)
    ]
    # Cancelled while the server holds them: none of them can have been answered.
    assert wait_for(lambda: reached_marker(held.search).exists(), 60)
    for future in futures:
        future.cancel()
    for future in futures:
        assert future.cancelled() or future.exception(60).code() == grpc.StatusCode.CANCELLED
    # The held work noticed: it stopped at its checkpoint.
    assert wait_for(lambda: "call cancelled" in _log_since(daemon, offset), 60)
    held.release()
    assert_serving(stub)
    assert stub.GuideImplementation(
        pb.GuideImplementationRequest(topic="request body nested models"), timeout=60
    ).docs
    assert_no_failure_logged(daemon, offset)


def test_held_thread_calls_leave_an_edit_searchable(tmp_path: Path):
    """Calls that do their work in threads (GuideImplementation, ExpandRelated, ...) may fill
    the worker pool they share; the index's upkeep has threads of its own, so an edited file
    is searchable while they run."""
    docs = tmp_path / "docs"
    write(docs / "alpha.md", "# Alpha\n\n## Alpha section\n\nThe alpha page.\n")
    config = write(
        tmp_path / "scriptorium.toml",
        f"""
[server]
watch = true
watch_interval = 0.2

[[sources]]
name = "docs"
kind = "markdown"
root = "{docs}"
default = true
""",
    )
    release = tmp_path / "release-guide"
    d = Daemon(
        ["--config", str(config)], tmp_path / "state", env={FAULT_PAUSE: f"rpc.guide={release}"}
    )
    d.start()
    futures = []
    try:
        futures = [
            d.stub.GuideImplementation.future(
                pb.GuideImplementationRequest(topic=f"alpha page {i}"), timeout=600
            )
            for i in range(12)
        ]
        assert wait_for(lambda: times_reached(release) >= min(12, _shared_workers()), 60)
        write(docs / "quokka.md", "# Quokka\n\n## Quokka section\n\nThe quokka smiles.\n")

        def found() -> bool:
            results = d.stub.Search(pb.SearchRequest(query="quokka smiles"), timeout=30).results
            return any("quokka" in r.location for r in results)

        assert wait_for(found, 60), "the edit never became searchable while the guides were held"
    finally:
        release.touch()
        for future in futures:
            future.cancel()
        d.terminate()
