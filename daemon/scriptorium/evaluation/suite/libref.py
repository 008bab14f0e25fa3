"""``libref``: short library-reference intents over the DevDocs pages ds1000 is asked over.

An agent that needs a library's function asks for what it does ("indices that would sort an
array"), in words that are on every reference page. The project's own intents
(``eval/libref.jsonl``) name the pages that answer them, written down before any run from the
pages' listing, as paths under the DevDocs root without ``.txt`` (compared case-insensitively,
as ds1000's titles are). They are asked over the same pinned pages as ds1000, so both sets share
one daemon; a case counts by page, and Hit@5 is the figure the held-out kind is judged by.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from scriptorium.evaluation.suite import ds1000
from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.evaluation.suite.sets import CorpusSpec, SuiteCase, asking, project_entries

SET_NAME = "libref"
FIELDS = ("id", "library", "query", "acceptable")


def read(path: Path) -> list[dict[str, Any]]:
    """The set's entries; one lacking a field, or not JSON, or an id given twice is an error
    naming its line."""
    return project_entries(path, FIELDS)


def cases_from(
    entries: list[dict[str, Any]], files: list[str], spec: CorpusSpec
) -> list[SuiteCase]:
    """A case for every entry, its pages mapped to the repository's files. The set is pinned
    to these pages: a page that is not among them is the set's error, not a case to skip."""
    pages = ds1000.page_index(files)
    cases = []
    for entry in entries:
        gains = {}
        for page in entry["acceptable"]:
            found = pages.get(page.lower())
            if found is None:
                raise SuiteError(f"{SET_NAME} {entry['id']}: no page {page} at {spec.key}")
            gains[found] = 1
        cases.append(
            asking(
                entry["query"],
                set_name=SET_NAME,
                case_id=entry["id"],
                group=entry["library"],
                corpus=spec,
                gains=gains,
            )
        )
    return cases


def load(
    path: Path,
    repos: Path,
    cache: Path,
    source: tuple[str, str],
    log: Callable[[str], None],
) -> list[SuiteCase]:
    """Read the set, materialise ds1000's pages (the same tree ds1000 builds) and map it."""
    entries = read(path)
    spec = ds1000.corpus(*source)
    ds1000.checked_git_dir(repos, spec)
    return cases_from(entries, ds1000.page_files(repos, cache, spec, log), spec)
