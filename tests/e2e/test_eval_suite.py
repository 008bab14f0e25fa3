"""``scriptorium eval --suite`` end to end: a tiny git repository, tiny sets, a real daemon.

The repository is made here (git init, a commit), the sets are written in the external sets'
own formats, and the suite CLI runs as a subprocess: it materialises the corpus from the git
dir, starts the real daemon over gRPC, builds both baselines and writes its records. The
queries are built so that every system must rank one known file first, which pins exact values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.trees import write_tree

REPO_NAME = "acme/tiny"

FILES = {
    "README.md": "# Tiny\n\nA small project used to check the evaluation suite.\n",
    "docs/guide/install.md": (
        "# Installing\n\nInstall the package with pip:\n\n    pip install tiny\n\n"
        "## Upgrading\n\nRun pip install again with the upgrade flag.\n"
    ),
    "docs/guide/configure.md": (
        "# Configuring\n\nAfter you install it, settings live in a TOML file.\n"
    ),
    "docs/reference/index.md": "# Reference\n\nEvery public class and function, listed.\n",
    "pkg/__init__.py": '"""The tiny package."""\n',
    "pkg/frob.py": (
        '"""Frobnication."""\n\n\nclass Frobnicator:\n    """Turns things around."""\n\n'
        "    def spin(self, wobble: float) -> float:\n"
        '        """Spin by a wobble factor; a negative wobble raises ValueError."""\n'
        "        if wobble < 0:\n"
        '            raise ValueError("negative wobble")\n'
        "        return wobble * 2\n\n\n"
        "def unrelated_helper() -> int:\n    return 1\n"
    ),
    "pkg/ledger.py": (
        '"""Bookkeeping."""\n\n\ndef balance_accounts(entries: list[int]) -> int:\n'
        '    """Sum the ledger entries into one balance."""\n    return sum(entries)\n'
    ),
}


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    root = tmp_path_factory.mktemp("suite")
    clone = root / "repos" / "acme+tiny"  # the owner+name layout, a clone with a work tree
    write_tree(clone, FILES)
    _git(clone, "init", "-q")
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "-m", "tiny")
    commit = _git(clone, "rev-parse", "HEAD")
    # A later commit changes a page: the suite must read the pinned commit, not the work tree.
    (clone / "docs/guide/install.md").write_text("# Gone\n\nNothing here now.\n")
    _git(clone, "commit", "-q", "-am", "later")

    docs_set = root / "dataset.yaml"
    docs_set.write_text(
        "libraries:\n"
        "  tiny:\n"
        f"    repo: {REPO_NAME}\n"
        f"    commit: {commit}\n"
        "    url_prefix: https://tiny.dev/\n"
        "    docs_dir: docs\n"
        "entries:\n"
        "  - vars:\n"
        "      library: tiny\n"
        "      query: how do I install with pip\n"
        "      intent: api-lookup\n"
        "      qrels:\n"
        '        - { url: "https://tiny.dev/guide/install", grade: 3 }\n'
        '        - { url: "https://tiny.dev/guide/configure/", grade: 1 }\n'
        "  - vars:\n"
        "      library: tiny\n"
        "      query: list of every public class\n"
        "      intent: api-lookup\n"
        "      qrels:\n"
        '        - { url: "https://tiny.dev/reference/", grade: 3 }\n'
        "  - vars:\n"
        "      library: python\n"  # not a library of this set: skipped, as in the real file
        "      query: anything\n"
        "      qrels: []\n",
        encoding="utf-8",
    )
    long_statement = "The ledger balance is wrong.\n" + "Traceback line in balance\n" * 400
    assert len(long_statement) > 8192
    swe_set = root / "instances.jsonl"
    rows = [
        {
            "instance_id": "acme__tiny-1",
            "repo": REPO_NAME,
            "base_commit": commit,
            "problem_statement": "Frobnicator.spin: a negative wobble raises ValueError",
            "expected_spans": {"pkg/frob.py": ["Frobnicator.spin"]},
            "alternative_spans": [],
        },
        {
            "instance_id": "acme__tiny-2",
            "repo": REPO_NAME,
            "base_commit": commit,
            "problem_statement": long_statement,
            "expected_spans": {"pkg/ledger.py": ["balance_accounts", "imports"]},
            "alternative_spans": [],
        },
    ]
    swe_set.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {"root": root, "docs": docs_set, "swe": swe_set, "commit": commit}


def _suite(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "scriptorium", "eval", "--suite", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _run(workspace: dict, out: str) -> subprocess.CompletedProcess[str]:
    root = workspace["root"]
    return _suite(
        "--sets",
        "docs-search,swebench",
        "--repos",
        str(root / "repos"),
        "--docs-search-set",
        str(workspace["docs"]),
        "--swebench-set",
        str(workspace["swe"]),
        "--cache",
        str(root / "cache"),
        "--out",
        str(root / out),
        cwd=root,
    )


@pytest.fixture(scope="module")
def first_run(workspace: dict) -> subprocess.CompletedProcess[str]:
    done = _run(workspace, "run-a")
    assert done.returncode == 0, done.stderr
    return done


def _records(path: Path) -> dict[tuple[str, str, str], dict]:
    rows = [json.loads(line) for line in (path / "cases.jsonl").read_text().splitlines()]
    return {(r["set"], r["case_id"], r["system"]): r for r in rows}


SYSTEMS = ("daemon", "bm25-file", "bm25-block")


def test_tables_show_every_set_with_the_daemon_beside_both_baselines(first_run) -> None:
    out = first_run.stdout
    assert "### docs-search (36-query subset, page level)" in out
    assert "### swebench" in out
    assert "### macro average over sets" in out
    for system in SYSTEMS:
        assert f"| tiny | 2 | {system} |" in out
        assert f"| acme/tiny | 2 | {system} |" in out
    assert "1 query clipped to the daemon's 8,192-character limit" in out


def test_records_hold_known_answers_for_every_system(first_run, workspace) -> None:
    records = _records(workspace["root"] / "run-a")
    assert len(records) == 4 * len(SYSTEMS)
    for system in SYSTEMS:
        install = records[("docs-search", "tiny-01", system)]
        assert install["error"] == ""
        assert install["files"][:2] == ["docs/guide/install.md", "docs/guide/configure.md"]
        assert install["rank"] == 1
        assert install["metrics"] == {
            "hit@1": 1.0,
            "hit@3": 1.0,
            "hit@5": 1.0,
            "mrr": 1.0,
            "recall@10": 1.0,
            "ndcg@5": 1.0,
            "ndcg@10": 1.0,
        }
        # The URL with a trailing slash maps to reference/index.md.
        assert records[("docs-search", "tiny-02", system)]["expected"] == {
            "docs/reference/index.md": 3
        }
        spin = records[("swebench", "acme__tiny-1", system)]
        assert spin["files"][0] == "pkg/frob.py"
        assert spin["metrics"]["hit@1"] == 1.0 and spin["metrics"]["mrr"] == 1.0
        long = records[("swebench", "acme__tiny-2", system)]
        assert long["truncated"] is True and long["query_chars"] > 8192
        assert long["error"] == ""  # the daemon was sent the first 8,192 characters
    # Span level: a code result defining Frobnicator.spin (or its class) is in the window; a
    # whole file defines nothing in particular, so it has no span figures.
    assert records[("swebench", "acme__tiny-1", "daemon")]["metrics"]["span@5"] == 1.0
    assert records[("swebench", "acme__tiny-1", "bm25-block")]["metrics"]["span@5"] == 1.0
    assert "span@5" not in records[("swebench", "acme__tiny-1", "bm25-file")]["metrics"]


def test_a_second_run_reuses_the_cache_and_compares_as_unchanged(first_run, workspace) -> None:
    root = workspace["root"]
    corpora = root / "cache" / "acme+tiny" / str(workspace["commit"])
    assert sorted(p.name for p in corpora.iterdir()) == ["docs", "py-docs"]
    for corpus in corpora.iterdir():
        assert (corpus / "tree.complete").is_file()
        assert any((corpus / "state").iterdir()), "the daemon's generation is kept"
        assert any(p.name.startswith("baselines-") for p in corpus.iterdir())
    # The tree is the pinned commit's, not the later work tree.
    install = corpora / "docs" / "tree" / "docs" / "guide" / "install.md"
    assert install.read_text().startswith("# Installing")
    assert not (corpora / "docs" / "tree" / "pkg").exists()  # docs-search needs only docs

    again = _run(workspace, "run-b")
    assert again.returncode == 0, again.stderr
    a, b = _records(root / "run-a"), _records(root / "run-b")
    assert {k: v["files"] for k, v in a.items()} == {k: v["files"] for k, v in b.items()}

    compared = _suite("--compare", str(root / "run-a"), str(root / "run-b"), cwd=root)
    assert compared.returncode == 0, compared.stderr
    assert "paired bootstrap" in compared.stdout and "sign test" in compared.stdout
    assert "| daemon | mrr | 2 | 1.000 | 1.000 | +0.000 | [+0.000, +0.000] | 0/0 | 1.000 |" in (
        compared.stdout
    )


def test_a_missing_repository_is_named(workspace) -> None:
    root = workspace["root"]
    (root / "empty").mkdir(exist_ok=True)
    done = _suite(
        "--sets",
        "swebench",
        "--repos",
        str(root / "empty"),
        "--swebench-set",
        str(workspace["swe"]),
        "--cache",
        str(root / "cache-empty"),
        cwd=root,
    )
    assert done.returncode == 2
    assert "repository acme/tiny is missing under" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_docs_questions_run_over_the_whole_repository_as_well(workspace) -> None:
    root = workspace["root"]
    done = _suite(
        "--sets",
        "docs-search-repo",
        "--repos",
        str(root / "repos"),
        "--docs-search-set",
        str(workspace["docs"]),
        "--cache",
        str(root / "cache-repo"),
        "--out",
        str(root / "run-repo"),
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert "### docs-search-repo (the same 36 questions over each whole repository" in done.stdout
    tree = root / "cache-repo" / "acme+tiny" / str(workspace["commit"]) / "repo" / "tree"
    assert (tree / "pkg" / "frob.py").is_file()  # the code is there beside the docs
    records = _records(root / "run-repo")
    for system in SYSTEMS:
        install = records[("docs-search-repo", "tiny-01", system)]
        assert install["error"] == "" and install["rank"] == 1, install
        assert install["expected"] == {"docs/guide/install.md": 3, "docs/guide/configure.md": 1}
