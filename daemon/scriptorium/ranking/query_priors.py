"""What a query decides about the priors, once per search, before any candidate is weighed.

The priors stage (``Pipeline.priors``) applies factors candidate by candidate; which of them
apply at all is the query's to say: whether it is a pasted text, a plain question, English,
which auxiliary kinds and hidden folders it asks for, which definitions it names. Each
decision is here, next to the setting that switches it off, so the stage itself is only the
loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from scriptorium.domain.model import Query
from scriptorium.ranking.questions import (
    foreign_question,
    plain_question,
    task_terms,
    usage_question,
)
from scriptorium.ranking.signals import asked_folders, asked_kinds, asked_text, query_names
from scriptorium.settings.ranking import RankingSettings

EXAMPLES = frozenset({"examples"})
# The kind a query names to ask for legacy and deprecated code ("v1", "deprecated", "old").
LEGACY = "legacy"


@dataclass(frozen=True, slots=True)
class QueryPriors:
    """The factors a query's candidates take by corpus and path (1.0: the prior is off for
    this query), and the kinds and names it asks for."""

    auxiliary: float
    asked: frozenset[str]
    translation: float
    question_code: float
    question_why: str
    pasted_docs: float
    named: frozenset[str]
    # The documentation page kinds the auxiliary prior tells (``RankingSettings.page_kinds``).
    pages: frozenset[str]
    # A question's terms besides the identifiers it names (``questions.task_terms``): a block
    # defining a named name that holds none of them does not weigh more.
    task: frozenset[str] = frozenset()
    # The factor of a definition marked deprecated (1.0: the query asks for legacy code, is a
    # pasted text, or the prior is off).
    deprecated: float = 1.0

    @classmethod
    def of(cls, query: Query, settings: RankingSettings) -> QueryPriors:
        text = query.text
        auxiliary = settings.auxiliary_factor
        asked: frozenset[str] = frozenset()
        if auxiliary != 1.0:
            asks = asked_text(text, settings)
            asked = asked_kinds(asks) | asked_folders(asks)
        if query.mode != "default":
            # A ranking mode is the caller's word on what it wants: "implementation" (and
            # GuideImplementation's samples) asks for handlers and wiring, as examples show.
            asked |= EXAMPLES
        pasted = settings.is_pasted(text)
        # A question asks for the API to use; a pasted text (an issue, a traceback) is about
        # the code that ran, deprecated or not.
        deprecated = 1.0 if pasted else settings.deprecated_factor
        if deprecated != 1.0:
            legacy = asked if auxiliary != 1.0 else asked_kinds(asked_text(text, settings))
            if LEGACY in legacy:
                deprecated = 1.0
        # A query beyond ASCII, or in another language's words, may want the translation.
        english = text.isascii() and not foreign_question(text)
        question_code, question_why = 1.0, ""
        # A ranking mode is the caller's word on what it wants ("implementation": the code).
        # A name spelled as words is looked up as the name would be.
        if query.mode == "default" and not pasted and not query.spelled_names:
            if plain_question(text, acronyms_prose=settings.question_acronyms_prose):
                question_code = settings.question_code_factor
                question_why = "a question naming no identifier"
            elif usage_question(text):
                question_code = settings.usage_question_code_factor
                question_why = "a question about using the names it gives"
        named: frozenset[str] = frozenset()
        if settings.definition_factor != 1.0:
            named = (
                query_names(
                    text,
                    identifiers_only=settings.definition_identifiers(text),
                    identifiers_first=settings.identifier_terms_first and pasted,
                    limit=settings.max_query_terms,
                )
                | query.spelled_names
            )
        return cls(
            auxiliary=auxiliary,
            asked=asked,
            translation=settings.translation_factor if english else 1.0,
            question_code=question_code,
            question_why=question_why,
            pasted_docs=settings.long_query_docs_factor if pasted else 1.0,
            named=named,
            pages=settings.page_kinds() if auxiliary != 1.0 else frozenset(),
            task=task_terms(query, settings) if named and not pasted else frozenset(),
            deprecated=deprecated,
        )
