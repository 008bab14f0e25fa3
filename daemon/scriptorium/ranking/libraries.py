"""The library prior: an installed dependency's result yields to the project's own unless the
query names that library (``httpx``, or the package it is imported as, ``yaml`` for PyYAML)
or the search is limited to it."""

from __future__ import annotations

from scriptorium.domain.libraries import inside_library, split_library_label
from scriptorium.domain.model import Candidate, Query
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import tokenize


def library_prior(settings: RankingSettings, query: Query, cand: Candidate) -> None:
    """Weigh ``cand`` by ``library_factor`` when it comes from a library the query does not
    name (nothing for the project's own sources, or a search limited to a library)."""
    factor = settings.library_factor
    if factor == 1.0 or query.library or cand.source not in query.library_sources:
        return
    path = cand.document.path
    found = split_library_label(path)
    if found is None:
        return
    said = set(tokenize(query.text))
    package = inside_library(path).split("/", 1)[0].removesuffix(".py")
    for name in (found[0].rsplit("/", 1)[-1], package):
        words = tokenize(name)
        if words and said.issuperset(words):
            return
    cand.adjust("library", factor, f"{found[0]}, a dependency the query does not name")
