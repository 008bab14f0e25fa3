"""Reference pages named by a qualified name: the general one before its qualified twins.

API reference sites give one page per qualified name, and a function often has several:
``numpy.clip`` beside ``numpy.ma.clip``, ``numpy.argsort`` beside ``numpy.chararray.argsort``,
``pandas.DataFrame.fillna`` beside ``pandas.core.resample.Resampler.fillna``. The qualified
twin's page often reads more like a question (it says what it adds), yet a question that names
no qualifier asks for the general one. A documentation page whose file is named by a dotted
name weighs ``qualified_twin_factor`` when a candidate of the same search documents the same
last name of the same package under fewer parts, unless the query names one of the parts the
twin adds.
"""

from __future__ import annotations

import functools
import posixpath

from scriptorium.domain.model import Candidate, Corpus, Query
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import tokenize


@functools.lru_cache(maxsize=65_536)
def _dotted(path: str) -> tuple[str, ...] | None:
    """The parts of a page's file name when it is a dotted name of identifiers
    (``numpy.ma.clip``; not a version such as ``1.2.3``), casefolded."""
    stem = posixpath.splitext(posixpath.basename(path))[0].casefold()
    parts = tuple(stem.split("."))
    return parts if len(parts) >= 2 and all(part.isidentifier() for part in parts) else None


def qualified_twins(settings: RankingSettings, query: Query, candidates: list[Candidate]) -> None:
    """Weigh down each page whose dotted name has a shorter twin among the candidates."""
    factor = settings.qualified_twin_factor
    if factor == 1.0:
        return
    named: list[tuple[Candidate, tuple[str, ...]]] = []
    shortest: dict[tuple[str, str], tuple[str, ...]] = {}
    for cand in candidates:
        if cand.document.corpus is not Corpus.DOCS:
            continue
        parts = _dotted(cand.document.path)
        if parts is None:
            continue
        named.append((cand, parts))
        key = (parts[0], parts[-1])
        held = shortest.get(key)
        if held is None or len(parts) < len(held):
            shortest[key] = parts
    if len(named) < 2:
        return
    terms = frozenset(query.terms)
    options = settings.token_options()
    asked: dict[str, bool] = {}
    for cand, parts in named:
        general = shortest[(parts[0], parts[-1])]
        if len(parts) <= len(general):
            continue
        extra = [part for part in parts[1:-1] if part not in general]
        if any(_named(part, terms, options, asked) for part in extra):
            continue
        cand.adjust("qualified-twin", factor, ".".join(general) + " is the general page")


def _named(part: str, terms: frozenset[str], options: dict, asked: dict[str, bool]) -> bool:
    """Whether the query names a part of a qualified name (one of its tokens is a query term)."""
    if part not in asked:
        asked[part] = bool(terms.intersection(tokenize(part, **options)))
    return asked[part]
