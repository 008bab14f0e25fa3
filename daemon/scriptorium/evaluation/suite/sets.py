"""Loading the external sets into suite cases, and the corpus each case runs against.

A case names its corpus (repository, commit, file selection and the sources to configure) and
what counts as an answer, always as repository-relative file paths, so the daemon and every
baseline are scored by one function whatever locations they speak in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scriptorium.evaluation.suite.materialise import Selection
from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.limits import SEARCHED_QUERY_CHARS
from scriptorium.text import clip_at_whitespace

SET_NAMES = (
    "fastapi",
    "docs-search",
    "docs-search-repo",
    "swebench",
    "ds1000",
    "fastapi-repo",
    "usage",
    "libref",
    "usage-names",
)
DOCS_SEARCH_FILE = "docs-search-eval/dataset.yaml"
SWEBENCH_FILE = "swebench-verified/instances.jsonl"
# Span names that are not definitions: a result can never "be" them, so they only count as files.
NON_DEFINITION_SPANS = frozenset({"imports", "docstring"})


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """One daemon source over a materialised tree: a kind, a sub-folder and its patterns."""

    name: str
    kind: str
    subdir: str = ""
    include: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    """A repository at a commit, the files to materialise and the sources to index them with."""

    repo: str
    commit: str
    selection: Selection
    sources: tuple[SourceSpec, ...]

    @property
    def key(self) -> str:
        return f"{self.repo}@{self.commit[:12]}/{self.selection.name}"


@dataclass(frozen=True, slots=True)
class SuiteCase:
    """One query of one set, with its answers as repository-relative file paths."""

    set_name: str
    case_id: str
    group: str  # library (docs-search) or repository (swebench): the unit of the macro average
    query: str
    corpus: CorpusSpec
    # file → gain (docs-search grades; 1 for every expected file of swebench)
    gains: Mapping[str, int]
    # Definitions the fix edited (expected and alternative spans), per file (swebench only).
    spans: Mapping[str, frozenset[str]] = field(default_factory=dict)
    query_chars: int = 0
    truncated: bool = False
    intent: str = ""
    # The request's ranking mode and topical prior, as the project set asks (fastapi-repo).
    mode: str = ""
    surface: str = ""


def clip_query(text: str, limit: int = SEARCHED_QUERY_CHARS) -> tuple[str, bool]:
    """The query the daemon searches (its first ``limit`` characters, cut at a whitespace
    boundary; by default all the daemon would search) and whether it had to be cut; every
    system is given the same text."""
    clipped = clip_at_whitespace(text, limit)
    return clipped, len(clipped) < len(text)


def asking(text: str, *, limit: int = SEARCHED_QUERY_CHARS, **fields: Any) -> SuiteCase:
    """A case whose query is ``text`` as every system is given it (:func:`clip_query` to
    ``limit``), recording the length it had and whether it was cut; ``fields`` the rest."""
    query, truncated = clip_query(text, limit)
    return SuiteCase(query=query, query_chars=len(text), truncated=truncated, **fields)


def json_lines(lines: Iterable[str], where: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSON-lines set; a line that is not
    JSON is a :class:`SuiteError` naming ``where`` and the line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise SuiteError(f"{where}:{number}: not valid JSON ({exc.msg})") from exc


def project_entries(path: Path, fields: Sequence[str]) -> list[dict[str, Any]]:
    """The entries of one of the project's own JSON-lines sets (usage, libref), each holding
    every one of ``fields`` and an ``id`` no other entry has; a file that cannot be read, a
    line that is not JSON, an entry lacking a field or an id given twice is a
    :class:`SuiteError` naming its line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SuiteError(f"{path}: {exc}") from exc
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, entry in json_lines(lines, str(path)):
        missing = [name for name in fields if not entry.get(name)]
        if missing:
            raise SuiteError(f"{path}:{number}: no {', '.join(missing)}")
        if entry["id"] in seen:
            raise SuiteError(f"{path}:{number}: id {entry['id']!r} twice")
        seen.add(entry["id"])
        entries.append(entry)
    return entries


def parse_repo_at(raw: str, flag: str) -> tuple[str, str]:
    """``owner/name@commit`` → (repository, commit): another repository or commit for a set
    whose corpus is pinned (a test's own repository, a later snapshot)."""
    repo, sep, commit = raw.partition("@")
    if not sep or repo.count("/") != 1 or not commit:
        raise SuiteError(f"{flag} {raw}: give OWNER/NAME@COMMIT")
    return repo, commit


# ------------------------------------------------------------------------------ docs-search


@dataclass(frozen=True, slots=True)
class Library:
    """Where one library's documentation lives and how its page URLs map to files."""

    repo: str
    commit: str
    url_prefix: str
    docs_dir: str  # repository folder holding the pages; the daemon source's root
    index_pages: bool  # whether ``X/`` may also be ``X/index.md``


LIBRARIES: dict[str, Library] = {
    "react": Library(
        "reactjs/react.dev",
        "47e64bf7ad81aab8bacfa791a37816ee869135eb",
        "https://react.dev/",
        "src/content",
        index_pages=True,
    ),
    "fastapi": Library(
        "fastapi/fastapi",
        "ecace740f3eaccb1aba152cf1de79477095c56f4",
        "https://fastapi.tiangolo.com/",
        "docs/en/docs",
        index_pages=True,
    ),
    "vite": Library(
        "vitejs/vite",
        "b3132dacea9c6e0cf526cd9f0f09d850f577c262",
        "https://vite.dev/",
        "docs",
        index_pages=True,
    ),
}


def docs_corpus(library: Library) -> CorpusSpec:
    """The docs tree of a library: its Markdown pages only, one Markdown source at its root."""
    prefix = library.docs_dir.rstrip("/") + "/"
    selection = Selection("docs", prefixes=(prefix,), suffixes=(".md", ".mdx", ".markdown"))
    source = SourceSpec("docs", "markdown", subdir=library.docs_dir)
    return CorpusSpec(library.repo, library.commit, selection, (source,))


def repo_corpus(library: Library) -> CorpusSpec:
    """The whole repository of a library (:func:`whole_repository`)."""
    return whole_repository(library.repo, library.commit)


def whole_repository(repo: str, commit: str) -> CorpusSpec:
    """A whole repository, sourced as ``scriptorium serve REPO`` sources it: its Markdown as
    ``docs`` and its code as ``code``, each with the kind's default patterns. The questions
    then meet the code, tests and translations a user serving a clone meets."""
    sources = (SourceSpec("docs", "markdown"), SourceSpec("code", "code"))
    return CorpusSpec(repo, commit, Selection("repo"), sources)


# The sets scored page by page against the docs-search grades, and the corpus each asks over.
DOCS_SEARCH_CORPORA: dict[str, Callable[[Library], CorpusSpec]] = {
    "docs-search": docs_corpus,
    "docs-search-repo": repo_corpus,
}
DOCS_SEARCH_SETS = frozenset(DOCS_SEARCH_CORPORA)


def url_candidates(library: Library, url: str) -> list[str]:
    """Repository files a page URL may be, in the order the README's mapping gives them."""
    if not url.startswith(library.url_prefix):
        raise SuiteError(f"{url}: not a {library.url_prefix} URL")
    page = url[len(library.url_prefix) :].split("#", 1)[0].split("?", 1)[0].strip("/")
    base = f"{library.docs_dir}/{page}" if page else f"{library.docs_dir}/index"
    found = [f"{base}.md"]
    if library.index_pages and page:
        found.append(f"{base}/index.md")
    return found


def map_url(library: Library, url: str, files: frozenset[str]) -> str:
    """The repository file behind ``url``; an error names the URL when none exists."""
    for candidate in url_candidates(library, url):
        if candidate in files:
            return candidate
    raise SuiteError(
        f"{url}: no page at {library.repo}@{library.commit[:12]} "
        f"(looked for {', '.join(url_candidates(library, url))})"
    )


def libraries_from(data: Mapping[str, Any], where: Path) -> dict[str, Library]:
    """The built-in libraries, plus any the file defines under ``libraries:`` (a suite extension
    of the format, so a small set over another repository needs no code)."""
    libraries = dict(LIBRARIES)
    extra = data.get("libraries") or {}
    if not isinstance(extra, Mapping):
        raise SuiteError(f"{where}: 'libraries' must be a mapping")
    for name, item in extra.items():
        try:
            libraries[str(name)] = Library(
                repo=str(item["repo"]),
                commit=str(item["commit"]),
                url_prefix=str(item["url_prefix"]),
                docs_dir=str(item["docs_dir"]).strip("/"),
                index_pages=bool(item.get("index_pages", True)),
            )
        except (KeyError, TypeError) as exc:
            raise SuiteError(
                f"{where}: library {name!r} needs repo, commit, url_prefix and docs_dir"
            ) from exc
    return libraries


def read_docs_search(path: Path) -> tuple[list[dict[str, Any]], dict[str, Library]]:
    """The entries of the docs-search dataset whose library is runnable here, in file order,
    and the libraries they name."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SuiteError(f"{path}: cannot read the docs-search set ({exc})") from exc
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise SuiteError(f"{path}: no 'entries' list")
    libraries = libraries_from(data, path)
    kept = []
    for entry in entries:
        fields = entry.get("vars", entry) if isinstance(entry, dict) else None
        if not isinstance(fields, dict) or not isinstance(fields.get("query"), str):
            raise SuiteError(f"{path}: an entry without vars.query: {entry!r}"[:300])
        if fields.get("library") in libraries:
            kept.append(fields)
    return kept, libraries


def docs_search_cases(
    entries: Sequence[Mapping[str, Any]],
    files_of: Callable[[CorpusSpec], frozenset[str]],
    libraries: Mapping[str, Library] = LIBRARIES,
    set_name: str = "docs-search",
) -> list[SuiteCase]:
    """Cases from docs-search entries; ``files_of(corpus)`` lists the corpus's files. The
    set's name says which corpus each question runs over (:data:`DOCS_SEARCH_CORPORA`)."""
    corpus_of = DOCS_SEARCH_CORPORA[set_name]
    cases = []
    counters: dict[str, int] = {}
    for fields in entries:
        library = libraries[fields["library"]]
        corpus = corpus_of(library)
        files = files_of(corpus)
        gains: dict[str, int] = {}
        for qrel in fields.get("qrels") or []:
            target = map_url(library, str(qrel["url"]), files)
            gains[target] = max(gains.get(target, 0), int(qrel.get("grade", 1)))
        counters[fields["library"]] = counters.get(fields["library"], 0) + 1
        cases.append(
            asking(
                fields["query"],
                set_name=set_name,
                case_id=f"{fields['library']}-{counters[fields['library']]:02d}",
                group=fields["library"],
                corpus=corpus,
                gains=gains,
                intent=str(fields.get("intent", "")),
            )
        )
    return cases


# --------------------------------------------------------------------------------- swebench

# The Python code and the documentation of the repository: Markdown and reStructuredText (most
# of these projects document themselves in Sphinx). Until round 7 of docs/journal/ranking.md the
# docs source kept to Markdown; .txt is materialised for the plain-text pages some projects keep.
SWEBENCH_SELECTION = Selection("py-docs", suffixes=(".py", ".rst", ".md", ".txt"))
SWEBENCH_SOURCES = (
    SourceSpec("code", "code", include=("*.py",)),
    SourceSpec("docs", "markdown", include=("*.md", "*.markdown", "*.mdx", "*.rst")),
)


def swebench_corpus(repo: str, commit: str) -> CorpusSpec:
    return CorpusSpec(repo, commit, SWEBENCH_SELECTION, SWEBENCH_SOURCES)


def read_swebench(path: Path) -> list[dict[str, Any]]:
    """The instances, one JSON object a line, checked for the fields the suite reads."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read the swebench set ({exc.strerror})") from exc
    rows = []
    for number, row in json_lines(lines, str(path)):
        missing = [
            k
            for k in ("instance_id", "repo", "base_commit", "problem_statement", "expected_spans")
            if k not in row
        ]
        if missing:
            raise SuiteError(f"{path}:{number}: missing {', '.join(missing)}")
        rows.append(row)
    return rows


def _span_table(row: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Definitions per file from expected_spans and every alternative fix (all acceptable)."""
    table: dict[str, set[str]] = {}
    groups = [row["expected_spans"]]
    groups += [alt.get("spans", {}) for alt in row.get("alternative_spans") or []]
    for group in groups:
        for file, spans in group.items():
            named = {s for s in spans if s not in NON_DEFINITION_SPANS}
            table.setdefault(file, set()).update(named)
    return {file: frozenset(spans) for file, spans in table.items()}


def swebench_cases(rows: Sequence[Mapping[str, Any]]) -> list[SuiteCase]:
    """One case per instance; file answers are the expected_spans' files."""
    cases = []
    for row in rows:
        cases.append(
            asking(
                row["problem_statement"],
                set_name="swebench",
                case_id=row["instance_id"],
                group=row["repo"],
                corpus=swebench_corpus(row["repo"], row["base_commit"]),
                gains=dict.fromkeys(row["expected_spans"], 1),
                spans=_span_table(row),
            )
        )
    return cases


def sample(cases: Sequence[SuiteCase], every: int | None, limit: int | None) -> list[SuiteCase]:
    """Every ``every``-th case (deterministic: the 1st, the (k+1)-th, ...), then the first
    ``limit`` of those."""
    chosen = list(cases)
    if every and every > 1:
        chosen = chosen[::every]
    if limit is not None:
        chosen = chosen[:limit]
    return chosen
