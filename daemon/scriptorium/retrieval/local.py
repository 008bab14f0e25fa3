"""The locally indexed sources' side of a search: candidates from the served generation.

Docs and code each get their own lexical pool (a prose question over a code-heavy tree still
finds its page; an identifier its definition), and, once vectors exist, each corpus's nearest
blocks by meaning, every candidate then scored both ways (``semantic/retriever.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptorium import telemetry
from scriptorium.domain.model import Corpus, Query
from scriptorium.index.schema import BODY, HEADING, SYMBOL, doc_term
from scriptorium.index.searcher import LexicalHit, lexical_search, scores_within
from scriptorium.index.served import ServedIndex
from scriptorium.ranking.pipeline import Pipeline, held_back
from scriptorium.ranking.questions import phrase_name_forms, spelled_name_forms
from scriptorium.ranking.signals import named_files, query_names
from scriptorium.retrieval.pointed import Pointed
from scriptorium.retrieval.variants import mark_variants
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.remote import SearchBatch

if TYPE_CHECKING:
    from scriptorium.index.catalog import Snapshot
    from scriptorium.semantic.retriever import SemanticCandidates


class LocalCandidates:
    """Candidates for a query from the served generation (what the local provider offers)."""

    def __init__(
        self,
        indexer: ServedIndex,
        ranking: RankingSettings,
        pipeline: Pipeline,
        semantic: SemanticCandidates | None = None,
    ) -> None:
        self.indexer = indexer
        self.ranking = ranking
        self.pipeline = pipeline
        self.semantic = semantic

    async def prepare(self, query: Query) -> None:
        """Make the query's vector, when a search will read one it does not remember, in a
        thread of the encoder's: encoding a pasted text takes tens of milliseconds, which the
        event loop would otherwise spend away from every other call and health check."""
        semantic = self.semantic
        if semantic is None:
            return
        text = semantic.vector_text(query)
        if text is not None and not semantic.remembers(text):
            await semantic.encode_aside(text)

    def batch(self, query: Query) -> SearchBatch:
        """The local provider's candidates (no listing: ``*`` has no terms)."""
        if not query.terms:
            return SearchBatch()
        hits = retrieve(self, query, self.ranking.candidate_limit(query.top_k))
        most = self.ranking.question_blocks_per_document
        capped: list[LexicalHit] = []
        if most > 0 and not self.ranking.is_pasted(query.text):
            hits, capped = at_most_per_document(hits, most)
        batch = SearchBatch(self.pipeline.candidates(query, hits))
        if self.ranking.hold_back_variants:
            mark_variants(
                batch.candidates,
                self.indexer.snapshot,
                code=self.ranking.hold_back_code_variants,
            )
        if capped and query.explain:
            why = f"more than {most} blocks of one document in a question's pool"
            batch.held_back = held_back(self.pipeline.candidates(query, capped), why)
        return batch

    def hits(self, query: Query) -> list[LexicalHit]:
        """The lexical pools, then (once vectors exist) the nearest blocks, scores mixed."""
        hits = self.lexical_hits(query)
        if self.semantic is not None:  # None when it is off; mix waits for the vectors
            sources = frozenset(query.sources)

            library = query.library_documents

            def allowed(hit: LexicalHit) -> bool:
                if library and doc_term(hit.doc.source, hit.doc.path) not in library:
                    return False
                return not sources or hit.doc.source in sources

            # A question's few words are evidence wherever they match; a pasted text's hundreds
            # match most blocks a little, and its cosine weighs most.
            ranking = self.ranking
            words_too = ranking.semantic_added_bm25 and not ranking.is_pasted(query.text)
            scored = self._scored if words_too else None
            hits = self.semantic.mix(self.indexer.snapshot, query, hits, allowed, scored)
        return hits

    def _scored(self, query: Query, added: list[LexicalHit]) -> None:
        """Give the documentation blocks only the meaning found their BM25 for ``query``, as
        their pool scores them (the path's boost depends on the corpora a pool searches).

        Code blocks keep 0: a code file holds hundreds of blocks (a sympy module), and
        scoring the files' blocks took a ninth of a question's search over sympy, where on
        the suite's code sets the words' score of an added code block changed no result.
        """
        docs = [hit for hit in added if hit.doc.corpus is Corpus.DOCS]
        if not docs:
            return
        corpora = self._pool_corpora(query, Corpus.DOCS)
        terms, weights = self._pool_terms(query, corpora)
        scores = scores_within(
            self.indexer.snapshot,
            terms,
            self.ranking.weights,
            sorted({doc_term(h.doc.source, h.doc.path) for h in docs}),
            corpora=corpora,
            term_weights=weights,
        )
        for hit in docs:
            hit.score = scores.get(hit.bid, 0.0)

    def named_files(self, text: str) -> frozenset[tuple[str, str]]:
        """The served files ``text`` names by path or module name (when that lever is on)."""
        if self.ranking.named_file_factor == 1.0:
            return frozenset()
        return named_files(
            text, self.indexer.snapshot.files_ending, modules=self.ranking.named_modules
        )

    def spelled_names(self, text: str) -> frozenset[str]:
        """The definitions' names ``text`` spells as separate words (``spelled_name_forms``)
        that the served index defines (when that lever is on)."""
        if not self.ranking.spelled_names:
            return frozenset()
        forms = spelled_name_forms(text)
        if not forms:
            return frozenset()
        searcher = self.indexer.snapshot.searcher
        return frozenset(form for form in forms if searcher.doc_freq(SYMBOL, form))

    def phrase_names(
        self, text: str, terms: tuple[str, ...], corpora: frozenset[Corpus]
    ) -> tuple[str, ...]:
        """The identifiers two adjacent words of a pasted ``text``'s prose spell
        (``phrase_name_forms``) that the served index holds and ``terms`` lacks, for the
        documentation's pool (when that lever is on and a search of ``corpora`` has one).

        Only that pool: an issue text's English compounds ("default value") name a code
        base's identifiers as often as it means them, and the code pool drifted towards them.
        """
        ranking = self.ranking
        docs_alone = Corpus.DOCS in corpora and (len(corpora) == 1 or ranking.pools_apart(corpora))
        if not ranking.phrase_names or not docs_alone or not ranking.is_pasted(text):
            return ()
        forms = phrase_name_forms(text, ranking.token_key())
        searcher = self.indexer.snapshot.searcher
        have = set(terms)
        return tuple(
            form
            for form in forms
            if form not in have
            and (searcher.doc_freq(BODY, form) or searcher.doc_freq(HEADING, form))
        )

    def lexical_hits(self, query: Query) -> list[LexicalHit]:
        """BM25 candidates: one pool per corpus searched (or one for both when
        ``per_corpus_candidates`` is off)."""
        if not self.ranking.pools_apart(query.corpora):
            hits = self._lexical(query, self._pool_corpora(query, None))
        else:
            hits = []
            for corpus in Corpus:
                hits += self._lexical(query, self._pool_corpora(query, corpus))
        pointed = Pointed(self.indexer.snapshot, self.ranking, query, hits, self._pool_corpora)
        pointed.places()
        pointed.messages()
        return pointed.scored()

    def _pool_corpora(self, query: Query, corpus: Corpus | None) -> list[str]:
        """The corpora the lexical pool holding ``corpus`` searches (empty: both in one):
        ``corpus`` alone when the pools are apart; else the query's one corpus, or both."""
        if corpus is not None and self.ranking.pools_apart(query.corpora):
            return [str(corpus)]
        return [str(c) for c in query.corpora] if len(query.corpora) < 2 else []

    def _pool_terms(
        self, query: Query, corpora: list[str]
    ) -> tuple[tuple[str, ...], tuple[float, ...]]:
        """The terms and weights a pool over ``corpora`` searches: the query's, and for the
        documentation's own pool the identifiers its words spell (``phrase_names``)."""
        terms, weights = query.terms, query.weights
        if query.phrase_names and corpora == [str(Corpus.DOCS)]:
            if weights:
                weights += (1.0,) * len(query.phrase_names)
            terms += query.phrase_names
        return terms, weights

    def _lexical(self, query: Query, corpora: list[str]) -> list[LexicalHit]:
        """One lexical pool (``corpora`` empty: both corpora in one)."""
        snapshot = self.indexer.snapshot
        ranking = self.ranking
        named = sorted(query.files) if ranking.named_file_factor > 1.0 else []
        terms, weights = self._pool_terms(query, corpora)
        return lexical_search(
            snapshot,
            terms,
            ranking.weights,
            ranking.candidate_limit(query.top_k),
            corpora=corpora,
            sources=sorted(query.sources),
            # Without a prior above 1 nothing could lift a left-out definition into the window.
            symbols=query_names(
                query.text,
                identifiers_only=ranking.definition_identifiers(query.text),
                limit=ranking.max_query_terms,
            )
            | query.spelled_names
            if ranking.definition_candidates and ranking.definition_factor > 1.0
            else (),
            symbol_limit=ranking.definition_candidates,
            symbol_reach=(ranking.window(query.top_k), ranking.definition_factor),
            term_weights=weights,
            documents=[doc_term(s, p) for s, p in named],
            document_limit=ranking.named_file_candidates,
            within=query.library_documents,
            elsewhere=_of_other_corpora(snapshot, named, corpora),
        )


def _of_other_corpora(
    snapshot: Snapshot, files: list[tuple[str, str]], corpora: list[str]
) -> frozenset[str]:
    """The raw doc terms of ``files`` whose corpus is not one of ``corpora`` (empty: both): a
    pool of docs asks nothing of a named module, nor a pool of code of a named page."""
    if not corpora or not files:
        return frozenset()
    docs = snapshot.docs
    return frozenset(
        doc_term(source, path)
        for source, path in files
        if (source, path) in docs and docs[source, path].corpus not in corpora
    )


def at_most_per_document(
    hits: list[LexicalHit], most: int
) -> tuple[list[LexicalHit], list[LexicalHit]]:
    """``hits`` with at most ``most`` of each document's pooled blocks, its best by score,
    and the blocks left out.

    The window shows two blocks of a document, so a question's later blocks of one page
    mostly cost the ranking a pass each: with three kept, no gold rank of the suite moved
    (docs/ranking.md). A block that joined the pool for another reason (a definition or a
    file the query names, a block only the meaning found) or that holds a message the query
    quotes or a line it names is kept whatever its document.
    """
    pages: dict[tuple[str, str], list[LexicalHit]] = {}
    for hit in hits:
        if hit.pooled and not hit.message and not hit.place:
            pages.setdefault((hit.doc.source, hit.doc.path), []).append(hit)
    capped: set[int] = set()
    for blocks in pages.values():
        if len(blocks) > most:
            blocks.sort(key=lambda h: -h.score)  # stable: equal scores keep the pool's order
            capped.update(id(h) for h in blocks[most:])
    if not capped:
        return hits, []
    return [h for h in hits if id(h) not in capped], [h for h in hits if id(h) in capped]


@telemetry.traced(telemetry.RETRIEVE, telemetry.describe_retrieval)
def retrieve(local: LocalCandidates, query: Query, limit: int) -> list[LexicalHit]:
    """The retrieve stage's span: every candidate of the local index for ``query`` (``limit``
    per lexical pool)."""
    return local.hits(query)
