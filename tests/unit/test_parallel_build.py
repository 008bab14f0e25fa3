"""Builds with worker processes produce the same generation as serial ones, or fall back."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from scriptorium.blocks.extractors import Extraction
from scriptorium.domain.model import Corpus
from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.index import blobwriter, changes, lifeline, parallel
from scriptorium.index.catalog import Snapshot
from scriptorium.index.store import encode_document
from scriptorium.plugins import Registry, load_registry
from scriptorium.settings.config import load_settings
from tests.support.daemon import copy_security_slice, write_fastapi_config

QUERIES = ["OAuth2PasswordBearer", "get current user", "パスワード", "scopes security", "token"]


@pytest.fixture
def corpus(fastapi_corpus, tmp_path: Path) -> Path:
    """Security docs in three languages and the security package: a few dozen files."""
    return copy_security_slice(tmp_path / "corpus")


def build(tmp_path: Path, corpus: Path, name: str, workers: int, registry: Registry | None = None):
    config = write_fastapi_config(tmp_path / f"{name}.toml", corpus)
    settings = load_settings(config, state_dir=str(tmp_path / name))
    settings.build_workers = workers
    engine = LocalEngine(settings, registry or load_registry())
    summary = engine.indexer.load_or_build()
    return engine, summary


def fingerprint(engine: LocalEngine) -> dict:
    """Everything a generation holds that a user can observe, without timestamps."""
    manifest = engine.indexer.snapshot.manifest
    files = {
        name: {path: (f.hash, f.blob, f.blocks) for path, f in entry.files.items()}
        for name, entry in manifest.sources.items()
    }
    blocks = sorted(
        (doc.source, doc.path, index, doc.blocks[index].anchor, doc.blocks[index].body)
        for doc, index in engine.indexer.snapshot.blocks.values()
    )
    searches = {}
    for query in QUERIES:
        outcome = engine.searching.search_local(
            engine.searching.make_query(SearchParams(query=query, top_k=10))
        )
        searches[query] = [
            (hit.ref_id, hit.score, hit.preview, hit.snippet) for hit in outcome.hits
        ]
    return {"files": files, "blocks": blocks, "searches": searches}


class _AcceptsNothing:
    name = "accepts-nothing"
    version = "1"
    priority = 1000

    def accepts(self, path: str, corpus: Corpus) -> bool:
        return False

    def extract(self, path: str, text: str) -> Extraction:
        raise AssertionError("never asked")


def test_helper_count_is_none_for_small_builds_and_capped_when_automatic():
    assert parallel.helper_count(0, parallel.MIN_FILES - 1) == 0
    assert parallel.helper_count(1, 10_000) == 0
    assert parallel.helper_count(3, 10_000) == 3  # helpers load, the building process writes
    assert parallel.helper_count(2, 10_000) == 2
    assert 0 <= parallel.helper_count(0, 10_000) <= parallel.MAX_AUTO_HELPERS


def test_a_build_in_workers_equals_a_serial_build(tmp_path, corpus, monkeypatch):
    monkeypatch.setattr(parallel, "MIN_FILES", 1)
    shared = []

    def sharing(items, **kwargs):
        shared.append(len(items))
        return parallel.load_in_order(items, **kwargs)

    monkeypatch.setattr(changes, "load_in_order", sharing)
    serial, serial_summary = build(tmp_path, corpus, "serial", workers=1)
    # The helper encodes the blobs of what it loads: this process encodes only its own.
    loaded_here, encoded_here = [], []
    load_here, encode_here = parallel.load_files, blobwriter.encode_document

    def loading(sources, items, options, encode=False):
        loaded_here.extend(items)
        return load_here(sources, items, options, encode)

    def encoding(doc):
        encoded_here.append((doc.source, doc.path))
        return encode_here(doc)

    monkeypatch.setattr(parallel, "load_files", loading)
    monkeypatch.setattr(blobwriter, "encode_document", encoding)
    spread, spread_summary = build(tmp_path, corpus, "spread", workers=2)
    assert sorted(encoded_here) == sorted(loaded_here)
    assert len(encoded_here) < spread_summary.changed  # the helper's first chunks came encoded
    assert serial_summary.documents == spread_summary.documents > 30
    assert serial_summary.blocks == spread_summary.blocks
    assert shared == [spread_summary.changed]
    assert fingerprint(spread) == fingerprint(serial)
    # Blobs written by the helpers decode to the same documents as those written here.
    reloaded = Snapshot.load(spread.indexer.store, spread.indexer.snapshot.manifest)

    def documents(blocks) -> list:
        return sorted((d.source, d.path, d.content_hash, d.text, i) for d, i in blocks.values())

    assert documents(reloaded.blocks) == documents(serial.indexer.snapshot.blocks)


def test_helpers_load_every_chunk_while_this_process_only_writes(
    tmp_path, corpus, monkeypatch, caplog
):
    engine, _ = build(tmp_path, corpus, "serial", workers=1)
    items = sorted(
        (name, path)
        for name, entry in engine.indexer.snapshot.manifest.sources.items()
        for path in entry.files
    )
    here, reported = [], []
    load_here = parallel.load_files

    def recording(sources, chunk, options):
        here.append(chunk[0])
        return load_here(sources, chunk, options)

    monkeypatch.setattr(parallel, "load_files", recording)
    caplog.set_level(logging.WARNING)
    loaded = parallel.load_shared(
        items,
        sources=engine.catalog.by_name,
        options=engine.ranking.token_options(),
        fingerprint=engine.indexer.extractors.fingerprint,
        load_plugins=load_registry,
        helpers=1,
        on_fallback=lambda why: pytest.fail(f"fell back: {why}"),
        on_loaded=reported.extend,
    )
    assert [(r.doc.source, r.doc.path) for r in loaded] == items
    # Progress hears of every item once.
    assert sorted(reported) == items
    # This process loaded nothing: the tokenizer's memos stay out of the writer's process.
    assert here == []
    for result in loaded:
        assert len(result.tokens) == len(result.doc.blocks)
        # The helper's come with their blobs encoded as this process would encode them.
        assert result.blob == encode_document(result.doc)


def test_an_update_after_a_parallel_build_lands_as_usual(tmp_path, corpus, monkeypatch):
    monkeypatch.setattr(parallel, "MIN_FILES", 1)
    engine, _ = build(tmp_path, corpus, "spread", workers=2)
    page = corpus / "docs/en/docs/tutorial/security/first-steps.md"
    page.write_text(page.read_text("utf-8") + "\n\n## Zqparallel\n\nzqparallel text\n", "utf-8")
    (corpus / "docs/en/docs/tutorial/security/get-current-user.md").unlink()
    summary = engine.indexer.reconcile()
    assert summary is not None and summary.changed == 1 and summary.removed >= 1
    hits = engine.searching.search_local(
        engine.searching.make_query(SearchParams(query="zqparallel"))
    ).hits
    assert hits[0].location == "tutorial/security/first-steps#zqparallel"


def test_workers_with_other_extractors_refuse_and_the_build_runs_here(
    tmp_path, corpus, monkeypatch, caplog
):
    """A registry built in code (not from entry points) cannot be rebuilt by a worker."""
    monkeypatch.setattr(parallel, "MIN_FILES", 1)
    registry = load_registry()
    registry.extractors.append(_AcceptsNothing())  # registered in code: workers lack it
    caplog.set_level(logging.WARNING, logger="scriptorium.index.builder")
    engine, summary = build(tmp_path, corpus, "fallback", workers=2, registry=registry)
    assert summary.documents > 30
    messages = [record.getMessage() for record in caplog.records]
    assert any("differ" in message for message in messages), messages
    serial, _ = build(tmp_path, corpus, "serial", workers=1, registry=registry)
    assert fingerprint(engine) == fingerprint(serial)


def test_streaming_loads_hand_back_every_file_once_as_a_serial_load_would(
    tmp_path, corpus, monkeypatch
):
    """What a push sends: chunks from a helper process and from this one, in any order."""
    from scriptorium.sources.base import SourceConfig, SourceContext

    registry = load_registry()
    config = SourceConfig(name="en", kind="markdown", root=corpus / "docs", options={})
    source = registry.source_factory("markdown")(
        config, SourceContext(extractors=registry.extractor_chain)
    )
    items = [("en", stat.path) for stat in source.list_files()]
    monkeypatch.setattr(parallel, "CHUNK_FILES", 3)  # several chunks: both processes take some
    options = {}
    serial = dict(zip(items, parallel.load_files({"en": source}, items, options), strict=True))
    fallbacks: list[str] = []
    streamed = [
        pair
        for chunk in parallel.load_streaming(
            items,
            sources={"en": source},
            options=options,
            fingerprint=registry.extractor_chain.fingerprint,
            load_plugins=load_registry,
            helpers=1,
            on_fallback=fallbacks.append,
        )
        for pair in chunk
    ]
    assert not fallbacks
    assert sorted(item for item, _ in streamed) == sorted(items)
    for item, loaded in streamed:
        assert loaded.doc is not None and loaded.tokens == serial[item].tokens
        assert loaded.blob is None  # a push writes no blobs: the helper does not encode them
        assert [b.body for b in loaded.doc.blocks] == [b.body for b in serial[item].doc.blocks]


def test_chunks_by_bytes_hold_enough_small_files_and_few_enough_large_ones(monkeypatch):
    monkeypatch.setattr(parallel, "CHUNK_FILES", 2)
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 100)
    monkeypatch.setattr(parallel, "CHUNK_MAX_FILES", 5)
    small = [("s", f"small-{i}") for i in range(12)]  # 10 bytes each: the most files a chunk holds
    large = [("s", f"large-{i}") for i in range(5)]  # 80 bytes each: two reach the bytes
    sizes = {**dict.fromkeys(small, 10), **dict.fromkeys(large, 80)}
    items = [*small, *large]
    chunks = parallel._chunks(items, sizes)
    assert [item for chunk in chunks for item in chunk] == items
    assert [len(chunk) for chunk in chunks] == [5, 5, 3, 2, 2]  # 10 + 10 + 80 bytes, then 2 x 80
    assert [len(chunk) for chunk in parallel._chunks(items, None)] == [2] * 8 + [1]


UNGUARDED_SCRIPT = """
from pathlib import Path

from scriptorium.engine.local import LocalEngine
from scriptorium.index import parallel
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings

parallel.MIN_FILES = 1
settings = load_settings(Path({config!r}), state_dir={state!r})
engine = LocalEngine(settings, load_registry())  # at the top level: no __main__ guard
summary = engine.indexer.load_or_build()
print("documents", summary.documents)
"""


def test_a_script_opening_an_engine_unguarded_builds_without_helpers_and_says_why(tmp_path):
    """A spawned helper runs its parent's main module: one that opens an engine at its top
    level once waited for ever on the write lock its parent held. The helper ends saying why,
    and the script's build completes in its own process."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(12):
        (docs / f"page{n}.md").write_text(f"# Page {n}\n\nWords about topic {n}.\n")
    config = tmp_path / "s.toml"
    config.write_text(
        "[server]\nwatch = false\nbuild_workers = 2\n\n"
        f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{docs}"\n'
    )
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED_SCRIPT.format(config=str(config), state=str(tmp_path / "state")))
    # The timeout only ends a hang (the failure this test is about); a build takes seconds.
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "documents 12" in done.stdout
    assert lifeline.UNGUARDED_MAIN in done.stderr
    assert "Traceback" not in done.stderr
