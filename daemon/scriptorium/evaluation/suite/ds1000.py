"""CodeRAG-Bench's DS-1000 library-reference set: a data-science problem → its reference page.

The repository has no licence, so nothing of it is kept here: the problems are read from its
git dir at the pinned commit, and the DevDocs pages are materialised into the suite's cache like
any corpus. A ``docs`` title names a page as dots (``pandas.reference.api.pandas.dataframe.where``):
its first part is the library, whose DevDocs folder is in :data:`LIBRARY_FOLDERS`, and the rest
is the page path with some of its dots standing for folders, so every split of them into
folders and a file name is tried, case-insensitively. Problems with no page in the corpus are
skipped (most list no docs at all).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scriptorium.evaluation.suite.materialise import Selection, materialise
from scriptorium.evaluation.suite.repos import SuiteError, find_git_dir, has_commit
from scriptorium.evaluation.suite.sets import (
    CorpusSpec,
    SourceSpec,
    SuiteCase,
    asking,
    json_lines,
)

SET_NAME = "ds1000"
REPO = "code-rag-bench/code-rag-bench"
COMMIT = "f9e100ca9ed94b8f1983b356ae81966e30210cf4"
PROBLEMS_FILE = "retrieval/datasets/canonical/ds1000_docs.json"
PAGES_DIR = "preprocessor/devdocs/plain"
# The set's rule: a problem is searched with its first 2,000 characters (well under the
# daemon's own 8,192, so that limit never applies here).
QUERY_CHARS = 2000
# A title's first part → the DevDocs folder of that library's pages.
LIBRARY_FOLDERS = {
    "pandas": "pandas~1",
    "numpy": "numpy~1.22",
    "matplotlib": "matplotlib~3.5",
    "sklearn": "scikit_learn",
    "scikit_learn": "scikit_learn",
    "pytorch": "pytorch~2",
    "torch": "pytorch~2",
    "tensorflow": "tensorflow~2.4",
    "python": "python~3.9",
}


@dataclass(frozen=True, slots=True)
class Loaded:
    """The cases of the set and how many problems had no page to be scored against."""

    cases: list[SuiteCase]
    problems: int
    skipped: int


def corpus(repo: str = REPO, commit: str = COMMIT) -> CorpusSpec:
    """Every DevDocs page of the repository, one ``text`` source at the pages' root."""
    selection = Selection("devdocs", prefixes=(f"{PAGES_DIR}/",), suffixes=(".txt",))
    return CorpusSpec(repo, commit, selection, (SourceSpec("docs", "text", subdir=PAGES_DIR),))


def read_problems(git_dir: Path, commit: str) -> list[dict[str, Any]]:
    """The problems, one JSON object a line, straight from the git dir at ``commit``."""
    done = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "blob", f"{commit}:{PROBLEMS_FILE}"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise SuiteError(f"{git_dir}: no {PROBLEMS_FILE} at {commit[:12]}")
    rows = []
    for number, row in json_lines(done.stdout.decode("utf-8").splitlines(), PROBLEMS_FILE):
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise SuiteError(f"{PROBLEMS_FILE}:{number}: a problem needs a 'prompt'")
        rows.append(row)
    return rows


def page_index(files: Iterable[str]) -> dict[str, str]:
    """Lower-cased path under the pages' root, without ``.txt`` → the repository file."""
    prefix = f"{PAGES_DIR}/"
    index = {}
    for file in files:
        if file.startswith(prefix) and file.lower().endswith(".txt"):
            index[file[len(prefix) : -4].lower()] = file
    return index


def title_page(title: str, pages: Mapping[str, str]) -> str | None:
    """The repository file a ``docs`` title names (its ``#fragment`` dropped), or None."""
    library, _, rest = title.split("#", 1)[0].strip().partition(".")
    folder = LIBRARY_FOLDERS.get(library.lower())
    if folder is None or not rest:
        return None
    parts = rest.split(".")
    for cut in range(len(parts)):
        path = "/".join([folder, *parts[:cut], ".".join(parts[cut:])])
        found = pages.get(path.lower())
        if found is not None:
            return found
    return None


def cases_from(
    rows: Sequence[Mapping[str, Any]], files: Iterable[str], spec: CorpusSpec
) -> tuple[list[SuiteCase], int]:
    """A case for every problem with at least one page in ``files``; and how many had none."""
    pages = page_index(files)
    cases, skipped = [], 0
    for number, row in enumerate(rows):
        titles = [str(d.get("title", "")) for d in row.get("docs") or [] if isinstance(d, dict)]
        gains = {page: 1 for t in titles if (page := title_page(t, pages)) is not None}
        if not gains:
            skipped += 1
            continue
        meta = row.get("metadata") or {}
        library = str(meta.get("library") or "unknown").lower()
        problem = meta.get("problem_id", number)
        cases.append(
            asking(
                row["prompt"],
                limit=QUERY_CHARS,
                set_name=SET_NAME,
                case_id=f"{library}-{problem}",
                group=library,
                corpus=spec,
                gains=gains,
            )
        )
    return cases, skipped


def checked_git_dir(repos: Path, spec: CorpusSpec) -> Path:
    """The git dir of ``spec``'s repository, which must hold its commit."""
    git_dir = find_git_dir(repos, spec.repo)
    if not has_commit(git_dir, spec.commit):
        raise SuiteError(f"repository {spec.repo} has no commit {spec.commit}")
    return git_dir


def page_files(repos: Path, cache: Path, spec: CorpusSpec, log: Callable[[str], None]) -> list[str]:
    """The files of ``spec``'s tree (the DevDocs pages), materialised once into ``cache``."""
    tree = materialise(repos, spec.repo, spec.commit, spec.selection, cache, log).tree
    return [p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()]


def load(repos: Path, cache: Path, source: tuple[str, str], log: Callable[[str], None]) -> Loaded:
    """Materialise the pages, read the problems and resolve their titles to pages."""
    spec = corpus(*source)
    rows = read_problems(checked_git_dir(repos, spec), spec.commit)
    cases, skipped = cases_from(rows, page_files(repos, cache, spec, log), spec)
    log(f"{SET_NAME}: {len(cases)} of {len(rows)} problems resolve to a page ({skipped} skipped)")
    return Loaded(cases, len(rows), skipped)
