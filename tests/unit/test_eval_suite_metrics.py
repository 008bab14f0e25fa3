"""The suite's pure parts: metrics, URL mapping, sampling, query clipping, repository layouts."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

from scriptorium.evaluation.suite import metrics, report, sets
from scriptorium.evaluation.suite.metrics import Result
from scriptorium.evaluation.suite.repos import SuiteError, find_git_dir

GAINS = {"install.md": 3, "configure.md": 1}


def test_results_collapse_to_files_by_best_rank() -> None:
    results = [Result("a.py", "A.f"), Result("b.py"), Result("a.py", "A.g"), Result("c.py")]
    assert metrics.collapse(results) == ["a.py", "b.py", "c.py"]


def test_ndcg_uses_grades_as_linear_gains_and_counts_a_page_once() -> None:
    results = [Result("configure.md"), Result("configure.md"), Result("install.md")]
    expected = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    got = metrics.docs_search_metrics(results, GAINS)
    assert got["ndcg@5"] == pytest.approx(expected)
    assert got["hit@1"] == 1.0 and got["mrr"] == 1.0  # any graded page is a hit
    assert got["recall@10"] == 1.0


def test_misses_and_partial_recall() -> None:
    got = metrics.docs_search_metrics([Result("other.md"), Result("configure.md")], GAINS)
    assert got["hit@1"] == 0.0 and got["hit@3"] == 1.0
    assert got["mrr"] == 0.5
    assert got["recall@10"] == 0.5


def test_span_hits_count_the_definition_or_its_class_in_the_first_results() -> None:
    spans = {"x.py": frozenset({"Klass.method"})}
    gains = {"x.py": 1}
    by_class = [Result("y.py", "other")] * 4 + [Result("x.py", "Klass")]
    got = metrics.swebench_metrics(by_class, gains, spans)
    assert got["span@5"] == 1.0 and got["hit@1"] == 0.0 and got["mrr"] == 0.5
    late = [Result("y.py", f"f{i}") for i in range(5)] + [Result("x.py", "Klass.method")]
    assert metrics.swebench_metrics(late, gains, spans)["span@5"] == 0.0
    assert metrics.swebench_metrics(late, gains, spans)["span@10"] == 1.0
    # A method of the class is not the class, and another file's definition does not count.
    wrong = [Result("x.py", "Klass.other"), Result("z.py", "Klass.method")]
    assert metrics.swebench_metrics(wrong, gains, spans)["span@5"] == 0.0
    assert "span@5" not in metrics.swebench_metrics(late, gains, spans, with_spans=False)


def test_urls_map_to_files_by_the_readme_rules() -> None:
    vite = sets.LIBRARIES["vite"]
    files = frozenset({"docs/guide/features.md", "docs/config/index.md"})
    assert sets.map_url(vite, "https://vite.dev/guide/features", files) == "docs/guide/features.md"
    assert sets.map_url(vite, "https://vite.dev/config/", files) == "docs/config/index.md"
    with pytest.raises(SuiteError, match="no page"):
        sets.map_url(vite, "https://vite.dev/guide/missing", files)
    fastapi = sets.LIBRARIES["fastapi"]
    assert sets.url_candidates(fastapi, "https://fastapi.tiangolo.com/tutorial/cors/") == [
        "docs/en/docs/tutorial/cors.md",
        "docs/en/docs/tutorial/cors/index.md",
    ]


def test_sampling_is_every_kth_case_then_the_limit() -> None:
    cases = list(range(10))
    assert sets.sample(cases, 3, None) == [0, 3, 6, 9]  # type: ignore[arg-type]
    assert sets.sample(cases, 3, 2) == [0, 3]  # type: ignore[arg-type]
    assert sets.sample(cases, None, None) == cases  # type: ignore[arg-type]


def test_long_queries_are_clipped_to_the_daemon_limit() -> None:
    assert sets.clip_query("short") == ("short", False)
    clipped, truncated = sets.clip_query("x" * 9000)
    assert truncated and len(clipped) == 8192


def test_sign_test_and_bootstrap() -> None:
    assert report.sign_test(0, 0) == 1.0
    assert report.sign_test(6, 0) == pytest.approx(2 / 64)
    assert report.sign_test(3, 3) == 1.0
    low, high = report.bootstrap_interval([0.0] * 10 + [1.0] * 10)
    assert low < 0.5 < high
    assert report.bootstrap_interval([1.0] * 5) == (1.0, 1.0)


@pytest.mark.parametrize("layout", ["owner+name/repo", "owner+name", "name.git"])
def test_every_repository_layout_is_found(tmp_path: Path, layout: str) -> None:
    where = tmp_path / layout.replace("owner", "acme").replace("name", "tiny")
    where.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", str(where)], check=True)
    assert find_git_dir(tmp_path, "acme/tiny") == where


def test_a_plain_folder_inside_a_checkout_is_not_a_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "acme+tiny").mkdir()
    with pytest.raises(SuiteError, match="repository acme/tiny is missing"):
        find_git_dir(tmp_path, "acme/tiny")
