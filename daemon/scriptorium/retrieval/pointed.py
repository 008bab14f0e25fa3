"""The blocks a query points at besides its words: the block holding an error message it
quotes (``ValueError: Matrix must be symmetric.``; ranking/messages.py) and the definition
holding a line it names (a traceback's frame, ``pkg/mod.py:120``; ranking/places.py).

Each is marked on the lexical hits (``message``, ``place``) for the priors to weigh, and
joins them when the pools missed it, scored as its corpus's pool scores its blocks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scriptorium.domain.model import Corpus, Query, innermost_block
from scriptorium.index.catalog import Snapshot
from scriptorium.index.holding import blocks_holding
from scriptorium.index.schema import doc_term
from scriptorium.index.searcher import LexicalHit, resolve_block, scores_within
from scriptorium.ranking.messages import normalized, quoted_messages
from scriptorium.ranking.paths import auxiliary_kind
from scriptorium.ranking.places import placed_lines
from scriptorium.ranking.signals import MOST_FILES_PER_MENTION
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import query_terms


class Pointed:
    """One search's lexical hits, with what the query points at marked and added."""

    def __init__(
        self,
        snapshot: Snapshot,
        ranking: RankingSettings,
        query: Query,
        hits: list[LexicalHit],
        pool_corpora: Callable[[Query, Corpus | None], list[str]],
    ) -> None:
        self.snapshot, self.ranking, self.query = snapshot, ranking, query
        self.hits = hits
        self.pool_corpora = pool_corpora
        self.by_bid = {hit.bid: hit for hit in hits}
        self.added: list[LexicalHit] = []
        # The served files a line the query names is in (``places``).
        self.traced: set[tuple[str, str]] = set()

    def _known(self, hit: LexicalHit) -> LexicalHit:
        """The search's hit for ``hit``'s block, ``hit`` itself when it joins now."""
        known = self.by_bid.setdefault(hit.bid, hit)
        if known is hit:
            self.added.append(hit)
        return known

    def messages(self) -> None:
        """Mark the blocks whose text holds an error message the query quotes: among the
        blocks holding all of a fragment's words, each checked for the fragment itself. Tests,
        fixtures and the other auxiliary kinds are not marked (a test asserts a message, it
        does not raise it), and a fragment held by more than ``message_sites`` blocks marks
        none (a phrase many messages share). Run after :meth:`places`: when the query's
        lines reach served files, the error happened there, and a block elsewhere that holds
        the message's words (a docstring that describes it) is not marked."""
        ranking, query = self.ranking, self.query
        if ranking.message_factor == 1.0 or ranking.message_candidates <= 0:
            return
        fragments = quoted_messages(query.text)
        if not fragments:
            return
        options = ranking.token_options()
        found = blocks_holding(
            self.snapshot,
            [query_terms(fragment, **options) for fragment in fragments],
            ranking.message_candidates * len(fragments),
            corpora=self.pool_corpora(query, None),
            sources=sorted(query.sources),
        )
        tooling = ranking.auxiliary_tooling
        traced = self.traced
        found = [
            hit
            for hit in found
            if not auxiliary_kind(hit.doc.path, tooling, hit.doc.corpus is Corpus.DOCS)
            and (not traced or (hit.doc.source, hit.doc.path) in traced)
        ]
        texts = [(hit, normalized(hit.block.body)) for hit in found]
        for fragment in fragments:
            holding = [hit for hit, text in texts if fragment in text]
            if len(holding) > ranking.message_sites:
                continue
            for hit in holding:
                self._known(hit).message = True

    def places(self) -> None:
        """Mark the innermost block holding each line the query names in a served file (the
        path's longest ending that picks at most a few files, two segments at least when the
        path has more, so that a user's own ``main.py`` picks none of the tree's)."""
        ranking, query, snapshot = self.ranking, self.query, self.snapshot
        if ranking.place_factor == 1.0:
            return
        places = placed_lines(query.text)
        if not places:
            return
        docs = snapshot.docs
        for path, line in places:
            for key in self._files(path):
                at = docs.position(key)
                if at is None:
                    continue
                doc = docs.at(at)
                if doc.corpus not in query.corpora or (
                    query.sources and doc.source not in query.sources
                ):
                    continue
                index = innermost_block(doc.blocks, line)
                bids = np.frombuffer(docs.bids_at(at), dtype=np.int64)
                if index is None or index >= len(bids):
                    continue
                bid = int(bids[index])
                known = self.by_bid.get(bid)
                if known is None:
                    resolved = resolve_block(snapshot, bid)
                    if resolved is None:
                        continue
                    known = self._known(LexicalHit(0.0, resolved[0], resolved[1], resolved[2], bid))
                known.place = True
                self.traced.add(key)

    def _files(self, path: str) -> list[tuple[str, str]]:
        parts = [part for part in path.split("/") if part and part != "."]
        shortest = 1 if len(parts) == 1 else 2
        for start in range(len(parts) - shortest + 1):
            files = self.snapshot.files_ending("/".join(parts[start:]), MOST_FILES_PER_MENTION + 1)
            if files:
                return files if len(files) <= MOST_FILES_PER_MENTION else []
        return []

    def scored(self) -> list[LexicalHit]:
        """The hits, the added ones last, each scored by the query's BM25 as its corpus's
        pool scores its blocks (0 where no word of the query is in it)."""
        query, ranking = self.query, self.ranking
        for corpus in Corpus:
            joining = [hit for hit in self.added if hit.doc.corpus is corpus]
            if not joining:
                continue
            scores = scores_within(
                self.snapshot,
                query.terms,
                ranking.weights,
                sorted({doc_term(hit.doc.source, hit.doc.path) for hit in joining}),
                corpora=self.pool_corpora(query, corpus),
                term_weights=query.weights,
            )
            for hit in joining:
                hit.score = scores.get(hit.bid, 0.0)
        return self.hits + self.added
