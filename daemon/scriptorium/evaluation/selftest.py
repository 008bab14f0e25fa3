"""Offline self-test of the harness: parsing, scoring, aggregation, records and compare.

It needs no daemon, so a broken harness is caught before it produces a misleading run record.
Checks raise ``SelfTestFailure`` explicitly rather than using ``assert``, so they still run
under ``python -O``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from scriptorium.evaluation import compare, record, runner, scoring
from scriptorium.evaluation.evalset import EvalSetError, parse_lines
from scriptorium.v1 import retrieval_pb2 as pb


class SelfTestFailure(AssertionError):
    """One self-test expectation did not hold."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SelfTestFailure(message)


def check_equal(actual: Any, expected: Any, what: str) -> None:
    check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")


SET_LINES = [
    '{"id": "a", "query": "background tasks", "acceptable": ["tutorial/background-tasks"], '
    '"sections": ["tutorial/background-tasks#using-backgroundtasks"], "kinds": ["docs"], '
    '"lang": "en", "tag": "how-to", "expected_preview_terms": ["BackgroundTasks"]}',
    "// a comment line",
    "",
    '{"id": "b", "query": "OAuth2PasswordBearer", "acceptable": ["fastapi/security/oauth2.py"], '
    '"kinds": ["code"], "lang": "en", "tag": ["identifier", "code-definition"]}',
    '{"id": "c", "fetch_location": "tutorial/first-steps.md", "expect_fetch": "resolved", '
    '"acceptable": ["tutorial/first-steps"], "lang": "en", "tag": "stale-location"}',
]

BAD_LINES = {
    "unknown key": '{"id": "x", "query": "q", "acceptable": ["a"], "tag": "t", "secton": []}',
    "missing acceptable": '{"id": "x", "query": "q", "tag": "t"}',
    "empty acceptable": '{"id": "x", "query": "q", "acceptable": [], "tag": "t"}',
    "bad expectation": '{"id": "x", "fetch_location": "a", "expect_fetch": "ok", '
    '"acceptable": [], "tag": "t"}',
    "section without fragment": '{"id": "x", "query": "q", "acceptable": ["a"], '
    '"sections": ["a"], "tag": "t"}',
    "bad kind": '{"id": "x", "query": "q", "acceptable": ["a"], "kinds": ["web"], "tag": "t"}',
    "no tag": '{"id": "x", "query": "q", "acceptable": ["a"]}',
    "not json": '{"id": "x", ',
}


def check_parsing() -> None:
    cases = parse_lines(SET_LINES, "synthetic")
    check_equal([c.id for c in cases], ["a", "b", "c"], "parsed ids")
    check_equal(cases[0].sections, ("tutorial/background-tasks#using-backgroundtasks",), "sections")
    check_equal(cases[1].tags, ("identifier", "code-definition"), "list tag")
    check_equal(cases[2].query, None, "fetch-only case has no query")
    check_equal(cases[2].expect_fetch, "resolved", "expect_fetch")
    for name, line in BAD_LINES.items():
        try:
            parse_lines([line], "bad")
        except EvalSetError:
            continue
        raise SelfTestFailure(f"a set with {name} was accepted")
    try:
        parse_lines([SET_LINES[0], SET_LINES[0]], "dup")
    except EvalSetError as exc:
        check("duplicate id" in str(exc), "the duplicate-id error names the problem")
    else:
        raise SelfTestFailure("duplicate ids were accepted")


def check_locations() -> None:
    check_equal(scoring.doc_key(" /Tutorial/First-Steps/ "), "tutorial/first-steps", "trim + fold")
    check(
        scoring.doc_key("tutorial/first-steps.md") != scoring.doc_key("tutorial/first-steps"),
        ".md is not stripped",
    )
    check(
        scoring.doc_key("tutorial/dependencies/index") != scoring.doc_key("tutorial/dependencies"),
        "/index is not stripped",
    )
    check_equal(
        scoring.doc_key("tutorial/first-steps#check-it"), "tutorial/first-steps", "page level"
    )
    check_equal(
        scoring.doc_key("fastapi/security/oauth2.py#L412"),
        "fastapi/security/oauth2.py",
        "code compares at file level",
    )
    check_equal(
        scoring.section_key("Tutorial/First-Steps/#Check-It"),
        "tutorial/first-steps#check-it",
        "section key",
    )


def check_scoring() -> None:
    returned = [
        "tutorial/first-steps#check-it",
        "tutorial/background-tasks#technical-details",
        "tutorial/background-tasks#using-backgroundtasks",
        "fastapi/background.py#L11",
    ]
    score = scoring.score_search(
        returned,
        ["tutorial/background-tasks"],
        ["tutorial/background-tasks#using-backgroundtasks"],
        top_k=10,
    )
    check_equal(score.rank, 2, "doc-level rank")
    check_equal(score.hits, {"1": False, "3": True, "5": True, "8": True, "k": True}, "doc hits")
    check_equal(score.rr, 0.5, "reciprocal rank")
    check_equal(score.section_rank, 3, "section-level rank")
    code = scoring.score_search(returned, ["fastapi/background.py"], top_k=10)
    check_equal(code.rank, 4, "code file-level rank")
    check_equal(code.section_hits, None, "no sections, no section hits")
    narrow = scoring.score_search(returned, ["fastapi/background.py"], top_k=3)
    check_equal(narrow.rank, None, "results past top_k are not scored")
    check_equal(narrow.hits["8"], None, "hit@8 is unmeasured when top_k < 8")
    miss = scoring.score_search([], ["tutorial/cors"], top_k=10)
    check_equal((miss.rank, miss.rr, miss.hits["k"]), (None, 0.0, False), "empty results miss")


def check_fetch() -> None:
    check(scoring.fetch_succeeded("OK", "# Title\n"), "OK with content succeeds")
    check(not scoring.fetch_succeeded("OK", "  \n"), "blank content fails")
    check(not scoring.fetch_succeeded("NOT_FOUND", "x"), "an error status fails")
    outcome = scoring.classify_fetch_outcome
    check_equal(outcome("OK", "body", []), "resolved", "resolved")
    check_equal(outcome("OK", "", []), "empty", "empty")
    check_equal(outcome("NOT_FOUND", "", []), "not_found", "not_found")
    check_equal(outcome("FAILED_PRECONDITION", "", ["ja/a", "zh/a"]), "ambiguous", "ambiguous")
    check(outcome("FAILED_PRECONDITION", "", []).startswith("error"), "ambiguity needs candidates")
    check(outcome("UNAVAILABLE", "", []).startswith("error"), "other statuses are errors")
    passed = scoring.stale_location_passed
    check(passed("resolved", "resolved", "tutorial/first-steps", ["tutorial/first-steps"]), "pass")
    check(
        not passed(
            "resolved", "resolved", "tutorial/security/first-steps", ["tutorial/first-steps"]
        ),
        "resolving to the wrong page fails",
    )
    check(passed("not_found", "not_found", "", []), "expected not_found passes")
    check(not passed("ambiguous", "not_found", "", []), "a different outcome fails")


def synthetic_case(
    case_id: str, tag: str, lang: str, rank: int | None, fetch_ok: bool | None, **extra: Any
) -> dict[str, Any]:
    """A per-case record shaped like the runner's, built from a rank."""
    returned = ["x"] * (rank - 1) + ["hit"] if rank else ["x"]
    score = scoring.score_search(returned, ["hit"], top_k=10)
    case = {"id": case_id, "tag": tag, "lang": lang, "query": "q", **score.as_dict()}
    case["search"] = {"status": "ok", "returned": []}
    case["fetch_success"] = fetch_ok
    case["preview_lengths"] = extra.pop("previews", [200])
    case.update(extra)
    return case


def check_aggregation() -> None:
    cases = [
        synthetic_case("a", "how-to", "en", 1, True, previews=[200, 180]),
        synthetic_case("b", "how-to", "en", 4, True, previews=[150]),
        synthetic_case("c", "cjk-ja", "ja", None, False, previews=[40]),
        {
            "id": "d",
            "tag": "stale-location",
            "lang": "en",
            "stale": {"passed": True},
        },
        {"id": "e", "tag": "stale-location", "lang": "en", "stale": {"passed": False}},
    ]
    agg = scoring.aggregate_run(cases)
    overall = agg["overall"]
    check_equal(overall["case_count"], 5, "case count")
    check_equal(overall["search_case_count"], 3, "search case count")
    check_equal(overall["hit@1_count"], 1, "hit@1 count")
    check_equal(round(overall["hit@5"], 6), round(2 / 3, 6), "hit@5 rate")
    check_equal(round(overall["mrr"], 6), round((1 + 0.25 + 0) / 3, 6), "MRR")
    check_equal(overall["fetch_success_rate"], 2 / 3, "fetch success rate")
    check_equal(overall["stale_pass_rate"], 0.5, "stale-location pass rate")
    check_equal(overall["min_preview_chars"], 40, "min preview")
    check_equal(overall["mean_preview_chars"], (200 + 180 + 150 + 40) / 4, "mean preview")
    check_equal(overall["section_hit@5"], None, "no section cases, no section rate")
    check_equal(agg["by_tag"]["how-to"]["hit@1"], 0.5, "per-tag hit@1")
    check_equal(agg["by_tag"]["stale-location"]["hit@1"], None, "fetch-only tag has no hit rate")
    check_equal(agg["by_lang"]["ja"]["hit@5"], 0.0, "per-lang hit@5")


def _record(label: str, cases: list[dict[str, Any]], commit: str | None) -> dict[str, Any]:
    return record.build_record(
        label=label,
        timestamp=datetime(2026, 1, 2, 3, 4, 5),
        cases=cases,
        set_path="eval/x.jsonl",
        set_digest="d1",
        top_k=10,
        config="eval/x.toml",
        target="127.0.0.1:1",
        started_daemon=True,
        server_version="0.1.0",
        daemon_commit=commit,
        harness_sha="unknown",
        generation=3,
        sources=[],
    )


def check_records_and_compare() -> None:
    before = _record(
        "pre",
        [
            synthetic_case("a", "how-to", "en", 1, True),
            synthetic_case("b", "how-to", "en", 7, True),
            synthetic_case("c", "cjk-ja", "ja", None, False),
        ],
        None,
    )
    after = _record(
        "post",
        [
            synthetic_case("a", "how-to", "en", 6, True),
            synthetic_case("b", "how-to", "en", 1, True),
            synthetic_case("c", "cjk-ja", "ja", 2, True),
        ],
        "0" * 40,
    )
    check_equal(before["daemon"]["commit_sha"], "unknown", "no --commit-sha means unknown")
    check_equal(before["daemon"]["commit_sha_source"], "unknown", "commit source unknown")
    check_equal(after["daemon"]["commit_sha_source"], "parameter", "explicit commit source")
    check_equal(before["schema_version"], 1, "schema version")

    with tempfile.TemporaryDirectory() as tmp:
        path = record.default_output_path(Path(tmp) / "set.jsonl", "pre fix/1", datetime.now())
        check(path.parent.name == "runs", "records go to a runs/ directory beside the set")
        check("/" not in path.name and " " not in path.name, "label is made file-name safe")
        record.write_record(before, path)
        check_equal(record.load_record(path)["label"], "pre", "record round trip")

    result = compare.compare_records(before, after)
    check_equal(result["flips"]["@1"]["newly_hit"], ["b"], "newly hit @1")
    check_equal(result["flips"]["@1"]["newly_missed"], ["a"], "newly missed @1")
    check_equal(result["flips"]["@5"]["newly_hit"], ["b", "c"], "newly hit @5")
    check_equal(result["flips"]["@5"]["newly_missed"], ["a"], "newly missed @5")
    check_equal(result["flips"]["fetch"]["newly_hit"], ["c"], "fetch flip")
    delta = result["aggregate_deltas"]["overall"]["hit@5"]["delta"]
    check_equal(round(delta, 6), round(2 / 3 - 1 / 3, 6), "hit@5 delta")
    text = compare.format_comparison(result)
    check("@1: newly missed ['a']" in text, "the readable comparison lists the flips")


class _FakeClient:
    """Stands in for the gRPC client so the runner's bookkeeping can be checked offline."""

    def __init__(self, fail_search: bool = False) -> None:
        self.fail_search = fail_search
        self.fetched: list[str] = []

    def search(self, case: Any, top_k: int) -> tuple[dict[str, Any], list[pb.SearchResult]]:
        if self.fail_search:
            raise RuntimeError("connection reset")
        results = [
            pb.SearchResult(
                location="tutorial/cors#use-corsmiddleware", preview="Use CORSMiddleware"
            ),
            pb.SearchResult(location="tutorial/cors", preview="CORS  origins"),
        ]
        return {"status": "ok", "returned": [r.location for r in results]}, results

    def fetch(self, location: str) -> dict[str, Any]:
        self.fetched.append(location)
        return {
            "requested": location,
            "status": "OK",
            "resolved_location": "tutorial/cors",
            "candidates": [],
            "_content": "# CORS",
        }


def check_runner() -> None:
    case = parse_lines(
        [
            '{"id": "r", "query": "cors", "acceptable": ["tutorial/cors"], '
            '"sections": ["tutorial/cors#use-corsmiddleware"], "tag": "how-to", '
            '"expected_preview_terms": ["CORSMiddleware", "absent"]}'
        ]
    )[0]
    client = _FakeClient()
    result = runner.run_case(client, case, 10)  # type: ignore[arg-type]
    check_equal(result["rank"], 1, "runner rank")
    check_equal(result["section_rank"], 1, "runner section rank")
    check_equal(client.fetched, ["tutorial/cors#use-corsmiddleware"], "fetches rank 1 as returned")
    check_equal(result["fetch_success"], True, "fetch success")
    check_equal(result["preview_terms_found"], ["CORSMiddleware"], "preview terms recorded")
    check_equal(result["preview_lengths"], [18, 12], "preview lengths are whitespace-collapsed")
    broken = runner.run_case(_FakeClient(fail_search=True), case, 10)  # type: ignore[arg-type]
    check("harness_error" in broken, "a failing case is recorded, not raised")
    check_equal(broken["hits"]["k"], False, "a failing case counts as a miss")


CHECKS: tuple[tuple[str, Callable[[], None]], ...] = (
    ("eval-set parsing", check_parsing),
    ("location normalisation", check_locations),
    ("search scoring", check_scoring),
    ("fetch outcomes", check_fetch),
    ("aggregation", check_aggregation),
    ("records and compare", check_records_and_compare),
    ("runner bookkeeping", check_runner),
)


def run_self_test(out: TextIO) -> int:
    """Run every check; 0 when all pass, 1 when any fails."""
    failures = 0
    for name, check_fn in CHECKS:
        try:
            check_fn()
        except SelfTestFailure as exc:
            failures += 1
            out.write(f"FAIL {name}: {exc}\n")
        else:
            out.write(f"ok   {name}\n")
    out.write("self-test passed\n" if not failures else f"self-test FAILED ({failures})\n")
    return 1 if failures else 0
