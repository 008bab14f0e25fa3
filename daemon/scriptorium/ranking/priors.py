"""The priors stage's levers: one small function per factor, applied in the order of ``LEVERS``.

Each lever looks at one candidate and what the search decided once (:class:`SearchPriors`),
and multiplies the score by its factor through ``Candidate.adjust``, under the name explain
shows for it. A lever whose setting is 1.0 changes nothing. The order is part of the result:
the factors are multiplied one after the other, and floating-point products depend on it.
One lever may drop the candidate instead (the effective dates, for an ``as_of`` search): it
returns why, and the levers after it are not applied. ``Pipeline.priors`` runs the table,
calling only the levers whose switch says, once per search, that they can change a score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from scriptorium.domain.model import Candidate, Corpus, Query, RefKind
from scriptorium.ranking.bodies import cjk_head_of, deprecated_in, directive_in, matched_terms
from scriptorium.ranking.libraries import library_prior
from scriptorium.ranking.messages import quoted_messages
from scriptorium.ranking.paths import auxiliary_kind, translation_page
from scriptorium.ranking.places import placed_lines
from scriptorium.ranking.query_priors import QueryPriors
from scriptorium.ranking.signals import qualifies
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import query_terms, tokenize
from scriptorium.text.features import CJK


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class SearchPriors:
    """What one search's levers share: the query, the settings, the decisions made once for
    the query (``QueryPriors``, the surface's terms, the query's script, the date that counts)
    and the source classes asked so far (one question per source per search)."""

    query: Query
    settings: RankingSettings
    decided: QueryPriors
    source_class: Callable[[str], str]
    surface_terms: frozenset[str]
    query_cjk: bool
    now: datetime
    classes: dict[str, str]
    # Sources whose root is a translation's folder (``docs/ja/docs``): their pages' own paths
    # name no language.
    translations: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        query: Query,
        settings: RankingSettings,
        source_class: Callable[[str], str],
        translations: frozenset[str] = frozenset(),
    ) -> SearchPriors:
        return cls(
            query=query,
            settings=settings,
            decided=QueryPriors.of(query, settings),
            source_class=source_class,
            surface_terms=frozenset(query_terms(query.surface)) if query.surface else frozenset(),
            query_cjk=bool(CJK.search(query.text)),
            now=query.as_of or _now(),
            classes={},
            translations=translations,
        )


# A lever adjusts ``cand`` (or leaves it); it returns why the candidate is dropped, or None.
Lever = Callable[[Candidate, SearchPriors], str | None]


def pasted_text(cand: Candidate, search: SearchPriors) -> None:
    """A long pasted text (a traceback, a code excerpt) is about code: documentation weighs less."""
    factor = search.decided.pasted_docs
    if factor != 1.0 and cand.document.corpus is Corpus.DOCS:
        cand.adjust("pasted-text", factor, "a long pasted query is about code")


def question(cand: Candidate, search: SearchPriors) -> None:
    """A plain question, or one about using the names it gives, asks for an explanation:
    code weighs less."""
    factor = search.decided.question_code
    if factor != 1.0 and cand.document.corpus is Corpus.CODE:
        cand.adjust("question", factor, search.decided.question_why)


def translation(cand: Candidate, search: SearchPriors) -> None:
    """A translated page (under a language's folder, or of a source whose root is one) weighs
    less for an English query."""
    factor = search.decided.translation
    if (
        factor != 1.0
        and cand.document.corpus is Corpus.DOCS
        and translation_page(cand.source, cand.document.path, search.translations)
    ):
        cand.translated = True
        cand.adjust("translation", factor, "a translation; the query is English")


def page_boost(cand: Candidate, search: SearchPriors) -> None:
    """A page's own ``search.boost`` (front matter); one that is not a positive number drops
    the page to zero."""
    boost = cand.document.meta.boost
    if search.settings.page_boost and boost != 1.0:
        boost = boost if math.isfinite(boost) and boost > 0 else 0.0
        cand.adjust("page-boost", boost, "front matter search.boost")


def source_class(cand: Candidate, search: SearchPriors) -> None:
    """The weight of the candidate's class: the page's own, else its source's."""
    cls = cand.document.meta.source_class
    if not cls:
        cls = search.classes.get(cand.source)
        if cls is None:
            cls = search.classes[cand.source] = search.source_class(cand.source)
    weight = search.settings.class_weights.get(cls, 1.0)
    if weight != 1.0:
        cand.adjust("source-class", weight, cls)


def library(cand: Candidate, search: SearchPriors) -> None:
    """A dependency's file the query does not name weighs less (ranking/libraries.py)."""
    library_prior(search.settings, search.query, cand)


def renders_from_code(cand: Candidate, search: SearchPriors) -> None:
    """A documentation block that renders its text from code (an API reference directive)."""
    factor = search.settings.directive_factor
    if factor != 1.0 and cand.block.kind is RefKind.DOC and directive_in(cand):
        cand.adjust("renders-from-code", factor, "API reference directive")


def auxiliary(cand: Candidate, search: SearchPriors) -> None:
    """Tests, examples, tooling and legacy paths weigh less unless the query asks for them.

    A class given to the page (front matter, the source's ``class_rules``) is the source's
    own word on it and stands instead of the path's.
    """
    kind, factor = _auxiliary_weight(cand, search)
    if factor != 1.0:
        cand.adjust("auxiliary", factor, kind)


def _auxiliary_weight(cand: Candidate, search: SearchPriors) -> tuple[str, float]:
    """The auxiliary kind of the candidate's path and the factor :func:`auxiliary` gives it
    (1.0: none, or the query asks for that kind)."""
    decided = search.decided
    if decided.auxiliary == 1.0 or cand.document.meta.source_class:
        return "", 1.0
    settings, document = search.settings, cand.document
    kind = auxiliary_kind(
        document.path, settings.auxiliary_tooling, document.corpus is Corpus.DOCS, decided.pages
    )
    if not kind or kind in decided.asked:
        return kind, 1.0
    if kind == "integrations" and _names_its_tool(document.path, search.query):
        return kind, 1.0
    return kind, settings.legacy_factor if kind == "legacy" else decided.auxiliary


def deprecated(cand: Candidate, search: SearchPriors) -> None:
    """Code defining a name marked deprecated where it is declared weighs less, unless the
    query asks for legacy code or names the definition (a user naming ``parse_obj`` asks for
    it). Legacy folders weigh less already (:func:`auxiliary`)."""
    factor = search.decided.deprecated
    if factor == 1.0 or cand.document.corpus is not Corpus.CODE or not deprecated_in(cand):
        return
    symbol = cand.block.symbol
    if symbol and symbol.casefold() in search.decided.named:
        return
    if _auxiliary_weight(cand, search)[1] != 1.0:
        return  # a legacy folder's (or a test's) code weighs less once, not twice
    cand.adjust("deprecated", factor, "marked deprecated where it is defined")


def _names_its_tool(path: str, query: Query) -> bool:
    """Whether the query names the tool an integration page is named after (``mypy`` for
    ``integrations/mypy.md``, "code" for ``visual_studio_code.md``)."""
    stem = path.rpartition("/")[2].rpartition(".")[0]
    return not set(query.terms).isdisjoint(tokenize(stem, stem=True))


def named_file(cand: Candidate, search: SearchPriors) -> None:
    """A file the query names weighs more, and the one it names last more again."""
    query, settings = search.query, search.settings
    if query.files and (cand.source, cand.document.path) in query.files:
        cand.adjust("named-file", settings.named_file_factor, "the query names this file")
        if (cand.source, cand.document.path) == query.last_file:
            cand.adjust("last-named-file", settings.last_file_factor, "named last")


def definition(cand: Candidate, search: SearchPriors) -> None:
    """A block defining a name the query names weighs more (with its own factor when the
    query qualifies the name, as in ``Class.method``), unless the question gives other terms
    and the block holds none of them (``QueryPriors.task``): "useInfiniteQuery load more
    button" asks for the guide that builds one, not for the hook's definition."""
    named = search.decided.named
    symbol = cand.block.symbol
    if not (named and symbol and symbol.casefold() in named):
        return
    settings = search.settings
    task = search.decided.task
    if task and not matched_terms(cand, task, settings.token_key()):
        return  # the question asks for a task the name takes part in, not for the name
    qualified = settings.qualified_definition_factor
    if qualified != 1.0 and qualifies(cand.block, named):
        cand.adjust("definition", qualified, "defines a name the query qualifies")
    else:
        cand.adjust("definition", settings.definition_factor, "defines a queried name")


def language(cand: Candidate, search: SearchPriors) -> None:
    """A block written in another script than the query's (CJK or not) weighs less."""
    factor = search.settings.language_prior
    if factor != 1.0:
        block_cjk = bool(CJK.search(cand.block.title) or cjk_head_of(cand))
        if block_cjk != search.query_cjk:
            cand.adjust("language", factor, "script differs from the query")


def surface(cand: Candidate, search: SearchPriors) -> None:
    """The request's ``surface`` is a soft topical boost, never a filter."""
    factor = search.settings.surface_boost
    if search.surface_terms and factor != 1.0:
        topical = set(tokenize(" ".join((cand.document.path, *cand.block.section_path))))
        if search.surface_terms & topical:
            cand.adjust("surface", factor, "on-topic for the surface")


def effective_dates(cand: Candidate, search: SearchPriors) -> str | None:
    """A page outside its effective dates: dropped for an ``as_of`` search (this returns why),
    weighed down for any other."""
    meta = cand.document.meta
    effective_from, effective_to, now = meta.effective_from, meta.effective_to, search.now
    not_yet = effective_from is not None and effective_from > now
    expired = effective_to is not None and effective_to <= now
    if search.query.as_of is not None and (not_yet or expired):
        return "not yet effective at as_of" if not_yet else "no longer effective at as_of"
    if expired or not_yet:
        cand.adjust("expired" if expired else "not-yet-effective", search.settings.expired_factor)
    return None


def superseded(cand: Candidate, search: SearchPriors) -> None:
    """A page another one supersedes weighs less."""
    by = cand.document.meta.superseded_by
    if by:
        cand.adjust("superseded", search.settings.superseded_factor, by)


def message(cand: Candidate, search: SearchPriors) -> None:
    """A block whose text holds an error message the query quotes raises or explains it."""
    if cand.message:
        cand.adjust("message", search.settings.message_factor, "holds a message the query quotes")


def place(cand: Candidate, search: SearchPriors) -> None:
    """A block holding a line the query names (a traceback's frame) is what it points at."""
    if cand.place:
        cand.adjust("place", search.settings.place_factor, "holds a line the query names")


# A switch says, once per search, whether its lever can change any candidate's score; the
# levers switched off are not called (each still checks its own setting when called alone).
Switch = Callable[[SearchPriors], bool]


def _always(_search: SearchPriors) -> bool:
    return True


def _foreign_libraries(query: Query) -> bool:
    """Whether the search reaches libraries' files without asking for one of them."""
    return bool(query.library_sources) and not query.library


# In the order applied, each with its switch.
TABLE: tuple[tuple[Lever, Switch], ...] = (
    (pasted_text, lambda s: s.decided.pasted_docs != 1.0),
    (question, lambda s: s.decided.question_code != 1.0),
    (translation, lambda s: s.decided.translation != 1.0),
    (page_boost, lambda s: s.settings.page_boost),
    (source_class, _always),
    (library, lambda s: s.settings.library_factor != 1.0 and _foreign_libraries(s.query)),
    (renders_from_code, lambda s: s.settings.directive_factor != 1.0),
    (auxiliary, lambda s: s.decided.auxiliary != 1.0),
    (deprecated, lambda s: s.decided.deprecated != 1.0),
    (named_file, lambda s: bool(s.query.files)),
    (definition, lambda s: bool(s.decided.named)),
    (message, lambda s: s.settings.message_factor != 1.0 and bool(quoted_messages(s.query.text))),
    (place, lambda s: s.settings.place_factor != 1.0 and bool(placed_lines(s.query.text))),
    (language, lambda s: s.settings.language_prior != 1.0),
    (surface, lambda s: bool(s.surface_terms) and s.settings.surface_boost != 1.0),
    (effective_dates, _always),
    (superseded, _always),
)
LEVERS: tuple[Lever, ...] = tuple(lever for lever, _ in TABLE)


def switched_on(search: SearchPriors) -> tuple[Lever, ...]:
    """The levers that can change a score in this search, in the table's order."""
    return tuple(lever for lever, on in TABLE if on(search))
