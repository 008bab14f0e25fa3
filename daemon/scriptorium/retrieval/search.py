"""Search: understand the request, then ask the provider chain (the local sources included).

The chain holds every provider, the locally indexed sources as one of them; a search that
cannot retrieve anything (no text, no terms and no listing to ask for) is answered here.
"""

from __future__ import annotations

from scriptorium import telemetry
from scriptorium.cancel import hold
from scriptorium.domain.model import Corpus, Query
from scriptorium.domain.outcomes import InvalidArgument, SearchOutcome, SearchParams
from scriptorium.index.schema import doc_term
from scriptorium.limits import (
    MAX_QUERY_CHARS,
    SEARCHED_QUERY_CHARS,
    SNIPPET_DEFAULT,
    SNIPPET_MAX,
    TOP_K_DEFAULT,
    TOP_K_MAX,
)
from scriptorium.plugins import PluginError, Registry
from scriptorium.ranking.signals import last_named, weighted_terms
from scriptorium.retrieval.answer import Answerer, new_outcome
from scriptorium.retrieval.local import LocalCandidates
from scriptorium.retrieval.providers import ProviderChain
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.catalog import SourceCatalog
from scriptorium.sources.libraries import LibrarySource
from scriptorium.sources.remote import is_listing
from scriptorium.text import clip_at_whitespace, without_html_comments
from scriptorium.text.quoting import some_of


class SearchService:
    """Turns a search request into ranked, budgeted, explained hits."""

    def __init__(
        self,
        catalog: SourceCatalog,
        registry: Registry,
        ranking: RankingSettings,
        chain: ProviderChain,
        local: LocalCandidates,
        answers: Answerer,
    ) -> None:
        self.catalog = catalog
        self.registry = registry
        self.ranking = ranking
        self.chain = chain
        self.local = local
        self.answers = answers

    @telemetry.understanding
    def make_query(self, params: SearchParams) -> Query:
        received = params.query or ""
        if len(received) > MAX_QUERY_CHARS:
            raise InvalidArgument(
                f"query is {len(received)} characters; at most {MAX_QUERY_CHARS} are accepted"
                f" (of a long query, the first {SEARCHED_QUERY_CHARS} are searched)"
            )
        visible = without_html_comments(received) if self.ranking.drop_html_comments else received
        text = clip_at_whitespace(visible, SEARCHED_QUERY_CHARS)
        if not text.isprintable():
            text = "".join(ch if ch.isprintable() or ch.isspace() else " " for ch in text)
        mode_name = params.mode or "default"
        try:
            self.registry.mode(mode_name)
        except PluginError as exc:
            raise InvalidArgument(str(exc)) from None
        unknown = [s for s in params.sources if not self.catalog.knows(s)]
        if unknown:
            known = ", ".join(sorted(self.catalog.names()))
            raise InvalidArgument(f"unknown source(s) {some_of(unknown)}; known sources: {known}")
        sources, library, library_documents = self._library(params)
        if params.token_budget < 0:
            raise InvalidArgument("token_budget must not be negative")
        top_k = TOP_K_DEFAULT if params.top_k <= 0 else min(params.top_k, TOP_K_MAX)
        snippet = (
            SNIPPET_DEFAULT if params.snippet_lines <= 0 else min(params.snippet_lines, SNIPPET_MAX)
        )
        corpora = frozenset(params.kinds) or frozenset({Corpus.DOCS, Corpus.CODE})
        terms, weights = weighted_terms(text, self.ranking)
        files = self.local.named_files(text)
        return Query(
            spelled_names=self.local.spelled_names(text),
            phrase_names=self.local.phrase_names(text, terms, corpora),
            text=text,
            terms=terms,
            weights=weights,
            files=files,
            last_file=last_named(text, files) if self.ranking.last_file_factor != 1.0 else None,
            top_k=top_k,
            snippet_lines=snippet,
            corpora=corpora,
            mode=mode_name,
            sources=sources,
            library=library,
            library_documents=library_documents,
            library_sources=frozenset(
                s.name for s in self.catalog.local if isinstance(s, LibrarySource)
            ),
            surface=params.surface or "",
            as_of=params.as_of,
            token_budget=params.token_budget,
            explain=params.explain,
            received_chars=len(received),
            hidden_chars=len(received) - len(visible),
        )

    def _library(self, params: SearchParams) -> tuple[frozenset[str], str, frozenset[str]]:
        """The sources, the library and its documents' terms a ``library`` restricts to.

        Without one, the sources as asked. With one, only the library sources among them that
        hold it; a library none holds is refused, naming the known ones.
        """
        asked = frozenset(params.sources)
        library = (params.library or "").strip()
        if not library:
            return asked, "", frozenset()
        holders = [
            s
            for s in self.catalog.local
            if isinstance(s, LibrarySource) and (not asked or s.name in asked)
        ]
        terms = frozenset(
            doc_term(s.name, path) for s in holders for path in s.library_paths(library)
        )
        if not terms:
            known = sorted({n for s in holders for n in s.library_names()})
            listed = some_of(known) if known else "none (no dependencies source is configured)"
            raise InvalidArgument(
                f"unknown library {some_of([library])}; known libraries: {listed}"
            )
        return frozenset(s.name for s in holders), library, terms

    def query_from(
        self, text: str, *, top_k: int = 10, mode: str = "", sources=(), kinds=()
    ) -> Query:
        """A query for composed calls (a topic, a related search), validated like a search."""
        return self.make_query(
            SearchParams(
                query=text, top_k=top_k, mode=mode, sources=tuple(sources), kinds=tuple(kinds)
            )
        )

    def check_mode_and_sources(self, mode: str, sources: tuple[str, ...]) -> None:
        """Refuse an unknown mode or source before a composed call starts."""
        self.make_query(SearchParams(query="", mode=mode, sources=tuple(sources)))

    @telemetry.traced_search
    async def search(self, params: SearchParams) -> SearchOutcome:
        await hold("rpc.search")
        query = self.make_query(params)
        unanswerable = self._unanswerable(query, listing=self.chain.can_list)
        if unanswerable is not None:
            return with_query_extent(unanswerable, query)
        await self.local.prepare(query)
        return with_query_extent(await self.chain.search(query), query)

    def search_local(self, query: Query) -> SearchOutcome:
        """Search the locally indexed sources only (for composed calls; synchronous)."""
        unanswerable = self._unanswerable(query, listing=False)
        if unanswerable is not None:
            return with_query_extent(unanswerable, query)
        return with_query_extent(self.answers.answer(query, self.local.batch(query)), query)

    @staticmethod
    def _unanswerable(query: Query, *, listing: bool) -> SearchOutcome | None:
        """The outcome of a query nothing could be retrieved for; None for any other.

        No text: an empty outcome. No terms: abstained, unless it asks for a listing and some
        provider can list (the local index cannot).
        """
        if not query.text.strip():
            return new_outcome(query)
        if not query.terms and not (listing and is_listing(query)):
            outcome = new_outcome(query)
            outcome.abstained, outcome.abstain_reason = True, "no_candidates"
            return outcome
        return None


def with_query_extent(outcome: SearchOutcome, query: Query) -> SearchOutcome:
    """Say how much of the caller's text was searched (all of it, or its start)."""
    outcome.query_truncated = query.truncated
    outcome.query_chars_used = len(query.text)
    return outcome
