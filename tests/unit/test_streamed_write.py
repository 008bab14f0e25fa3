"""A generation written while its documents load: order, removals, nothing-to-write, spools."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import pytest

from scriptorium.engine.local import LocalEngine
from scriptorium.index import generation as generation_module
from scriptorium.index import parallel
from scriptorium.index.generation import Change, FileEntry, Finish, GenerationStore, SourceEntry
from scriptorium.index.store import blob_name
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from tests.support.trees import markdown_config, write
from tests.unit.test_generation import FINGERPRINT, make_doc, search, tokens_for


def table(*docs) -> dict[str, SourceEntry]:
    files = {
        d.path: FileEntry(d.content_hash, len(d.text), 0, blob_name(d, FINGERPRINT), 1)
        for d in docs
    }
    return {"s": SourceEntry("markdown", "/x", "fp", files)}


def pages(tmp_path: Path, count: int):
    """A Markdown source of ``count`` small pages: the engine, the source, its items."""
    docs = tmp_path / "docs"
    for i in range(count):
        write(docs / f"p{i:02d}.md", f"# Page {i}\n\nword{i} text\n")
    settings = load_settings(
        markdown_config(tmp_path / "c.toml", {"docs": docs}), state_dir=str(tmp_path / "st")
    )
    engine = LocalEngine(settings, load_registry())
    source = engine.catalog.by_name["docs"]
    return engine, source, [("docs", stat.path) for stat in source.list_files()]


def with_one_helper(engine: LocalEngine, source, fallbacks: list[str]) -> dict:
    """The keywords of a load shared with one helper, whose fallbacks go to ``fallbacks``."""
    return {
        "sources": {"docs": source},
        "options": engine.ranking.token_options(),
        "fingerprint": engine.indexer.extractors.fingerprint,
        "load_plugins": load_registry,
        "helpers": 1,
        "on_fallback": fallbacks.append,
    }


def test_a_removal_streamed_before_its_replacement_keeps_the_replacement(tmp_path):
    store = GenerationStore(tmp_path)
    old = make_doc("a.md", "apple banana")
    first = store.write(
        parent=None,
        change=Change(added=[old]),
        sources=table(old),
        extractors=FINGERPRINT,
        tokens_for=tokens_for,
    )
    new = make_doc("a.md", "apple durian")
    change = Change(removed=[("s", "a.md")], added=[new])
    second = store.write_streamed(
        parent=first,
        change=change,
        extractors=FINGERPRINT,
        steps=iter([("s", "a.md"), new]),
        tokens_for=tokens_for,
        finish=lambda: Finish(table(new)),
    )
    assert second is not None and second.generation == 2
    assert search(store, second, "durian") == ["a.md"]
    assert search(store, second, "banana") == []


def test_nothing_to_write_leaves_nothing_behind(tmp_path):
    store = GenerationStore(tmp_path)
    assert (
        store.write_streamed(
            parent=None,
            change=Change(),
            extractors=FINGERPRINT,
            steps=iter(()),
            tokens_for=tokens_for,
            finish=lambda: None,
        )
        is None
    )
    assert not (tmp_path / "generations").exists() or not any((tmp_path / "generations").iterdir())
    # Steps came, but finish() found nothing changed: what was begun goes, blobs included.
    doc = make_doc("a.md", "apple")
    assert (
        store.write_streamed(
            parent=None,
            change=Change(added=[doc]),
            extractors=FINGERPRINT,
            steps=iter([doc]),
            tokens_for=tokens_for,
            finish=lambda: None,
        )
        is None
    )
    assert list((tmp_path / "generations").iterdir()) == []
    assert not store.blobs.exists(blob_name(doc, FINGERPRINT))
    assert store.complete_generations() == []


def test_steps_that_fail_half_way_are_closed_and_the_partial_goes(tmp_path):
    store = GenerationStore(tmp_path)
    closed = []

    def steps():
        try:
            yield make_doc("a.md", "apple")
            raise RuntimeError("a loader's bug")
        finally:
            closed.append(True)

    with pytest.raises(RuntimeError, match="loader's bug"):
        store.write_streamed(
            parent=None,
            change=Change(),
            extractors=FINGERPRINT,
            steps=steps(),
            tokens_for=tokens_for,
            finish=lambda: Finish({}),
        )
    assert closed == [True]
    assert list((tmp_path / "generations").iterdir()) == []


def test_a_serial_build_indexes_each_file_before_it_loads_the_next(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    for name in ("a", "b", "c"):
        write(docs / f"{name}.md", f"# {name.upper()}\n\n{name} text\n")
    settings = load_settings(
        markdown_config(tmp_path / "c.toml", {"docs": docs}), state_dir=str(tmp_path / "st")
    )
    settings.build_workers = 1
    engine = LocalEngine(settings, load_registry())
    events: list[str] = []
    source = engine.catalog.by_name["docs"]
    load = source.load
    monkeypatch.setattr(source, "load", lambda path: events.append(f"load {path}") or load(path))
    add_blocks = generation_module.GenerationStore._add_blocks

    def adding(writer, doc, tokens):
        events.append(f"index {doc.path}")
        return add_blocks(writer, doc, tokens)

    monkeypatch.setattr(generation_module.GenerationStore, "_add_blocks", staticmethod(adding))
    summary = engine.indexer.load_or_build()
    assert summary is not None and summary.documents == 3
    assert events == [f"{what} {name}.md" for name in "abc" for what in ("load", "index")]


def test_helper_results_come_back_through_files_that_are_removed(tmp_path, monkeypatch, caplog):
    spools = tmp_path / "tmp"
    spools.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spools))
    monkeypatch.setattr(parallel, "CHUNK_FILES", 2)
    engine, source, items = pages(tmp_path, 12)
    caplog.set_level(logging.WARNING)
    taken = parallel._Helpers.result
    through_files: list[str] = []

    def counting(future):
        through_files.append(future.result())
        return taken(future)

    monkeypatch.setattr(parallel._Helpers, "result", staticmethod(counting))
    fallbacks: list[str] = []
    serial = parallel.load_files({"docs": source}, items, engine.ranking.token_options())
    chunks = list(parallel.load_in_order(items, **with_one_helper(engine, source, fallbacks)))
    assert not fallbacks
    # The first chunk goes to the helper before this process takes any from the back.
    assert through_files and all(Path(p).parent.parent == spools for p in through_files)
    assert [r.doc.path for chunk in chunks for r in chunk] == [p for _, p in items]
    assert [r.tokens for chunk in chunks for r in chunk] == [r.tokens for r in serial]
    assert list(spools.iterdir()) == []  # the spool directory went with the helpers


def lose_helper_results(monkeypatch) -> None:
    """Every helper result file is removed before it is read, as if under the build."""
    taken = parallel._Helpers.result

    def lost(future):
        Path(future.result()).unlink()
        return taken(future)

    monkeypatch.setattr(parallel._Helpers, "result", staticmethod(lost))


def test_a_lost_helper_result_is_loaded_here(tmp_path, monkeypatch):
    """A result file that cannot be read (removed under the build) is said, then loaded here.

    One chunk only: the helper is handed it first, so this process cannot take it from the
    back and must wait for the helper's result."""
    engine, source, items = pages(tmp_path, 8)
    assert len(items) <= parallel.CHUNK_FILES
    lose_helper_results(monkeypatch)
    fallbacks: list[str] = []
    loaded = parallel.load_shared(items, **with_one_helper(engine, source, fallbacks))
    assert [r.doc.path for r in loaded] == [p for _, p in items]
    assert len(fallbacks) == 1 and "No such file" in fallbacks[0], fallbacks


def test_a_lost_helper_result_is_loaded_here_when_streaming(tmp_path, monkeypatch):
    """A push's load: the chunk whose result is lost, and those the helper still held, are
    loaded here, each file handed back once."""
    monkeypatch.setattr(parallel, "CHUNK_FILES", 2)
    engine, source, items = pages(tmp_path, 12)
    lose_helper_results(monkeypatch)
    fallbacks: list[str] = []
    streamed = [
        item
        for chunk in parallel.load_streaming(items, **with_one_helper(engine, source, fallbacks))
        for item, loaded in chunk
        if loaded.doc is not None
    ]
    assert sorted(streamed) == sorted(items)
    assert len(fallbacks) == 1 and "No such file" in fallbacks[0], fallbacks
