"""``fastapi-repo``: the project's FastAPI questions asked over the whole FastAPI repository.

The ``fastapi`` set speaks in the locations of the sources of ``eval/fastapi.toml`` (English
pages unqualified, ``ja/…`` and ``zh/…`` pages qualified, code by its path). Here the same
questions meet the whole repository at the docs-search commit, sourced as docs-search-repo
sources it and asked without ``kinds``. Their answers are turned into repository files through
the config's own sources: each source's root, relative to the folder all the roots share (the
FastAPI snapshot), is the same folder of the repository, and the source's ``page_location``
names its files as the set does. An answer with no such file at that commit is dropped, and a
question left with none is skipped, since the snapshot is of another commit.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from scriptorium.evaluation.evalset import Case, EvalSetError, load_eval_set
from scriptorium.evaluation.suite.corpus import open_view
from scriptorium.evaluation.suite.fastapi_set import searched
from scriptorium.evaluation.suite.materialise import materialise
from scriptorium.evaluation.suite.repos import SuiteError, find_git_dir, has_commit
from scriptorium.evaluation.suite.sets import (
    LIBRARIES,
    CorpusSpec,
    SourceSpec,
    SuiteCase,
    asking,
    repo_corpus,
)
from scriptorium.plugins import Registry
from scriptorium.settings.config import ConfigError, load_settings

SET_NAME = "fastapi-repo"


@dataclass(frozen=True, slots=True)
class Loaded:
    """The cases, how many searched questions were skipped and how many answers dropped."""

    cases: list[SuiteCase]
    questions: int
    skipped: int
    dropped: int


def config_sources(config: Path) -> tuple[tuple[SourceSpec, ...], frozenset[str]]:
    """The config's sources re-rooted at the folder their roots share, and the names of the
    ones whose locations are qualified (not default)."""
    try:
        settings = load_settings(config)
    except ConfigError as exc:
        raise SuiteError(f"{config}: {exc}") from exc
    local = [s for s in settings.sources if s.root is not None]
    if not local:
        raise SuiteError(f"{config}: no local source to map the set's answers with")
    common = os.path.commonpath([str(s.root) for s in local])
    specs = []
    for s in local:
        subdir = os.path.relpath(str(s.root), common)
        include = tuple(s.options.get("include") or ())
        specs.append(SourceSpec(s.name, s.kind, "" if subdir == "." else subdir, include))
    return tuple(specs), frozenset(s.name for s in local if not s.default)


def location_files(
    pages: Mapping[tuple[str, str], str], qualified: frozenset[str]
) -> dict[str, str]:
    """The set's location of every listed page (``en`` page, ``ja/…`` page, code path) → file."""
    found: dict[str, str] = {}
    for (source, page), file in pages.items():
        found.setdefault(f"{source}/{page}" if source in qualified else page, file)
    return found


def cases_from(
    questions: Sequence[Case], files: Mapping[str, str], spec: CorpusSpec
) -> tuple[list[SuiteCase], int, int]:
    """A case per question with an answer in ``files``; (cases, skipped, answers dropped)."""
    cases, skipped, dropped = [], 0, 0
    for question in questions:
        gains = {files[a]: 1 for a in question.acceptable if a in files}
        dropped += sum(1 for a in question.acceptable if a not in files)
        if not gains:
            skipped += 1
            continue
        cases.append(
            asking(
                question.query or "",
                set_name=SET_NAME,
                case_id=question.id,
                group=question.lang,
                corpus=spec,
                gains=gains,
                mode=question.mode,
                surface=question.surface,
            )
        )
    return cases, skipped, dropped


def load(
    set_path: Path,
    config: Path,
    *,
    repos: Path,
    cache: Path,
    registry: Registry,
    log: Callable[[str], None],
    source: tuple[str, str] | None = None,
) -> Loaded:
    """Materialise the repository (FastAPI at the docs-search commit, or ``source``'s
    repository and commit), map the set's answers to its files, build the cases."""
    try:
        questions = [c for c in load_eval_set(set_path) if searched(c)]
    except EvalSetError as exc:
        raise SuiteError(str(exc)) from exc
    library = LIBRARIES["fastapi"]
    if source is not None:
        library = replace(library, repo=source[0], commit=source[1])
    spec = repo_corpus(library)
    git_dir = find_git_dir(repos, spec.repo)
    if not has_commit(git_dir, spec.commit):
        raise SuiteError(f"repository {spec.repo} has no commit {spec.commit}")
    tree = materialise(repos, spec.repo, spec.commit, spec.selection, cache, log).tree
    sources, qualified = config_sources(config)
    view = open_view(registry, CorpusSpec(spec.repo, spec.commit, spec.selection, sources), tree)
    files = location_files(view.pages, qualified)
    cases, skipped, dropped = cases_from(questions, files, spec)
    log(
        f"{SET_NAME}: {len(cases)} of {len(questions)} questions map to files at "
        f"{spec.commit[:12]} ({skipped} skipped, {dropped} answers dropped)"
    )
    return Loaded(cases, len(questions), skipped, dropped)
