"""The query side: a query's vector, its nearest blocks, and the hybrid score of every candidate.

Each corpus gets its own nearest blocks, as it gets its own lexical pool, and every candidate of
either list is scored both ways: its BM25 score divided by the corpus's best, its cosine with
the query scaled between the corpus's lowest and highest among the candidates, mixed by a weight
that depends on the corpus and on whether the query is a question or a pasted text (the suite
decided them; docs/ranking.md). The mix is put back on the corpus's BM25 scale, so the stages
after it (fusion across corpora, the priors) read it as they read a lexical score.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from cachetools import LRUCache

from scriptorium import faults
from scriptorium.cancel import cancelled, run_in_thread
from scriptorium.domain.model import Corpus, Query
from scriptorium.index.generation import block_id
from scriptorium.index.searcher import LexicalHit, resolve_block
from scriptorium.ranking.questions import names_beyond_acronyms, usage_question
from scriptorium.ranking.signals import identifier_words
from scriptorium.semantic.builder import VectorBuilder
from scriptorium.semantic.passages import prose
from scriptorium.text.features import CJK

if TYPE_CHECKING:
    import numpy as np

    from scriptorium.index.catalog import Snapshot
    from scriptorium.semantic import vectors as V
    from scriptorium.settings.ranking import RankingSettings

QUERY_MEMO = 512
# Queries encoded away from the event loop, one process-wide pool: two at once fill two
# cores (each encoding runs on the encoder's own threads as well). No thread starts until a
# query is encoded.
QUERY_THREADS = 2
_QUERY_POOL = ThreadPoolExecutor(QUERY_THREADS, thread_name_prefix="scriptorium-query")


class SemanticCandidates:
    """Nearest blocks and hybrid scores over the vectors the builder serves."""

    def __init__(self, builder: VectorBuilder, ranking: RankingSettings) -> None:
        self.builder = builder
        self.ranking = ranking
        self._queries: LRUCache = LRUCache(maxsize=QUERY_MEMO)
        self._lock = threading.Lock()

    def query_vector(self, text: str) -> np.ndarray:
        """The query's vector (remembered: agents ask the same question again)."""
        with self._lock:
            held = self._queries.get(text)
        if held is not None:
            return held
        encoder = self.builder.encoder
        assert encoder is not None
        faults.pause("semantic.query", cancelled)
        vector = encoder.query(text)
        tail = self.ranking.semantic_query_tail
        if 0 < tail < len(text):
            # A pasted text's question often comes last, past what the encoder reads.
            both = vector + encoder.query(text[-tail:])
            vector = both / max(float((both * both).sum()) ** 0.5, 1e-12)
        with self._lock:
            self._queries[text] = vector
        return vector

    def vector_text(self, query: Query) -> str | None:
        """The text whose vector a search of ``query`` may read: None when it reads none (no
        vectors yet, a CJK query, a kind of query ranked lexically whatever its candidates)."""
        if self.builder.index is None or self.builder.encoder is None or CJK.search(query.text):
            return None  # a CJK query: the model reads English
        corpora = [c for c in Corpus if not query.corpora or c in query.corpora]
        # The largest share each corpus can take (a question whose words matched nothing).
        if not any(self.weight(query.text, c, covered=0.0) > 0 for c in corpora):
            return None
        text = query.text
        if self.ranking.semantic_prose and self.ranking.is_pasted(text):
            text = prose(text)
        return text

    async def encode_aside(self, text: str) -> None:
        """:meth:`query_vector` of ``text`` in a thread of its own, remembered for the search
        that asks for it next (the encoder releases the interpreter while it runs)."""
        await run_in_thread(self.query_vector, text, executor=_QUERY_POOL)

    def remembers(self, text: str) -> bool:
        """Whether the vector of ``text`` is at hand (no encoding to wait for)."""
        with self._lock:
            return text in self._queries

    def weight(self, text: str, corpus: Corpus, covered: float = 1.0) -> float:
        """The cosine's share for ``corpus``: fixed for a pasted text; for a question, from
        ``semantic_weight_uncovered`` when the lexical candidates match none of its terms down
        to the corpus's weight when one of them matches them all (``covered``, 0..1): where
        the words already found the answer the meaning need not move it, and where they did
        not, it is what is left."""
        ranking = self.ranking
        if ranking.is_pasted(text):
            return (
                ranking.semantic_weight_long_code
                if corpus is Corpus.CODE
                else ranking.semantic_weight_long
            )
        if (
            ranking.semantic_names_lexical
            and _looks_up_name(text)
            and not _reads_as_usage(text, ranking.semantic_usage_questions)
        ):
            return 0.0  # a lookup by name: the name is the evidence
        base = ranking.semantic_weight_code if corpus is Corpus.CODE else ranking.semantic_weight
        top = max(base, ranking.semantic_weight_uncovered)
        return base + (top - base) * (1.0 - covered)

    def added(self, query: Query, weight: float, pooled: int) -> int:
        """How many of a corpus's nearest blocks become candidates (the first ones; all
        ``semantic_candidates`` of them are read for the floor). A search whose lexical pool
        is full (``pooled``: the candidates its words found) takes them in proportion to the
        cosine's share of its score: 25 of 50 at a share of 0.5 (a question its words
        matched, over docs), 10 at 0.2 (the same over code, and a pasted text over code), 35
        at a pasted text's 0.7 over docs, all at 1.0.
        Past those the blocks only the meaning reaches do not reach the results: the suite's
        lists are the same as with all 50 (docs/ranking.md), where every extra candidate
        costs the priors a pass. With fewer candidates than the pool holds, the meaning
        fills it."""
        ranking = self.ranking
        limit = ranking.semantic_candidates
        if ranking.semantic_added == "all" or pooled < ranking.candidate_limit(query.top_k):
            return limit
        top = max(
            ranking.semantic_weight_uncovered, ranking.semantic_weight, ranking.semantic_weight_code
        )
        return limit if top <= 0 else math.ceil(limit * min(1.0, weight / top))

    def mix(
        self,
        snapshot: Snapshot,
        query: Query,
        hits: list[LexicalHit],
        allowed: Callable[[LexicalHit], bool],
        scored: Callable[[Query, list[LexicalHit]], None] | None = None,
    ) -> list[LexicalHit]:
        """``hits`` with each corpus's nearest blocks added, every score the hybrid one.

        A block only the meaning found scores 0 by its words unless ``scored`` gives the
        added blocks their lexical scores first."""
        import numpy as np

        from scriptorium.semantic import vectors as V

        index = self.builder.index
        text = self.vector_text(query)
        if index is None or text is None:
            return hits
        corpora = [c for c in Corpus if not query.corpora or c in query.corpora]
        # Only a question's weight follows how much of it the lexical candidates match.
        covered = 1.0 if self.ranking.is_pasted(query.text) else _covered(query, hits)
        weights = {c: self.weight(query.text, c, covered) for c in corpora}
        if not any(weight > 0 for weight in weights.values()):
            return hits  # lexical for this kind of query: no vector to make
        vector = self.query_vector(text)
        seen = {hit.bid for hit in hits}
        # The lexical candidates of each corpus's pool (None: one pool for both).
        pooled = (
            Counter(hit.doc.corpus for hit in hits)
            if self.ranking.pools_apart(query.corpora)
            else None
        )
        lexical = len(hits)
        limit = self.ranking.semantic_candidates
        floors: dict[Corpus, float] = {}
        searched = [c for c in corpora if weights[c] > 0] if limit > 0 else []
        codes = [V.CODE if corpus is Corpus.CODE else V.DOCS for corpus in searched]
        heads = index.heads(vector, limit, codes) if searched else []
        for corpus, code, head in zip(searched, codes, heads, strict=True):
            added = self.added(
                query, weights[corpus], lexical if pooled is None else pooled[corpus]
            )
            taken = 0
            for bid, cosine in index.nearest(vector, limit, code, head):
                if taken >= limit:
                    break
                floors[corpus] = cosine
                if bid in seen:
                    taken += 1
                    continue
                entry = resolve_block(snapshot, bid)
                if entry is None:
                    continue  # a block of an older generation
                hit = LexicalHit(0.0, entry[0], entry[1], entry[2], bid)
                if not allowed(hit):
                    continue
                if taken < added:
                    hits.append(hit)
                    seen.add(bid)
                taken += 1
        if scored is not None and len(hits) > lexical:
            scored(query, hits[lexical:])
        cosines = index.similarity(vector, np.array([h.bid for h in hits], dtype=np.int64))
        context = self.ranking.semantic_page_context
        if context > 0:
            cosines = _in_context(index, vector, hits, cosines, context)
        nearest_floor = self.ranking.semantic_floor == "nearest"
        values = cosines.tolist()  # Python floats, as float() of each gives
        for corpus in corpora:
            _rescore(
                [i for i, h in enumerate(hits) if h.doc.corpus is corpus],
                hits,
                values,
                weights[corpus],
                floors.get(corpus) if nearest_floor else None,
            )
        return hits


def _reads_as_usage(text: str, which: str) -> bool:
    """Whether a question naming identifiers is about using them and reads the cosine as a
    question does (``semantic_usage_questions``: off, names, all)."""
    if which == "off" or not usage_question(text):
        return False
    return which == "all" or names_beyond_acronyms(text)


@functools.lru_cache(maxsize=1024)
def _looks_up_name(text: str) -> bool:
    """Whether a question looks a name up: one line naming an identifier (``APIRouter``,
    ``include_router``, a code span), where the words that match it exactly are the answer.
    A short problem of several lines (a sentence, then the code it is about) names the
    identifiers of its code, not the one it asks for."""
    return "\n" not in text.strip() and bool(identifier_words(text))


# Lexical candidates read for how much of the query they match (the best few by BM25).
COVERAGE_DEPTH = 5


def _covered(query: Query, hits: Sequence[LexicalHit]) -> float:
    """The largest share of the query's distinct terms one of the best lexical candidates
    matches (0 with none; 1 when its stored features cannot say)."""
    terms = frozenset(query.terms)
    if not terms:
        return 1.0
    best = 0.0
    for hit in sorted(hits, key=lambda h: -h.score)[:COVERAGE_DEPTH]:
        features = hit.features
        if features is None or not features.available:
            return 1.0
        best = max(best, len(features.matched(terms)) / len(terms))
    return best


@functools.lru_cache(maxsize=16384)
def _opening_id(source: str, path: str, content_hash: str) -> int:
    """The block id of a document's first block (a hash: remembered, as the same pages are
    candidates again and again)."""
    return block_id(source, path, content_hash, 0)


def _in_context(
    index: V.VectorIndex,
    vector: np.ndarray,
    hits: Sequence[LexicalHit],
    cosines: np.ndarray,
    share: float,
) -> np.ndarray:
    """Each block's cosine mixed with its page opening's (its document's first block): what
    a section means depends on the page it is on, and a later section of a long guide that
    happens to read like the query is weighed by what the page is about."""
    import numpy as np

    firsts = np.array(
        [_opening_id(h.doc.source, h.doc.path, h.doc.content_hash) for h in hits], dtype=np.int64
    )
    opening = index.similarity(vector, firsts)
    mixed = (1.0 - share) * cosines + share * opening
    return np.where(np.isnan(opening), cosines, mixed)


def _rescore(
    members: Sequence[int],
    hits: list[LexicalHit],
    cosines: Sequence[float],
    weight: float,
    floor: float | None = None,
) -> None:
    """One corpus's hybrid scores, on its BM25 scale. The cosine (NaN for a block without a
    vector) is scaled from ``floor`` (the last of the nearest blocks; a candidate below it
    counts 0) or, without one, from the lowest among the candidates, up to the highest."""
    if not members or weight <= 0:
        return
    best = max(hits[i].score for i in members)
    known = [cosines[i] for i in members if not math.isnan(cosines[i])]
    if not known:
        return
    low, high = min(known), max(known)
    if floor is not None and floor < high:
        low = floor
    span = high - low
    scale = best if best > 0 else 1.0
    for i in members:
        hit = hits[i]
        cosine = cosines[i]
        missing = math.isnan(cosine)
        semantic = 0.0 if missing or span <= 0 else max(0.0, cosine - low) / span
        lexical = hit.score / best if best > 0 else 0.0
        hit.dense = 0.0 if missing else cosine
        hit.lexical = hit.score
        hit.score = scale * ((1.0 - weight) * lexical + weight * semantic)
