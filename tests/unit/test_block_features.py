"""The ranking reads what it needs of a candidate's body from the index, not from its text:
each block's stored features are exactly what the ranking would compute from the body, a
search reads the texts of its results only, and a damaged store is refused like any index file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import tantivy

from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.index import schema as S
from scriptorium.index.generation import CorruptGenerationError
from tests.support.daemon import built_engine, fastapi_slice


@pytest.fixture(scope="module")
def engine(fastapi_corpus, tmp_path_factory) -> LocalEngine:
    root = tmp_path_factory.mktemp("features")
    corpus = fastapi_slice(
        root / "corpus",
        "docs/en/docs/tutorial",
        "docs/en/docs/reference",
        "docs/ja/docs/tutorial",
        "fastapi/security",
    )
    return built_engine(root, corpus)


def test_every_block_stores_what_the_ranking_reads_of_its_body(engine):
    from scriptorium.ranking.bodies import block_tokens
    from scriptorium.ranking.pipeline import renders_from_code
    from scriptorium.text.features import CJK, CJK_HEAD, BlockFeatures, word_set, word_set_of

    snapshot = engine.indexer.snapshot
    searcher = snapshot.searcher
    options = tuple(sorted(engine.ranking.token_options().items()))
    hits = searcher.search(tantivy.Query.all_query(), searcher.num_docs, count=False).hits
    ids = searcher.fast_field_values(S.BID, [address for _, address in hits])
    assert len(hits) == len(snapshot.blocks) > 1000
    directives = cjk = 0
    for (_, address), bid in zip(hits, ids, strict=True):
        doc, index = snapshot.blocks.get(bid)
        block = doc.blocks[index]
        stored = BlockFeatures(lambda a=address: searcher.doc(a).get_first(S.FEATURES))
        assert stored.available, (doc.path, index)
        assert stored.tokens == block_tokens(block.body, block.section_path, doc.path, options)
        assert stored.words == word_set(block.body)
        assert stored.word_set == word_set_of(word_set(block.body))
        # Asked again (the next search): the count and signature kept, the words made anew
        # only when a comparison needs them.
        again = stored.word_set
        assert again._words is None and again == word_set_of(word_set(block.body))
        assert stored.directive == renders_from_code(block.body)
        assert stored.cjk_head == bool(CJK.search(block.body[:CJK_HEAD]))
        # ``matched`` keeps its last answer: asked again, and then of other terms, it answers
        # what the tokens hold each time.
        tokens = stored.tokens
        for terms in (frozenset(list(tokens)[:2]) | {"zq"}, frozenset({"app", "zq"})):
            for _ in range(2):
                assert stored.matched(terms) == terms & tokens
        directives += stored.directive
        cjk += stored.cjk_head
    assert directives and cjk  # the reference pages and the Japanese ones: both flags occur


def _addresses_by_id(searcher) -> dict[int, tuple[int, int]]:
    hits = searcher.search(tantivy.Query.all_query(), searcher.num_docs, count=False).hits
    ids = searcher.fast_field_values(S.BID, [address for _, address in hits])
    return {bid: (a.segment_ord, a.doc) for (_, a), bid in zip(hits, ids, strict=True)}


def test_a_block_found_by_its_id_alone_carries_its_stored_features(engine, monkeypatch):
    """The semantic retriever knows its nearest blocks by id: each resolves to its index
    address and the features stored there, as a lexical hit does, and no text is read to
    rank it (the table is read in ranges of ids)."""
    from scriptorium.index import addresses
    from scriptorium.index.searcher import resolve_block

    snapshot = engine.indexer.snapshot
    searcher = snapshot.searcher
    cache = snapshot.cache
    with cache._lock:  # no text in memory to begin with
        cache._entries.clear()
        cache._bytes = 0
    truth = _addresses_by_id(searcher)
    table = snapshot.block_addresses()
    assert snapshot.block_addresses() is table  # made once per generation
    # Read in many ranges of ids, the table is the same.
    monkeypatch.setattr(addresses, "CHUNK", 97)
    chunked = addresses.BlockAddresses(searcher, snapshot.index.schema)
    assert len(table) == len(chunked) == len(truth) > 97 * 5
    for bid, place in truth.items():
        for made in (table, chunked):
            address = made.get(bid)
            assert (address.segment_ord, address.doc) == place
        doc, index, features = resolve_block(snapshot, bid)
        assert (doc, index) == snapshot.blocks.get(bid)
        stored = searcher.doc(made.get(bid)).get_first(S.FEATURES)
        assert features.available and features.tokens == _decoded(stored).tokens
    assert not cache._entries  # and none was read to rank them
    # Resolved once per generation: the next search asks the same blocks again.
    assert resolve_block(snapshot, bid)[2] is features
    # An id the generation does not hold has no address, and resolves to nothing.
    absent = next(i for i in range(1, 1 << 20) if i not in truth)
    assert table.get(absent) is None and resolve_block(snapshot, absent) is None


def _decoded(stored: bytes):
    from scriptorium.text.features import BlockFeatures

    features = BlockFeatures(lambda: stored)
    assert features.available  # read (the ranking asks this before anything else)
    return features


def test_the_addresses_of_an_edited_generation_are_its_live_blocks(tmp_path):
    """An update leaves the replaced blocks deleted in the index's segments: the next
    generation's table holds its live blocks only, each at its new address."""
    corpus = fastapi_slice(tmp_path / "corpus", "docs/en/docs/tutorial")
    built = built_engine(tmp_path, corpus)
    before = built.indexer.snapshot
    page = corpus / "docs/en/docs/tutorial/first-steps.md"
    old = {bid for bid, (doc, _) in before.blocks.items() if doc.path.endswith("first-steps.md")}
    assert old and all(before.block_addresses().get(bid) is not None for bid in old)
    page.write_text(page.read_text("utf-8") + "\n\n## Zqmarker\n\nzqmarker text\n", "utf-8")
    assert built.indexer.reconcile() is not None
    after = built.indexer.snapshot
    assert after.generation > before.generation and after.addresses is None
    truth = _addresses_by_id(after.searcher)
    table = after.block_addresses()
    assert len(table) == len(truth) == after.searcher.num_docs
    replaced = old - set(truth)
    assert replaced and all(table.get(bid) is None for bid in replaced)
    for bid, place in truth.items():
        address = table.get(bid)
        assert (address.segment_ord, address.doc) == place


def test_a_search_reads_the_texts_of_its_results_only(engine):
    """With nothing cached, the stages that weigh every candidate read no text: what is read
    is the shown result's document (its snippet, preview and anchor line need the lines)."""
    cache = engine.indexer.cache
    params = SearchParams(
        query="security dependencies with scopes and tokens", top_k=1, explain=True
    )
    query = engine.searching.make_query(params)
    with cache._lock:
        cache._entries.clear()
        cache._bytes = 0
    before = cache.reads
    outcome = engine.searching.search_local(query)
    assert len(outcome.hits) == 1
    weighed = {s.stage: s.kept + s.dropped for s in outcome.stages}
    assert max(weighed.values()) > 20, weighed  # many candidates of many documents were weighed
    # Before, every candidate document the priors and document evidence looked at was read.
    assert cache.reads - before == 1


def test_a_damaged_feature_store_is_refused_like_any_index_file(engine, tmp_path):
    store = engine.indexer.store
    generation = engine.indexer.snapshot.generation
    copy = tmp_path / "state"
    shutil.copytree(store.state_dir, copy, ignore=shutil.ignore_patterns("*.lock"))
    from scriptorium.index.generation import GenerationStore

    damaged = GenerationStore(copy)
    stores = list((damaged.generation_dir(generation) / "index").glob("*.store"))
    assert stores  # the stored field lives in tantivy's document store
    victim = max(stores, key=lambda p: p.stat().st_size)
    with victim.open("r+b") as handle:
        handle.seek(os.path.getsize(victim) // 2)
        byte = handle.read(1)[0]
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte ^ 0xFF]))
    with pytest.raises(CorruptGenerationError, match="checksum"):
        damaged.load_manifest(generation)
    assert Path(victim).exists()


def test_features_are_read_by_whichever_is_asked_first():
    from scriptorium.text.features import BlockFeatures

    stored = b"\x01both words\ntoken\nonly"  # the directive flag, then the three texts
    for ask in ("tokens", "words", "directive", "matched", "cjk_head"):
        features = BlockFeatures(lambda: stored)
        if ask == "matched":
            assert features.matched(frozenset({"token", "zq"})) == {"token"}
        elif ask == "directive":
            assert features.directive
        elif ask == "cjk_head":
            assert not features.cjk_head
        else:
            assert getattr(features, ask)  # read, not an empty set
        assert features.tokens == {"both", "words", "token"}
        assert features.words == {"both", "words", "only"}
    missing = BlockFeatures(lambda: None)
    assert not missing.directive and not missing.tokens and not missing.available
