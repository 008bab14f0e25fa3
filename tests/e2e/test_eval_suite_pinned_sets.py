"""``ds1000``, ``libref`` and ``fastapi-repo`` end to end: tiny git repositories standing in for
the pinned ones (named with ``--ds1000-source`` and ``--fastapi-repo-source``), a real daemon
each (libref's intents are asked of ds1000's).

The DS-1000 stand-in keeps the real layout (the problems file under ``retrieval/``, DevDocs
text pages under ``preprocessor/devdocs/plain/``) and loses one page's blob, as the real
snapshot does; the FastAPI stand-in has English and Japanese pages and library code, and the
questions are in the project set's own format, answered in its locations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_eval_suite import SYSTEMS, _git, _records, _suite
from tests.support.trees import write_tree

PLAIN = "preprocessor/devdocs/plain"
LONG_PROMPT = "Problem:\nI need the quokka cumulative sum of an array.\n" + "lorem ipsum " * 300
PROBLEMS = [
    {
        "prompt": "Problem:\nReplace the wombat values where the condition is false.",
        "metadata": {"library": "Pandas", "problem_id": 0},
        "docs": [{"title": "pandas.reference.api.pandas.dataframe.where"}],
    },
    {
        "prompt": LONG_PROMPT,
        "metadata": {"library": "Numpy", "problem_id": 1},
        "docs": [{"title": "numpy.reference.generated.numpy.cumsum#numpy.cumsum"}],
    },
    {  # its only page is the one whose blob the git dir lacks
        "prompt": "Problem:\nDraw two plots side by side.",
        "metadata": {"library": "Matplotlib", "problem_id": 2},
        "docs": [{"title": "matplotlib._as_gen.matplotlib.pyplot.subplots"}],
    },
    {"prompt": "Problem:\nNo page here.", "metadata": {"library": "Scipy"}, "docs": []},
]
CRB_FILES = {
    "README.md": "# Stand-in\n\nNot a page.\n",
    "retrieval/datasets/canonical/ds1000_docs.json": "".join(
        json.dumps(p) + "\n" for p in PROBLEMS
    ),
    f"{PLAIN}/pandas~1/reference/api/pandas.DataFrame.where.txt": (
        "pandas.DataFrame.where\n\nReplace wombat values where the condition is false.\n"
    ),
    f"{PLAIN}/numpy~1.22/reference/generated/numpy.cumsum.txt": (
        "numpy.cumsum\n\nReturn the quokka cumulative sum of the elements along an axis.\n"
    ),
    f"{PLAIN}/python~3.9/library/os.txt": "os\n\nMiscellaneous operating system interfaces.\n",
    f"{PLAIN}/matplotlib~3.5/_as_gen/matplotlib.pyplot.subplots.txt": (
        "matplotlib.pyplot.subplots\n\nCreate a figure and a set of subplots.\n"
    ),
}
INTENTS = [
    {"id": "python-os", "library": "python", "query": "miscellaneous operating system interfaces",
     "acceptable": ["python~3.9/library/os"]},
    # The file is named pandas.DataFrame.where.txt: pages are compared case-insensitively.
    {"id": "pandas-where", "library": "pandas", "query": "replace the wombat values",
     "acceptable": ["pandas~1/reference/api/pandas.dataframe.where"]},
]  # fmt: skip
FAPI_FILES = {
    "README.md": "# Fapi\n\nA web framework.\n",
    "docs/en/docs/tutorial/cors.md": (
        "# CORS\n\nAllow a frontend on another origin with the CORSMiddleware.\n"
    ),
    "docs/en/docs/tutorial/background-tasks.md": (
        "# Background Tasks\n\nRun work after the response has been sent.\n"
    ),
    "docs/ja/docs/tutorial/cors.md": "# CORS\n\nplatypus オリジン間リソース共有。\n",
    "fastapi/__init__.py": '"""Fapi."""\n',
    "fastapi/routing.py": (
        '"""Routers."""\n\n\ndef include_wobbly_router(prefix: str) -> str:\n'
        '    """Include a wobbly router under a prefix."""\n    return prefix\n'
    ),
}
QUESTIONS = [
    {"id": "en-cors", "query": "allow my frontend on another origin with CORSMiddleware",
     "acceptable": ["tutorial/cors"], "kinds": ["docs"], "lang": "en", "tag": "how-to"},
    {"id": "ja-cors", "query": "platypus オリジン", "acceptable": ["ja/tutorial/cors"],
     "kinds": ["docs"], "lang": "ja", "tag": "how-to"},
    {"id": "code-router", "query": "include a wobbly router", "mode": "implementation",
     "acceptable": ["fastapi/routing.py"], "kinds": ["code"], "lang": "en", "tag": "code"},
    {"id": "en-gone", "query": "a page of a later commit", "acceptable": ["tutorial/frontend"],
     "lang": "en", "tag": "how-to"},
    {"id": "en-none", "query": "something nobody wrote about", "acceptable": [],
     "expect_abstain": True, "lang": "en", "tag": "abstain"},
]  # fmt: skip
FAPI_CONFIG = """
[[sources]]
name = "en"
kind = "markdown"
root = "snapshot/docs/en/docs"
default = true

[[sources]]
name = "ja"
kind = "markdown"
root = "snapshot/docs/ja/docs"

[[sources]]
name = "code"
kind = "code"
root = "snapshot"
default = true
include = ["fastapi/**/*.py"]
"""


def _repository(root: Path, name: str, files: dict[str, str]) -> str:
    clone = root / "repos" / name.replace("/", "+")
    write_tree(clone, files)
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "stand-in")
    return _git(clone, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("pinned")
    crb = _repository(root, "acme/crb", CRB_FILES)
    clone = root / "repos" / "acme+crb"
    lost = _git(
        clone, "rev-parse", f"HEAD:{PLAIN}/matplotlib~3.5/_as_gen/matplotlib.pyplot.subplots.txt"
    )
    (clone / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    fapi = _repository(root, "acme/fapi", FAPI_FILES)
    questions = root / "fastapi.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    config = root / "fastapi.toml"
    config.write_text(FAPI_CONFIG, encoding="utf-8")
    intents = root / "libref.jsonl"
    intents.write_text("".join(json.dumps(i) + "\n" for i in INTENTS), encoding="utf-8")
    done = _suite(
        "--sets",
        "ds1000,fastapi-repo,libref",
        "--libref-set",
        str(intents),
        "--repos",
        str(root / "repos"),
        "--ds1000-source",
        f"acme/crb@{crb}",
        "--fastapi-repo-source",
        f"acme/fapi@{fapi}",
        "--fastapi-set",
        str(questions),
        "--fastapi-config",
        str(config),
        "--cache",
        str(root / "cache"),
        "--out",
        str(root / "out"),
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    return {"root": root, "done": done, "crb": crb, "records": _records(root / "out")}


def test_both_sets_print_their_tables_beside_both_baselines(run) -> None:
    out, err = run["done"].stdout, run["done"].stderr
    assert "### ds1000 (CodeRAG-Bench DS-1000" in out
    assert "### fastapi-repo (the project's questions over the whole FastAPI repository" in out
    assert "### libref (the project's short library-reference intents" in out
    for system in SYSTEMS:
        assert f"| pandas | 1 | {system} |" in out
        assert f"| ja | 1 | {system} |" in out
    assert "1 query clipped to the set's first 2,000 characters" in out
    assert "ds1000: 2 of 4 problems resolve to a page (2 skipped)" in err
    assert "skipped 1 file(s) whose blob the git dir lacks" in err
    assert "fastapi-repo: 3 of 4 questions map to files" in err
    assert "(1 skipped, 1 answers dropped)" in err


def test_ds1000_scores_pages_of_the_devdocs_tree(run) -> None:
    records = run["records"]
    tree = run["root"] / "cache" / "acme+crb" / run["crb"] / "devdocs" / "tree"
    assert not (tree / "README.md").exists() and not (tree / "retrieval").exists()
    where = f"{PLAIN}/pandas~1/reference/api/pandas.DataFrame.where.txt"
    for system in SYSTEMS:
        pandas = records[("ds1000", "pandas-0", system)]
        assert pandas["error"] == "" and pandas["files"][0] == where, pandas
        assert pandas["metrics"] == {
            "hit@1": 1.0,
            "hit@3": 1.0,
            "hit@5": 1.0,
            "hit@10": 1.0,
            "mrr": 1.0,
        }
        numpy = records[("ds1000", "numpy-1", system)]
        assert numpy["truncated"] is True and numpy["query_chars"] == len(LONG_PROMPT)
        assert numpy["rank"] == 1, numpy
    assert not [k for k in records if k[0] == "ds1000" and k[1].startswith("matplotlib")]


def test_libref_intents_are_scored_by_page_over_ds1000s_pages(run) -> None:
    records = run["records"]
    expected = {
        "python-os": f"{PLAIN}/python~3.9/library/os.txt",
        "pandas-where": f"{PLAIN}/pandas~1/reference/api/pandas.DataFrame.where.txt",
    }
    for system in SYSTEMS:
        for case_id, file in expected.items():
            row = records[("libref", case_id, system)]
            assert row["expected"] == {file: 1} and row["error"] == "", row
            assert row["rank"] == 1, row
            assert set(row["metrics"]) == {"hit@1", "hit@3", "hit@5", "hit@10", "mrr"}
    # Asked of the daemon ds1000's two problems are asked of: one corpus, four cases.
    assert f"acme/crb@{run['crb'][:12]}/devdocs: 4 case(s)" in run["done"].stderr


def test_fastapi_repo_maps_the_sets_locations_to_repository_files(run) -> None:
    records = run["records"]
    expected = {
        "en-cors": "docs/en/docs/tutorial/cors.md",
        "ja-cors": "docs/ja/docs/tutorial/cors.md",
        "code-router": "fastapi/routing.py",
    }
    for system in SYSTEMS:
        for case_id, file in expected.items():
            row = records[("fastapi-repo", case_id, system)]
            assert row["expected"] == {file: 1} and row["error"] == ""
            assert row["rank"] == 1, row
            assert set(row["metrics"]) == {"hit@1", "hit@3", "hit@5", "hit@10", "mrr"}
    assert {k[1] for k in records if k[0] == "fastapi-repo"} == set(expected)
