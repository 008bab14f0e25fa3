"""The evaluation harness: pure scoring, the shipped evaluation set, compare and self-test."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from scriptorium.evaluation import compare, record, scoring
from scriptorium.evaluation.cli import main as eval_main
from scriptorium.evaluation.evalset import EvalSetError, load_eval_set, parse_lines

REPO = Path(__file__).resolve().parents[2]
SET_PATH = REPO / "eval" / "fastapi.jsonl"
from tests.support.daemon import CORPUS  # noqa: E402  (the shared corpus, wherever CI puts it)

DOC_ROOTS = {lang: CORPUS / "docs" / lang / "docs" for lang in ("en", "ja", "zh")}
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
EXPLICIT_ID = re.compile(r"\{\s*#([A-Za-z0-9_-]+)\s*\}\s*$")


# ------------------------------------------------------------------------------- pure scoring


def test_doc_level_ignores_fragments_but_section_level_does_not() -> None:
    returned = ["tutorial/cors#origin", "tutorial/cors#use-corsmiddleware"]
    score = scoring.score_search(returned, ["tutorial/cors"], ["tutorial/cors#use-corsmiddleware"])
    assert score.rank == 1
    assert score.section_rank == 2
    assert score.section_hits == {"1": False, "3": True, "5": True, "8": True, "k": True}


def test_code_locations_compare_at_file_level() -> None:
    returned = ["fastapi/routing.py#L2255", "fastapi/security/oauth2.py#L433"]
    assert scoring.first_hit_rank(returned, ["fastapi/security/oauth2.py"]) == 2
    assert scoring.first_hit_rank(returned, ["fastapi/security/http.py"]) is None


def test_location_normalisation_keeps_variant_shapes_distinct() -> None:
    assert scoring.doc_key("  /Tutorial/First-Steps/ ") == "tutorial/first-steps"
    assert scoring.doc_key("tutorial/first-steps.md") != "tutorial/first-steps"
    assert scoring.doc_key("tutorial/dependencies/index") != "tutorial/dependencies"
    assert scoring.section_key("ja/tutorial/cors/#Origin") == "ja/tutorial/cors#origin"


@pytest.mark.parametrize(
    ("rank", "expected_rr", "expected_hits"),
    [
        (1, 1.0, {"1": True, "3": True, "5": True, "8": True, "k": True}),
        (3, 1 / 3, {"1": False, "3": True, "5": True, "8": True, "k": True}),
        (6, 1 / 6, {"1": False, "3": False, "5": False, "8": True, "k": True}),
        (10, 0.1, {"1": False, "3": False, "5": False, "8": False, "k": True}),
        (None, 0.0, {"1": False, "3": False, "5": False, "8": False, "k": False}),
    ],
)
def test_ranks_hits_and_reciprocal_rank(rank, expected_rr, expected_hits) -> None:
    returned = ["other"] * 10
    if rank is not None:
        returned[rank - 1] = "target#section"
    score = scoring.score_search(returned, ["target"], top_k=10)
    assert score.rank == rank
    assert score.rr == pytest.approx(expected_rr)
    assert score.hits == expected_hits


def test_results_beyond_top_k_are_not_scored_and_deep_cutoffs_are_unmeasured() -> None:
    returned = ["a", "b", "c", "d", "e", "target"]
    score = scoring.score_search(returned, ["target"], top_k=5)
    assert score.rank is None
    assert score.hits["8"] is None
    assert score.hits["5"] is False


def test_fetch_outcomes_follow_the_resolution_vocabulary() -> None:
    assert scoring.classify_fetch_outcome("OK", "text", []) == "resolved"
    assert scoring.classify_fetch_outcome("OK", " \n", []) == "empty"
    assert scoring.classify_fetch_outcome("NOT_FOUND", "", []) == "not_found"
    assert (
        scoring.classify_fetch_outcome("FAILED_PRECONDITION", "", ["ja/a", "zh/a"]) == "ambiguous"
    )
    assert scoring.classify_fetch_outcome("FAILED_PRECONDITION", "", []).startswith("error")
    assert not scoring.stale_location_passed(
        "resolved", "resolved", "tutorial/security/first-steps", ["tutorial/first-steps"]
    )
    assert scoring.stale_location_passed("ambiguous", "ambiguous", "", [])


def _case(case_id, tag, lang, rank, fetch_ok=True, sections_rank=None, previews=(200,)):
    returned = ["x"] * 10
    if rank is not None:
        returned[rank - 1] = "hit"
    if sections_rank is not None:
        returned[sections_rank - 1] = "hit#sec"
    sections = ["hit#sec"] if sections_rank is not None else []
    score = scoring.score_search(returned, ["hit"], sections, top_k=10)
    return {
        "id": case_id,
        "tag": tag,
        "lang": lang,
        "query": "q",
        "search": {"status": "ok", "returned": returned},
        "fetch_success": fetch_ok,
        "preview_lengths": list(previews),
        **score.as_dict(),
    }


def test_aggregation_overall_per_tag_and_per_lang() -> None:
    cases = [
        _case("a", "how-to", "en", 1, previews=(210, 190)),
        _case("b", "how-to", "en", 2, sections_rank=2),
        _case("c", "cjk-ja", "ja", 7, fetch_ok=False, previews=(35,)),
        _case("d", ["identifier", "how-to"], "en", None),
        {"id": "e", "tag": "stale-location", "lang": "en", "stale": {"passed": True}},
    ]
    agg = scoring.aggregate_run(cases)
    overall = agg["overall"]
    assert overall["case_count"] == 5
    assert overall["search_case_count"] == 4
    assert overall["hit@1"] == pytest.approx(1 / 4)
    assert overall["hit@5"] == pytest.approx(2 / 4)
    assert overall["hit@8"] == pytest.approx(3 / 4)
    assert overall["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 7 + 0) / 4)
    assert overall["section_case_count"] == 1
    assert overall["section_hit@5"] == 1.0
    assert overall["fetch_success_rate"] == pytest.approx(3 / 4)
    assert overall["stale_pass_rate"] == 1.0
    assert overall["min_preview_chars"] == 35
    assert agg["by_tag"]["how-to"]["search_case_count"] == 3
    assert agg["by_tag"]["how-to"]["hit@1"] == pytest.approx(1 / 3)
    assert agg["by_tag"]["identifier"]["hit@5"] == 0.0
    assert agg["by_lang"]["ja"]["hit@8"] == 1.0
    assert agg["by_lang"]["ja"]["hit@5"] == 0.0


# ---------------------------------------------------------------------------- the shipped set


@pytest.fixture(scope="module")
def shipped_cases():
    return load_eval_set(SET_PATH)


def test_every_line_of_the_shipped_set_parses_with_unique_ids() -> None:
    lines = [line for line in SET_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [json.loads(line)["id"] for line in lines]
    assert len(ids) == len(set(ids))
    assert len(lines) >= 70


def test_shipped_set_coverage(shipped_cases) -> None:
    en_docs = [c for c in shipped_cases if c.lang == "en" and c.kinds == ("docs",) and c.query]
    ja = [c for c in shipped_cases if c.lang == "ja" and c.query]
    zh = [c for c in shipped_cases if c.lang == "zh" and c.query]
    code = [c for c in shipped_cases if c.kinds == ("code",)]
    impl = [c for c in shipped_cases if c.mode == "implementation"]
    stale = [c for c in shipped_cases if c.fetch_location]
    assert len(en_docs) >= 30
    assert len(ja) >= 8 and len(zh) >= 8
    assert len(code) >= 10
    assert len(impl) >= 6
    assert len(stale) >= 4
    assert {c.expect_fetch for c in stale} == {"resolved", "not_found", "ambiguous"}
    assert any(c.surface for c in shipped_cases)
    tags = Counter(t for c in shipped_cases for t in c.tags)
    assert tags["mixed-script"] >= 3
    assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", c.query) for c in ja + zh)
    for case in impl:
        has_doc = any(not loc.endswith(".py") for loc in case.acceptable)
        has_example = any(loc.startswith("docs_src/") for loc in case.acceptable)
        assert has_doc or has_example, case.id


def location_file(location: str) -> Path:
    """The corpus file a daemon location names (page level), per the location shapes."""
    path = location.partition("#")[0].strip("/")
    if path.endswith(".py"):
        return CORPUS / path
    lang, _, rest = path.partition("/")
    if lang in ("ja", "zh"):
        root, page = DOC_ROOTS[lang], rest or "index"
    else:
        root, page = DOC_ROOTS["en"], path
    if page == "index":
        return root / "index.md"
    for candidate in (root / f"{page}.md", root / page / "index.md"):
        if candidate.is_file():
            return candidate
    return root / f"{page}.md"


def github_slug(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def heading_ids(markdown: str) -> set[str]:
    ids, in_fence = set(), False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        match = None if in_fence else HEADING.match(line)
        if match:
            explicit = EXPLICIT_ID.search(match.group(2))
            ids.add(explicit.group(1) if explicit else github_slug(match.group(2)))
    return ids


def test_every_acceptable_location_exists_in_the_corpus(fastapi_corpus, shipped_cases) -> None:
    missing = []
    for case in shipped_cases:
        for location in (*case.acceptable, *case.sections):
            if not location_file(location).is_file():
                missing.append((case.id, location))
        for section in case.sections:
            fragment = section.partition("#")[2]
            if fragment not in heading_ids(location_file(section).read_text(encoding="utf-8")):
                missing.append((case.id, section))
    assert missing == []


def test_location_mapping_rules(fastapi_corpus) -> None:
    assert (
        location_file("tutorial/first-steps#check-it")
        == DOC_ROOTS["en"] / "tutorial/first-steps.md"
    )
    assert (
        location_file("tutorial/dependencies") == DOC_ROOTS["en"] / "tutorial/dependencies/index.md"
    )
    assert location_file("index") == DOC_ROOTS["en"] / "index.md"
    assert location_file("zh/index") == DOC_ROOTS["zh"] / "index.md"
    assert location_file("ja/tutorial/cors") == DOC_ROOTS["ja"] / "tutorial/cors.md"
    assert not location_file("tutorial/no-such-page").is_file()


def test_invalid_set_lines_are_rejected(tmp_path) -> None:
    good = '{"id": "a", "query": "q", "acceptable": ["x"], "tag": "how-to"}'
    with pytest.raises(EvalSetError, match="duplicate id"):
        parse_lines([good, good])
    with pytest.raises(EvalSetError, match="unknown keys"):
        parse_lines(['{"id": "a", "query": "q", "acceptable": ["x"], "tag": "t", "kind": []}'])
    with pytest.raises(EvalSetError, match="expect_fetch"):
        parse_lines(['{"id": "a", "fetch_location": "x", "acceptable": [], "tag": "t"}'])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + "\n{not json\n", encoding="utf-8")
    with pytest.raises(EvalSetError, match=r"bad\.jsonl:2"):
        load_eval_set(bad)


# ------------------------------------------------------------------------- records and compare


def _run(label, cases, sha="d1"):
    return record.build_record(
        label=label,
        timestamp=datetime(2026, 5, 1, 12, 0, 0),
        cases=cases,
        set_path="eval/fastapi.jsonl",
        set_digest=sha,
        top_k=10,
        config="eval/fastapi.toml",
        target="127.0.0.1:5",
        started_daemon=True,
        server_version="0.1.0",
        daemon_commit=None,
        harness_sha="unknown",
        generation=1,
        sources=[],
    )


def test_compare_reports_flips_and_deltas(tmp_path) -> None:
    a = _run(
        "pre",
        [
            _case("p", "how-to", "en", 1),
            _case("q", "how-to", "en", 9),
            _case("r", "cjk-zh", "zh", 2),
        ],
    )
    b = _run(
        "post",
        [
            _case("p", "how-to", "en", 4),
            _case("q", "how-to", "en", 1),
            _case("s", "cjk-zh", "zh", 1),
        ],
        sha="d2",
    )
    path_a = record.write_record(a, tmp_path / "runs" / "a.json")
    path_b = record.write_record(b, tmp_path / "runs" / "b.json")
    result = compare.compare_records(record.load_record(path_a), record.load_record(path_b))
    assert result["flips"]["@1"] == {"newly_hit": ["q"], "newly_missed": ["p"]}
    assert result["flips"]["@5"] == {"newly_hit": ["q"], "newly_missed": []}
    assert result["only_in_a"] == ["r"] and result["only_in_b"] == ["s"]
    assert "the runs used different evaluation set files" in result["warnings"]
    overall = result["aggregate_deltas"]["overall"]
    assert overall["hit@5"]["delta"] == pytest.approx(1.0 - 2 / 3)
    assert overall["mrr"]["delta"] == pytest.approx((1 / 4 + 1 + 1) / 3 - (1 + 1 / 9 + 1 / 2) / 3)
    assert result["aggregate_deltas"]["by_tag"]["how-to"]["hit@1"]["delta"] == pytest.approx(0.0)


def test_compare_cli_prints_flips(tmp_path, capsys) -> None:
    a = record.write_record(_run("pre", [_case("p", "how-to", "en", 1)]), tmp_path / "a.json")
    b = record.write_record(_run("post", [_case("p", "how-to", "en", None)]), tmp_path / "b.json")
    assert eval_main(["--compare", str(a), str(b)]) == 0
    assert "@1: newly missed ['p']" in capsys.readouterr().out
    assert eval_main(["--compare", str(a), str(tmp_path / "missing.json")]) == 2


def test_record_attribution_never_guesses_the_daemon_commit() -> None:
    run = _run("x", [_case("p", "how-to", "en", 1)])
    assert run["daemon"]["commit_sha"] == "unknown"
    assert run["daemon"]["commit_sha_source"] == "unknown"
    assert run["schema_version"] == 1
    assert run["inputs"]["set_size"] == 1
    assert run["aggregate"]["overall"]["hit@1"] == 1.0


def test_default_output_path_is_beside_the_set_and_file_name_safe() -> None:
    path = record.default_output_path(SET_PATH, "bm25 / top-8", datetime(2026, 1, 2, 3, 4, 5))
    assert path == SET_PATH.parent / "runs" / "20260102-030405-bm25-top-8.json"


def test_top_k_below_five_is_rejected(capsys) -> None:
    assert eval_main(["--top-k", "3", "--target", "127.0.0.1:1"]) == 2
    assert "--top-k" in capsys.readouterr().err


def test_self_test_exits_zero(capsys) -> None:
    assert eval_main(["--self-test"]) == 0
    assert "self-test passed" in capsys.readouterr().out


def test_redundant_results_count_snippets_repeating_a_better_one():
    plain = "async def create_file(file: bytes = File()):\n    return {'size': len(file)}"
    annotated = (
        "async def create_file(file: Annotated[bytes, File()]):\n    return {'size': len(file)}"
    )
    other = "async def read_items(skip: int = 0, limit: int = 10):\n    return items[skip:limit]"
    assert scoring.redundant_results([plain, annotated, other]) == 1
    assert scoring.redundant_results([plain, other]) == 0
    assert scoring.redundant_results([plain, plain, plain]) == 2
    assert scoring.redundant_results(["", ""]) == 0
