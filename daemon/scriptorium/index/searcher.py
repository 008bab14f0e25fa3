"""Lexical candidate retrieval: our tokens in, BM25-scored blocks out.

The queries themselves are made in ``index/queries.py``; this module asks them, reads as
deep as definitions, named files and ties at a pool's cut need, and resolves the hits to the
snapshot's blocks.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import tantivy

from scriptorium.domain.model import Block, SourceDocument
from scriptorium.index import schema as S
from scriptorium.index.catalog import Snapshot
from scriptorium.index.guard import DamagedIndex, GuardedSearcher
from scriptorium.index.queries import any_term, corpus_keeping, matcher_of, restrict
from scriptorium.settings.fields import FieldWeights
from scriptorium.text.features import BlockFeatures


@dataclass(slots=True)
class LexicalHit:
    score: float
    doc: SourceDocument
    block_index: int
    # The block's stored ranking features, read from the index when first asked for.
    features: BlockFeatures | None = None
    bid: int = 0
    # Set when the semantic retriever has mixed its score in: the block's cosine with the
    # query, and the BM25 score ``score`` held before (0 for a block only it found).
    dense: float = 0.0
    lexical: float | None = None
    # One of the lexical pool's own best blocks (not a definition, a named file's block or a
    # block only the meaning found, which join after them).
    pooled: bool = False
    # It holds an error message the query quotes, or a line it names (retrieval/pointed.py).
    message: bool = False
    place: bool = False

    @property
    def block(self) -> Block:
        return self.doc.blocks[self.block_index]


# How deep a query reads when blocks defining names it gives, or blocks of files it names, may
# join (see :func:`_among`): over sympy's code, every pasted issue text's floor for definitions
# lies within its first 200 hits; where they cannot tell, a second query is asked.
DEEPER_SCAN = 200
# The most blocks :func:`_among` lists to find them in the deeper hits (a name defined in
# thousands of blocks of a large tree): past this, the second query is asked.
LISTED_AT_MOST = 2_000
# Hits read past a pool's cut to see whether blocks tie across it (:func:`_settled_cut`): a
# tie at FastAPI's cut (one pool in ten) ends within five more hits, so one query finds it.
TIE_PROBE = 8
# The most hits read to find every block tied at a pool's cut.
TIE_REACH = 1_000


def lexical_search(
    snapshot: Snapshot,
    terms: Sequence[str],
    weights: FieldWeights,
    limit: int,
    *,
    corpora: Collection[str] = (),
    sources: Collection[str] = (),
    symbols: Collection[str] = (),
    symbol_limit: int = 0,
    symbol_reach: tuple[int, float] = (10, 1.0),
    term_weights: Sequence[float] = (),
    documents: Collection[str] = (),
    document_limit: int = 0,
    within: Collection[str] = (),
    elsewhere: Collection[str] = (),
) -> list[LexicalHit]:
    """The ``limit`` best blocks for ``terms``, then up to ``symbol_limit`` more among the
    blocks that define one of ``symbols`` (scored by the same query, so the two lists are
    one ranking): a definition the query names is a candidate however long its body is; and
    up to ``document_limit`` more among the blocks of ``documents`` (raw doc terms), the
    files the query names, an equal share from each. Those of ``documents`` also in
    ``elsewhere`` (files of a corpus this pool leaves out) count in the share and are not
    looked for: none of their blocks can join.

    ``symbol_reach`` is ``(window, factor)``: a definition joins only if its score times
    ``factor`` (the ranking's definition prior) reaches the ``window``-th best score, i.e.
    only if the prior could carry it into the results; the rest would cost candidates and
    change nothing. (Fusion scales each corpus by its own best, so a floor per corpus would
    admit more; measured, it found one more definition for 0.2 ms a search: not kept.)"""
    if not terms:
        return []
    if corpora and not any(snapshot.searcher.doc_freq(S.CORPUS, c) for c in corpora):
        return []  # no block of these corpora (a tree of code alone asked for docs)
    schema = snapshot.index.schema
    matcher = matcher_of(snapshot, terms, weights, corpora=corpora, term_weights=term_weights)
    kept, require = corpus_keeping(snapshot, corpora)
    keep = {"corpora": kept, "require_corpora": require, "sources": sources, "within": within}
    restricted = functools.partial(restrict, schema, matcher, **keep)

    # Most words of a query name nothing: a term lookup per name tells which are defined.
    defined = []
    if symbols and symbol_limit > 0 and (not corpora or "code" in corpora):
        defined = [name for name in symbols if snapshot.searcher.doc_freq(S.SYMBOL, name)]
    # With definitions or named files to look for, the query reads deeper than ``limit``
    # (see :func:`_among`). ``hits`` builds a new list on every access: read it once.
    named = list(documents)[:document_limit] if document_limit > 0 else []
    scan = max(limit, DEEPER_SCAN) if defined or named else limit
    query = restricted()
    # A few past ``scan``: whether blocks tie across the pool's cut (see :func:`_settled_cut`).
    ranked = snapshot.searcher.search(query, scan + TIE_PROBE, count=False).hits
    pool = _settled_cut(snapshot, query, ranked, limit, scan + TIE_PROBE)
    found = list(pool)
    ranked = ranked[:scan]
    window, factor = symbol_reach
    floor = found[min(window, len(found)) - 1][0] / factor if found and factor > 0 else 0.0
    # A block left out scores at most what the last one kept does: when that cannot reach the
    # floor, or when fewer than ``limit`` blocks matched (none was left out), no left-out
    # definition can matter and nothing more is looked for.
    if defined and len(found) >= limit and found[-1][0] >= floor:
        extra = _among(snapshot, ranked, scan, S.SYMBOL, defined, symbol_limit, floor, found)
        if extra is None:
            extra = _more(snapshot, restricted(symbols=defined), symbol_limit, floor, found)
        found += extra
    if named:
        # The files the query names by path: their best blocks are candidates however the
        # rest of the query scores them, shared out between the files (a traceback names
        # five, and the one whose words the query says most would take every place).
        share = -(-document_limit // len(named))
        for document in named:
            if document in elsewhere:
                continue
            extra = _among(snapshot, ranked, scan, S.DOC, [document], share, -math.inf, found)
            if extra is None:
                extra = _more(snapshot, restricted(documents=[document]), share, -math.inf, found)
            found += extra
    return resolve_hits(snapshot, pool, pooled=True) + resolve_hits(snapshot, found[len(pool) :])


def scores_within(
    snapshot: Snapshot,
    terms: Sequence[str],
    weights: FieldWeights,
    documents: Collection[str],
    *,
    corpora: Collection[str] = (),
    term_weights: Sequence[float] = (),
) -> dict[int, float]:
    """The BM25 score of every block of ``documents`` (raw doc terms) that ``terms`` match,
    by block id: what :func:`lexical_search` with the same arguments would have given them,
    had its pool reached so deep."""
    if not terms or not documents:
        return {}
    searcher = snapshot.searcher
    schema = snapshot.index.schema
    matcher = matcher_of(snapshot, terms, weights, corpora=corpora, term_weights=term_weights)
    kept, require = corpus_keeping(snapshot, corpora)
    query = restrict(schema, matcher, corpora=kept, documents=documents, require_corpora=require)
    bound = _carrying(searcher, S.DOC, documents)
    if bound <= 0:
        return {}
    found = searcher.search(query, bound, count=False).hits
    ids = searcher.fast_field_values(S.BID, [address for _, address in found])
    pairs = zip(found, ids, strict=True)
    return {bid: float(score) for (score, _), bid in pairs if bid is not None}


def _carrying(searcher: GuardedSearcher, field: str, values: Collection[str]) -> int:
    """At least how many blocks hold one of ``values`` in their raw ``field`` (document
    frequencies count deleted blocks too): a limit that lists them all."""
    return sum(searcher.doc_freq(field, value) for value in values)


def _among(
    snapshot: Snapshot,
    ranked: list,
    scan: int,
    field: str,
    values: Collection[str],
    limit: int,
    floor: float,
    found: list,
) -> list | None:
    """What :func:`_more` finds among the blocks whose raw ``field`` is one of ``values`` (the
    blocks defining a name, a named file's blocks), read from ``ranked``: the query's best
    ``scan`` hits. None when they cannot tell, and the second query must be asked.

    They can tell when ``ranked`` holds every block the query matches, when the floor lies
    deeper than they reach (every block that can join scores at least the floor), or when the
    first ``limit`` of the listed blocks among them score above the last of them (no block
    left out can come before those). Listing the blocks (a filter without scores: tens to
    hundreds of them) and reading deeper hits costs a sixth of a second query, which scores
    every block the terms match again (0.12 against 0.70 ms for a pasted issue text over
    sympy's code).
    """
    searcher = snapshot.searcher
    bound = _carrying(searcher, field, values)
    if bound <= 0:
        return []
    if bound > LISTED_AT_MOST:
        return None  # listing them would cost more than the second query
    blocks = any_term(snapshot.index.schema, field, values)
    listed = {(a.segment_ord, a.doc) for _, a in searcher.search(blocks, bound, count=False).hits}
    best = [hit for hit in ranked if (hit[1].segment_ord, hit[1].doc) in listed][:limit]
    if len(ranked) >= scan:
        cut = ranked[-1][0]
        if not (cut < floor or (len(best) == limit and best[-1][0] > cut)):
            return None
    return _new_above(best, floor, found)


def _settled_cut(
    snapshot: Snapshot, query: tantivy.Query, ranked: list, limit: int, asked: int
) -> list:
    """The first ``limit`` of ``ranked`` (the query's best ``asked`` hits, more than
    ``limit``), with the blocks that tie across the cut chosen by their place (source,
    path, block) rather than by the order of the index's documents.

    That order follows how the index was reached (a resumed build, a catch-up, a merge), so
    the same tree must not depend on it: blocks of equal length with the same words score
    the same (a generated reference, a page per item), and which of them a pool keeps would
    otherwise change with the history. Up to :data:`TIE_REACH` hits are read to find the
    whole tie; past that, tantivy's order decides among the rest.
    """
    if limit <= 0 or len(ranked) <= limit or ranked[limit - 1][0] != ranked[limit][0]:
        return ranked[:limit]
    tie = ranked[limit][0]
    # Fewer hits than asked for: every hit is read.
    while ranked[-1][0] == tie and len(ranked) >= asked and asked < TIE_REACH:
        asked = min(asked * 2, TIE_REACH)
        ranked = snapshot.searcher.search(query, asked, count=False).hits
    above = [hit for hit in ranked if hit[0] > tie]
    tied = [hit for hit in ranked if hit[0] == tie]
    ids = snapshot.searcher.fast_field_values(S.BID, [address for _, address in tied])

    def place(pair: tuple) -> tuple:
        (_, address), bid = pair
        entry = snapshot.blocks.get(bid) if bid is not None else None
        if entry is None:  # not a block of this snapshot: dropped when resolved anyway
            return (1, "", "", 0, address.segment_ord, address.doc)
        document, index = entry[0], entry[1]
        return (0, document.source, document.path, index, 0, 0)

    settled = [hit for hit, _ in sorted(zip(tied, ids, strict=True), key=place)]
    return above + settled[: limit - len(above)]


def _more(snapshot: Snapshot, query: tantivy.Query, limit: int, floor: float, found: list) -> list:
    """Up to ``limit`` hits of ``query`` scoring at least ``floor`` that ``found`` lacks."""
    return _new_above(snapshot.searcher.search(query, limit, count=False).hits, floor, found)


def _new_above(hits: list, floor: float, found: list) -> list:
    """The ``hits`` scoring at least ``floor`` that ``found`` lacks, in their order."""
    seen = {(a.segment_ord, a.doc) for _, a in found}
    return [h for h in hits if h[0] >= floor and (h[1].segment_ord, h[1].doc) not in seen]


def resolve_hits(snapshot: Snapshot, found: list, *, pooled: bool = False) -> list[LexicalHit]:
    """tantivy's (score, address) pairs as hits on the snapshot's blocks (``pooled``: the
    pool's own best blocks)."""
    if not found:
        return []
    searcher = snapshot.searcher
    ids = searcher.fast_field_values(S.BID, [address for _, address in found])
    memo = _resolved_memo(searcher, snapshot.blocks)
    hits = []
    for (score, address), bid in zip(found, ids, strict=True):
        if bid is None:
            continue
        resolved = memo.get(bid)
        if resolved is None:
            resolved = _resolved(snapshot, searcher, address, bid)
            if resolved is None:
                continue
            _remember(memo, bid, resolved)
        # Positional: this runs for every candidate of every search.
        hits.append(
            LexicalHit(float(score), resolved[0], resolved[1], resolved[2], bid, 0.0, None, pooled)
        )
    return hits


def _resolved(
    snapshot: Snapshot, searcher: GuardedSearcher, address: tantivy.DocAddress, bid: int
) -> tuple[SourceDocument, int, BlockFeatures] | None:
    """A block's document, its index there and its stored features (read on first use);
    None for a block id the snapshot does not hold."""
    entry = snapshot.blocks.get(bid)
    if entry is None:
        return None
    features = BlockFeatures(functools.partial(_stored_features, searcher, address))
    return entry[0], entry[1], features


# Blocks resolved (document, index in it, stored features kept decoded) for the searcher and
# block table they were read from: the same blocks are candidates of search after search, and
# an entry (a made document is about 200 bytes, decoded features about 2 KB with a search's
# last match; the word sets near-duplicate detection makes are not kept) is cheaper than a
# block-table search, a document lookup, a document-store read and a decode per candidate per
# search. 16,384 entries: the bench's 163 questions at 10× need about 9,700, and at 4,096 the
# memo was emptied again and again (p50 8.03 → 5.31 ms; journal 2026-12-06, §2). Keyed by
# generation (its searcher and table), so never stale. Two of them: the blocks the index
# finds, and those another route finds (the semantic retriever's nearest), so that neither
# evicts the other's.
FEATURES_MEMO_LIMIT = 16_384
Resolved = tuple[SourceDocument, int, BlockFeatures]
_memos: dict[str, tuple[object, object, dict[int, Resolved]]] = {}


def _resolved_memo(
    searcher: GuardedSearcher, blocks: object, route: str = "index"
) -> dict[int, Resolved]:
    """The memo of ``route`` for ``searcher`` and ``blocks`` (a new generation starts an empty
    one, so none is kept alive by the blocks read from it)."""
    held_searcher, held_blocks, memo = _memos.get(route, (None, None, {}))
    if held_searcher is not searcher or held_blocks is not blocks:
        memo = {}
        _memos[route] = (searcher, blocks, memo)
    return memo


def _remember(memo: dict[int, Resolved], bid: int, resolved: Resolved) -> None:
    """Keep ``resolved``; a full memo is emptied whole (one dict step each, safe without a
    lock for the request threads)."""
    if len(memo) >= FEATURES_MEMO_LIMIT:
        memo.clear()
    memo[bid] = resolved


def resolve_block(
    snapshot: Snapshot, bid: int
) -> tuple[SourceDocument, int, BlockFeatures | None] | None:
    """A block found by another route than the index (the semantic retriever), resolved as a
    lexical hit is: its document, its index there and its stored features (read on first
    use), so that ranking it reads no text; None for a block id the snapshot does not hold.

    Before, such a block's body was read through the text cache and its features made again
    from it: over 10× that kept ~12 MB more of texts and bodies in memory
    (``docs/journal/2026-12-06-nearest-block-features.md``)."""
    searcher, blocks = snapshot.searcher, snapshot.blocks
    resolved = _resolved_memo(searcher, blocks).get(bid)
    if resolved is not None:
        return resolved
    memo = _resolved_memo(searcher, blocks, "nearest")
    resolved = memo.get(bid)
    if resolved is not None:
        return resolved
    address = snapshot.block_addresses().get(bid)
    if address is None:  # not in the index it was found beside: ranked from its body
        entry = blocks.get(bid)
        return None if entry is None else (entry[0], entry[1], None)
    resolved = _resolved(snapshot, searcher, address, bid)
    if resolved is not None:
        _remember(memo, bid, resolved)
    return resolved


def _stored_features(searcher: GuardedSearcher, address: tantivy.DocAddress) -> bytes | None:
    """A block's stored features (None when its document holds none or cannot be read:
    the ranking then reads the body, which a damaged generation refuses in its own way)."""
    try:
        return searcher.doc(address).get_first(S.FEATURES)
    except (ValueError, OSError, DamagedIndex):
        return None
