"""``usage``: questions about using a library, asked over its whole repository.

An agent working with a library asks how to do something with it ("forbid extra fields on a
model") over a clone of the library: docs, code, tests and all, with default kinds. The
project's own questions (``eval/usage.jsonl``) name the repository and commit they are asked
over and the files that answer them, docs pages or code, written down before any run. A case
counts by file, like fastapi-repo; Hit@1 is the figure a user meets.

``usage-names`` (``eval/usage-names.jsonl``) asks the same way with questions that name the
library's identifiers ("use ConfigDict to forbid extra fields", "how do I catch
HTTPStatusError"), each answered by the docs page that shows the use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.evaluation.suite.sets import (
    CorpusSpec,
    SuiteCase,
    asking,
    project_entries,
    whole_repository,
)

SET_NAME = "usage"
NAMES_SET = "usage-names"
SET_NAMES = (SET_NAME, NAMES_SET)
FIELDS = ("id", "repo", "commit", "query", "acceptable")


def read(path: Path, set_name: str = SET_NAME) -> list[SuiteCase]:
    """The set's cases; an entry lacking a field, or not JSON, or an id given twice is an
    error naming its line."""
    cases: list[SuiteCase] = []
    for entry in project_entries(path, FIELDS):
        cases.append(
            asking(
                entry["query"],
                set_name=set_name,
                case_id=entry["id"],
                group=entry["repo"].rsplit("/", 1)[-1],
                corpus=whole_repository(entry["repo"], entry["commit"]),
                gains=dict.fromkeys(entry["acceptable"], 1),
            )
        )
    return cases


def check_answers(cases: list[SuiteCase], files_of: Callable[[CorpusSpec], frozenset[str]]) -> None:
    """Every answer is a file of its repository at its commit (the set is pinned: a missing
    one is the set's error, not a case to skip)."""
    for case in cases:
        files = files_of(case.corpus)
        absent = sorted(f for f in case.gains if f not in files)
        if absent:
            raise SuiteError(
                f"{case.set_name} {case.case_id}: no {', '.join(absent)} in {case.corpus.key}"
            )
