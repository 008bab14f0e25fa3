"""The usage set: the project's questions about using a library over its whole repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scriptorium.evaluation.suite import report, run, sets, usage
from scriptorium.evaluation.suite.repos import SuiteError

SET = Path(__file__).resolve().parents[2] / "eval" / "usage.jsonl"


def _write(tmp_path: Path, *entries: dict | str) -> Path:
    path = tmp_path / "usage.jsonl"
    lines = [e if isinstance(e, str) else json.dumps(e) for e in entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


ENTRY = {
    "id": "lib-timeout",
    "repo": "owner/lib",
    "commit": "a" * 40,
    "query": "set a timeout",
    "acceptable": ["docs/timeouts.md", "lib/_config.py"],
}


@pytest.mark.parametrize("name", ["usage", "usage-names"])
def test_the_projects_sets_read_into_whole_repository_cases(name: str) -> None:
    cases = usage.read(SET.with_name(f"{name}.jsonl"), name)
    assert len(cases) >= 20
    assert len({c.case_id for c in cases}) == len(cases)
    assert {c.group for c in cases} == {"httpx", "pydantic"}
    for case in cases:
        assert case.set_name == name and case.gains and not case.truncated
        assert [(s.name, s.kind) for s in case.corpus.sources] == [
            ("docs", "markdown"),
            ("code", "code"),
        ]
        assert len(case.corpus.commit) == 40
    assert name in sets.SET_NAMES and name in report.SET_TITLES
    assert run.PAGE_CUTOFFS[name] == (1, 3, 5, 10)
    assert name not in run.DOCS_ONLY_SETS  # asked with default kinds, as an agent asks


def test_an_entry_is_a_case_over_its_repository(tmp_path: Path) -> None:
    (case,) = usage.read(_write(tmp_path, ENTRY, ""))
    assert case.case_id == "lib-timeout" and case.group == "lib"
    assert case.corpus == sets.whole_repository("owner/lib", "a" * 40)
    assert case.gains == {"docs/timeouts.md": 1, "lib/_config.py": 1}
    assert case.query == "set a timeout" and case.query_chars == len("set a timeout")


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        (["{not json"], "usage.jsonl:1: not valid JSON"),
        ([{**ENTRY, "acceptable": []}], "usage.jsonl:1: no acceptable"),
        ([{k: v for k, v in ENTRY.items() if k != "commit"}], "no commit"),
        ([ENTRY, ENTRY], "usage.jsonl:2: id 'lib-timeout' twice"),
    ],
)
def test_a_bad_entry_is_named_by_its_line(tmp_path: Path, entries: list, said: str) -> None:
    with pytest.raises(SuiteError, match=said):
        usage.read(_write(tmp_path, *entries))


def test_an_answer_missing_from_its_commit_is_the_sets_error(tmp_path: Path) -> None:
    (case,) = usage.read(_write(tmp_path, ENTRY))
    usage.check_answers([case], lambda spec: frozenset({"docs/timeouts.md", "lib/_config.py"}))
    with pytest.raises(SuiteError, match=r"lib-timeout: no lib/_config.py in owner/lib@"):
        usage.check_answers([case], lambda spec: frozenset({"docs/timeouts.md"}))
