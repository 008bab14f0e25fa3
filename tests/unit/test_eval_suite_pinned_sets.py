"""The pinned-corpus sets' pure parts: DS-1000 titles → pages, fastapi answers → repository
files, their page metrics, and a git dir that lacks some blobs."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from scriptorium.evaluation.evalset import parse_lines
from scriptorium.evaluation.suite import ds1000, fastapi_repo, metrics, report, sets
from scriptorium.evaluation.suite.materialise import Selection, materialise
from scriptorium.evaluation.suite.metrics import Result
from scriptorium.evaluation.suite.repos import SuiteError

PLAIN = ds1000.PAGES_DIR
PAGES = ds1000.page_index(
    [
        f"{PLAIN}/pandas~1/reference/api/pandas.DataFrame.where.txt",
        f"{PLAIN}/numpy~1.22/reference/generated/numpy.sum.txt",
        f"{PLAIN}/tensorflow~2.4/compat/v1/session.txt",
        f"{PLAIN}/scikit_learn/modules/generated/sklearn.svm.svr.txt",
        f"{PLAIN}/pandas~1/reference/index.txt",
        "README.md",
    ]
)


def test_a_title_names_a_page_by_some_split_of_its_dots_case_insensitively() -> None:
    where = ds1000.title_page("pandas.reference.api.pandas.dataframe.where", PAGES)
    assert where == f"{PLAIN}/pandas~1/reference/api/pandas.DataFrame.where.txt"
    # Every dot a folder, and the library's own folder name differing from its import name.
    assert ds1000.title_page("tensorflow.compat.v1.session", PAGES) == (
        f"{PLAIN}/tensorflow~2.4/compat/v1/session.txt"
    )
    svr = "sklearn.modules.generated.sklearn.svm.svr#sklearn.svm.SVR.fit"  # fragment dropped
    assert (
        ds1000.title_page(svr, PAGES)
        == f"{PLAIN}/scikit_learn/modules/generated/sklearn.svm.svr.txt"
    )
    assert ds1000.title_page("numpy.reference.generated.numpy.mean", PAGES) is None
    assert ds1000.title_page("scipy.reference.generated.scipy.stats", PAGES) is None
    assert ds1000.title_page("pandas", PAGES) is None


def test_problems_without_a_page_are_skipped_and_long_prompts_cut_at_2000() -> None:
    long_prompt = "Problem:\n" + "sum the rows of an array please " * 100
    rows = [
        {
            "prompt": "How do I replace values where a condition is false?",
            "metadata": {"library": "Pandas", "problem_id": 7},
            "docs": [
                {"title": "pandas.reference.api.pandas.dataframe.where"},
                {"title": "pandas.reference.api.pandas.dataframe.where#x"},
                {"title": "pandas.reference.api.pandas.dataframe.mask"},  # not in the corpus
            ],
        },
        {"prompt": "No reference pages.", "metadata": {"library": "Scipy"}, "docs": []},
        {
            "prompt": long_prompt,
            "metadata": {"library": "Numpy", "problem_id": 9},
            "docs": [{"title": "numpy.reference.generated.numpy.sum"}],
        },
    ]
    spec = ds1000.corpus()
    cases, skipped = ds1000.cases_from(rows, PAGES.values(), spec)
    assert skipped == 1
    assert [(c.case_id, c.group) for c in cases] == [("pandas-7", "pandas"), ("numpy-9", "numpy")]
    assert cases[0].gains == {f"{PLAIN}/pandas~1/reference/api/pandas.DataFrame.where.txt": 1}
    assert not cases[0].truncated
    long = cases[1]
    assert long.truncated and long.query_chars == len(long_prompt)
    assert len(long.query) <= ds1000.QUERY_CHARS and long_prompt.startswith(long.query)
    assert long_prompt[len(long.query)] == " "  # cut at a whitespace boundary
    assert spec.sources[0].kind == "text" and spec.selection.wants(f"{PLAIN}/a/b.txt")
    assert not spec.selection.wants("retrieval/datasets/canonical/ds1000_docs.json")


def test_page_metrics_count_mrr_within_the_first_ten_pages() -> None:
    gains = {"want.txt": 1}
    early = [Result("a.txt"), Result("a.txt"), Result("want.txt")]
    got = metrics.page_metrics(early, gains, (1, 5, 10), 10)
    assert got == {"hit@1": 0.0, "hit@5": 1.0, "hit@10": 1.0, "mrr": 0.5}
    late = [Result(f"{i}.txt") for i in range(10)] + [Result("want.txt")]
    assert metrics.page_metrics(late, gains, (1, 5, 10), 10)["mrr"] == 0.0
    assert "ds1000" in report.SET_TITLES and "fastapi-repo" in report.SET_TITLES


def test_repository_and_commit_overrides_are_checked() -> None:
    assert sets.parse_repo_at("acme/tiny@abc123", "--x") == ("acme/tiny", "abc123")
    for bad in ("acme/tiny", "tiny@abc", "acme/tiny@"):
        with pytest.raises(SuiteError, match="OWNER/NAME@COMMIT"):
            sets.parse_repo_at(bad, "--x")


CONFIG = """
[[sources]]
name = "en"
kind = "markdown"
root = "snap/docs/en/docs"
default = true

[[sources]]
name = "ja"
kind = "markdown"
root = "snap/docs/ja/docs"

[[sources]]
name = "code"
kind = "code"
root = "snap"
default = true
include = ["fastapi/**/*.py"]
"""


def test_the_fastapi_answers_map_to_repository_files_through_the_configs_sources(
    tmp_path: Path,
) -> None:
    config = tmp_path / "eval.toml"
    config.write_text(CONFIG, encoding="utf-8")
    sources, qualified = fastapi_repo.config_sources(config)
    assert [(s.name, s.subdir, s.include) for s in sources] == [
        ("en", "docs/en/docs", ()),
        ("ja", "docs/ja/docs", ()),
        ("code", "", ("fastapi/**/*.py",)),
    ]
    assert qualified == {"ja"}
    pages = {
        ("en", "tutorial/cors"): "docs/en/docs/tutorial/cors.md",
        ("ja", "tutorial/cors"): "docs/ja/docs/tutorial/cors.md",
        ("code", "fastapi/routing.py"): "fastapi/routing.py",
    }
    files = fastapi_repo.location_files(pages, qualified)
    assert files == {
        "tutorial/cors": "docs/en/docs/tutorial/cors.md",
        "ja/tutorial/cors": "docs/ja/docs/tutorial/cors.md",
        "fastapi/routing.py": "fastapi/routing.py",
    }
    questions = parse_lines(
        [
            '{"id": "a", "query": "cors", "acceptable": ["tutorial/cors", "tutorial/gone"], '
            '"kinds": ["docs"], "lang": "en", "tag": "t", "mode": "implementation"}',
            '{"id": "b", "query": "cors ja", "acceptable": ["ja/tutorial/cors"], "lang": "ja", '
            '"tag": "t"}',
            '{"id": "c", "query": "frontend", "acceptable": ["tutorial/frontend"], "tag": "t"}',
        ]
    )
    spec = sets.repo_corpus(sets.LIBRARIES["fastapi"])
    cases, skipped, dropped = fastapi_repo.cases_from(questions, files, spec)
    assert (skipped, dropped) == (1, 2)
    assert [(c.case_id, c.group, dict(c.gains)) for c in cases] == [
        ("a", "en", {"docs/en/docs/tutorial/cors.md": 1}),
        ("b", "ja", {"docs/ja/docs/tutorial/cors.md": 1}),
    ]
    assert cases[0].mode == "implementation" and cases[0].corpus == spec


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_a_blob_the_git_dir_lacks_is_skipped_and_counted(tmp_path: Path) -> None:
    clone = tmp_path / "repos" / "acme+pages"
    clone.mkdir(parents=True)
    (clone / "kept.txt").write_text("kept page\n")
    (clone / "lost.txt").write_text("a page whose blob is gone\n")
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "pages")
    lost = _git(clone, "rev-parse", "HEAD:lost.txt")
    (clone / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    logged: list[str] = []
    done = materialise(
        tmp_path / "repos",
        "acme/pages",
        _git(clone, "rev-parse", "HEAD"),
        Selection("txt", suffixes=(".txt",)),
        tmp_path / "cache",
        logged.append,
    )
    assert done.file_count == 1
    assert sorted(p.name for p in done.tree.iterdir()) == ["kept.txt"]
    assert any("skipped 1 file(s) whose blob the git dir lacks" in m for m in logged)


def test_libref_maps_its_pages_and_refuses_a_page_or_field_it_lacks(tmp_path: Path) -> None:
    from scriptorium.evaluation.suite import libref

    spec = ds1000.corpus()
    files = [f"{PLAIN}/pandas~1/reference/api/pandas.DataFrame.where.txt", "README.md"]
    entry = {
        "id": "pandas-where",
        "library": "pandas",
        "query": "keep values where a condition holds",
        "acceptable": ["pandas~1/reference/api/pandas.dataframe.where"],
    }
    (case,) = libref.cases_from([entry], files, spec)
    assert case.set_name == "libref" and case.group == "pandas" and case.corpus == spec
    assert case.gains == {files[0]: 1} and case.query == entry["query"]
    gone = {**entry, "acceptable": ["pandas~1/reference/api/pandas.dataframe.mask"]}
    with pytest.raises(
        SuiteError, match=re.escape("no page pandas~1/reference/api/pandas.dataframe.mask")
    ):
        libref.cases_from([gone], files, spec)
    path = tmp_path / "libref.jsonl"
    path.write_text(json.dumps(entry) + "\n" + json.dumps(entry) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"libref.jsonl:2: id 'pandas-where' twice"):
        libref.read(path)
    path.write_text(json.dumps({**entry, "acceptable": []}) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"libref.jsonl:1: no acceptable"):
        libref.read(path)


def test_the_projects_libref_set_reads_and_names_devdocs_pages() -> None:
    """eval/libref.jsonl: every entry complete, and each page a path under a DevDocs folder
    ds1000 knows (whether the page exists is checked when the suite maps it)."""
    from scriptorium.evaluation.suite import libref

    entries = libref.read(Path(__file__).parents[2] / "eval" / "libref.jsonl")
    assert len(entries) >= 50
    folders = set(ds1000.LIBRARY_FOLDERS.values())
    for entry in entries:
        for page in entry["acceptable"]:
            assert page.split("/", 1)[0] in folders and not page.endswith(".txt"), entry
