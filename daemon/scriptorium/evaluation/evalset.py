"""The evaluation set: one JSON case per line, parsed strictly so a typo fails loudly.

A case either searches (``query`` + ``acceptable``) or fetches a location directly
(``fetch_location`` + ``expect_fetch``), or both. Unknown keys are rejected: a misspelt
``sections`` would otherwise silently turn a section-level case into a page-level one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scriptorium.evaluation.scoring import FETCH_OUTCOMES

KINDS = ("docs", "code")
LANGS = ("en", "ja", "zh")
KNOWN_KEYS = frozenset(
    {
        "id",
        "query",
        "acceptable",
        "sections",
        "kinds",
        "mode",
        "surface",
        "expected_preview_terms",
        "lang",
        "tag",
        "fetch_location",
        "expect_fetch",
        "note",
        "expect_abstain",
        "related",
    }
)


class EvalSetError(ValueError):
    """The evaluation set file is malformed; the message names the line and the problem."""


@dataclass(frozen=True, slots=True)
class Case:
    """One evaluation case."""

    id: str
    tags: tuple[str, ...]
    lang: str = "en"
    query: str | None = None
    acceptable: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    mode: str = ""
    surface: str = ""
    expected_preview_terms: tuple[str, ...] = ()
    fetch_location: str | None = None
    expect_fetch: str | None = None
    note: str = ""
    # A question the corpus cannot answer: the search should abstain (scored separately).
    expect_abstain: bool = False
    # A related case: ExpandRelated from this location (a doc section or a definition), scored
    # against ``acceptable`` as a search is.
    related: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def tag(self) -> str | list[str]:
        """The tag as written: a single string, or a list when the case has several."""
        return self.tags[0] if len(self.tags) == 1 else list(self.tags)


def _strings(value: Any, name: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise EvalSetError(f"{where}: {name!r} must be a list of non-empty strings")
    return tuple(value)


def _string(value: Any, name: str, where: str) -> str:
    if not isinstance(value, str):
        raise EvalSetError(f"{where}: {name!r} must be a string")
    return value


def parse_case(obj: Any, where: str = "case") -> Case:
    """Validate one decoded JSON object and turn it into a ``Case``."""
    if not isinstance(obj, dict):
        raise EvalSetError(f"{where}: a case must be a JSON object")
    unknown = sorted(set(obj) - KNOWN_KEYS)
    if unknown:
        raise EvalSetError(f"{where}: unknown keys {unknown}")
    case_id = obj.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise EvalSetError(f"{where}: 'id' is required and must be a non-empty string")
    where = f"{where} ({case_id})"

    tag = obj.get("tag")
    if isinstance(tag, str) and tag.strip():
        tags: tuple[str, ...] = (tag,)
    elif isinstance(tag, list) and tag:
        tags = _strings(tag, "tag", where)
    else:
        raise EvalSetError(f"{where}: 'tag' is required (a string or a list of strings)")

    lang = obj.get("lang", "en")
    if lang not in LANGS:
        raise EvalSetError(f"{where}: 'lang' must be one of {LANGS}")

    query = obj.get("query")
    if query is not None and (not isinstance(query, str) or not query.strip()):
        raise EvalSetError(f"{where}: 'query' must be a non-empty string")
    fetch_location = obj.get("fetch_location")
    if fetch_location is not None and (
        not isinstance(fetch_location, str) or not fetch_location.strip()
    ):
        raise EvalSetError(f"{where}: 'fetch_location' must be a non-empty string")
    related = obj.get("related")
    if related is not None and (not isinstance(related, str) or not related.strip()):
        raise EvalSetError(f"{where}: 'related' must be a non-empty location")
    if query is None and fetch_location is None and related is None:
        raise EvalSetError(
            f"{where}: a case needs a 'query', a 'fetch_location' or a 'related' location"
        )

    if "acceptable" not in obj:
        raise EvalSetError(f"{where}: 'acceptable' is required (it may be [] for fetch-only cases)")
    acceptable = () if obj["acceptable"] == [] else _strings(obj["acceptable"], "acceptable", where)
    expect_abstain = obj.get("expect_abstain", False)
    if not isinstance(expect_abstain, bool):
        raise EvalSetError(f"{where}: 'expect_abstain' must be true or false")
    if expect_abstain and (query is None or acceptable):
        raise EvalSetError(f"{where}: an abstention case has a query and no acceptable locations")
    if query is not None and not acceptable and not expect_abstain:
        raise EvalSetError(f"{where}: a search case needs at least one acceptable location")
    if related is not None and not acceptable:
        raise EvalSetError(f"{where}: a related case needs at least one acceptable location")

    expect_fetch = obj.get("expect_fetch")
    if fetch_location is not None:
        if expect_fetch not in FETCH_OUTCOMES:
            raise EvalSetError(f"{where}: 'expect_fetch' must be one of {FETCH_OUTCOMES}")
    elif expect_fetch is not None:
        raise EvalSetError(f"{where}: 'expect_fetch' needs a 'fetch_location'")

    sections = _strings(obj["sections"], "sections", where) if "sections" in obj else ()
    if any("#" not in s for s in sections):
        raise EvalSetError(f"{where}: every section location needs a #fragment")
    kinds = _strings(obj["kinds"], "kinds", where) if "kinds" in obj else ()
    if any(k not in KINDS for k in kinds):
        raise EvalSetError(f"{where}: 'kinds' entries must be among {KINDS}")
    terms = (
        _strings(obj["expected_preview_terms"], "expected_preview_terms", where)
        if "expected_preview_terms" in obj
        else ()
    )
    return Case(
        id=case_id,
        tags=tags,
        lang=lang,
        query=query,
        acceptable=acceptable,
        sections=sections,
        kinds=kinds,
        mode=_string(obj.get("mode", ""), "mode", where),
        surface=_string(obj.get("surface", ""), "surface", where),
        expected_preview_terms=terms,
        fetch_location=fetch_location,
        expect_fetch=expect_fetch,
        note=_string(obj.get("note", ""), "note", where),
        expect_abstain=expect_abstain,
        related=related,
        raw=dict(obj),
    )


def parse_lines(lines: Iterable[str], source: str = "<set>") -> list[Case]:
    """Parse JSONL text: blank lines and ``//`` comment lines are skipped; ids must be unique."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        where = f"{source}:{number}"
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EvalSetError(f"{where}: not valid JSON ({exc.msg})") from exc
        case = parse_case(obj, where)
        if case.id in seen:
            raise EvalSetError(f"{where}: duplicate id {case.id!r} (first on line {seen[case.id]})")
        seen[case.id] = number
        cases.append(case)
    if not cases:
        raise EvalSetError(f"{source}: the evaluation set is empty")
    return cases


def load_eval_set(path: str | Path) -> list[Case]:
    """Read and validate an evaluation set file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalSetError(f"{path}: cannot read the evaluation set ({exc.strerror})") from exc
    return parse_lines(text.splitlines(), str(path))


def file_digest(path: str | Path) -> str:
    """sha256 of the set file, so two runs can tell whether they measured the same cases."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
