"""What a served generation keeps in memory once it has caught up: the resolver's tables are
made from the document table's keys and the pack's records (no document is made for them),
and a generation pruned after updates leaves no file of it open in the serving process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scriptorium.domain.outcomes import FailedPrecondition, NotFound
from scriptorium.engine.local import LocalEngine
from scriptorium.index.generation import GenerationStore
from scriptorium.index.pack import PACK_FILE
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from tests.support.daemon import copy_tutorial_slice, write_fastapi_config


@pytest.fixture
def small_corpus(fastapi_corpus, tmp_path: Path) -> Path:
    return copy_tutorial_slice(tmp_path / "corpus")


def _build(tmp_path: Path, corpus: Path) -> list[tuple[str, str]]:
    """Build the corpus's first generation (``scriptorium index build``, in a process of its
    own, as a daemon finds it at start); its documents' keys."""
    config = write_fastapi_config(tmp_path / "c.toml", corpus)
    state = tmp_path / "state"
    command = [sys.executable, "-m", "scriptorium", "index", "build"]
    subprocess.run(
        [*command, "--config", str(config), "--state-dir", str(state)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    store = GenerationStore(state)
    records = store.read_pack(store.complete_generations()[0])
    keys = list(records.keys)
    del records  # its file closes with it
    return keys


def _engine(tmp_path: Path, corpus: Path) -> LocalEngine:
    settings = load_settings(tmp_path / "c.toml", state_dir=str(tmp_path / "state"))
    return LocalEngine(settings, load_registry())


def _outcome(resolver, location: str) -> tuple:
    try:
        found = resolver.resolve(location)
    except (NotFound, FailedPrecondition) as exc:
        return ("miss", exc.resolution.reason, tuple(exc.resolution.candidates))
    return ("hit", found.source.name, found.doc.path, found.resolution.rule, found.fragment)


def _verified() -> None:
    """Wait for the background check of an opened generation: it holds that snapshot."""
    for thread in threading.enumerate():
        if thread.name == "scriptorium-verify":
            thread.join(120)


def test_the_resolver_made_at_catch_up_makes_no_document(tmp_path, small_corpus, monkeypatch):
    """After the start-up catch-up (which makes the resolver) no document is made; a lookup
    makes the one document it resolves to, and answers as a resolver over made documents."""
    from scriptorium.index import doctable

    keys = _build(tmp_path, small_corpus)
    made: list[str] = []
    make = doctable.from_record
    monkeypatch.setattr(doctable, "from_record", lambda r, t: made.append(r[1]) or make(r, t))
    indexer = _engine(tmp_path, small_corpus).indexer
    assert indexer.open_newest()
    assert indexer.catch_up() is None  # nothing changed: the opened generation serves on
    resolver = indexer.resolver  # the one the catch-up made
    assert made == []
    page = next(path for source, path in keys if source == "en" and path.endswith(".md"))
    found = resolver.resolve(page)
    assert found.doc.path == page and made == [page]
    assert found.doc is indexer.snapshot.docs[("en", page)]
    # The same answers once every document is made (the tables read records, or documents).
    locations = [
        "tutorial/first-steps",
        "tutorial/first-steps.md",
        "first-steps",
        "ja/tutorial/first-steps",
        "fastapi.security.oauth2.OAuth2PasswordBearer",
        "oauth2",
        "security/index",
        "no/such/page",
        *(path for _, path in keys),
    ]
    lazy = [_outcome(resolver, location) for location in locations]
    assert any(o[0] == "hit" for o in lazy) and any(o[0] == "miss" for o in lazy)
    for key in keys:
        indexer.snapshot.docs[key]
    indexer._resolver = None  # made again, now from documents all made
    assert [_outcome(indexer.resolver, location) for location in locations] == lazy


def _open_files() -> list[str]:
    fds = Path("/proc/self/fd")
    names = []
    for fd in fds.iterdir():
        try:
            names.append(os.readlink(fd))
        except OSError:  # closed meanwhile
            continue
    return names


def test_a_pruned_generation_leaves_no_file_open(tmp_path, small_corpus):
    """Updates read kept documents from their own generation's pack: once the generation
    the daemon opened at start is pruned, its pack is neither open nor on disk."""
    keys = _build(tmp_path, small_corpus)
    indexer = _engine(tmp_path, small_corpus).indexer
    assert indexer.open_newest()
    _verified()
    opened = indexer.snapshot.generation
    pack = indexer.store.generation_dir(opened) / "index" / PACK_FILE
    assert str(pack) in _open_files()
    untouched = ("en", next(p for s, p in keys if s == "en" and "oauth2" in p))
    edited = small_corpus / "docs/en/docs/tutorial/first-steps.md"
    # Edits the watch lands, below the share of deleted blocks that writes the index again
    # from the roots (which a reconcile of every root does whenever a block was deleted).
    indexer.settings.rewrite_deleted_share = 1.0
    for round in range(4):  # three generations are kept: the opened one goes
        edited.write_text(edited.read_text("utf-8") + f"\n\nA capybara {round}.\n", "utf-8")
        summary = indexer.reconcile({"en": ["tutorial/first-steps.md"]})
        assert summary is not None and summary.changed == 1
    assert indexer.snapshot.generation == opened + 4
    assert not pack.exists()
    assert not [name for name in _open_files() if name.startswith(str(pack))]
    # Documents not made before the updates are read from the served generation's pack.
    assert untouched in indexer.snapshot.docs and indexer.snapshot.docs.made(untouched) is None
    assert indexer.snapshot.docs[untouched].path == untouched[1]
    served = indexer.store.generation_dir(indexer.snapshot.generation) / "index" / PACK_FILE
    assert str(served) in _open_files()


def test_the_composing_tables_make_only_what_a_lookup_returns(
    fastapi_corpus, tmp_path, monkeypatch
):
    """The four tables composed calls share (symbols, code by suffix and by folder,
    includers) are made from keys and records: no document is made until one is looked up,
    and they hold what a scan of the made documents gives."""
    from collections import defaultdict

    from scriptorium.compose.related import folder_of
    from scriptorium.domain.model import Corpus
    from scriptorium.index import doctable
    from scriptorium.index.texts import block_symbols
    from tests.support.daemon import copy_security_slice

    corpus = copy_security_slice(tmp_path / "corpus", ("en", "ja"))
    (corpus / "docs/zh/docs").mkdir(parents=True)
    keys = _build(tmp_path, corpus)
    made: list[str] = []
    make = doctable.from_record
    monkeypatch.setattr(doctable, "from_record", lambda r, t: made.append(r[1]) or make(r, t))
    engine = _engine(tmp_path, corpus)
    assert engine.indexer.open_newest()
    snapshot, tables = engine.indexer.snapshot, engine.tables
    symbols, suffixes = tables.symbols(snapshot), tables.code_by_suffix(snapshot)
    folders, includers = tables.code_by_folder(snapshot), tables.includers(snapshot)
    assert made == [] and symbols and suffixes and folders and includers
    code = next(path for source, path in keys if source == "code")
    assert [d.path for d in suffixes[code.lower()]] == [code] and made == [code]
    # What a scan of every made document gives (as the tables were made before).
    docs = [snapshot.docs[key] for key in keys]
    want_symbols, want_suffixes = defaultdict(list), defaultdict(list)
    want_folders, want_includers = defaultdict(list), defaultdict(list)
    for doc in docs:
        if doc.corpus is Corpus.CODE:
            for index, symbol in block_symbols(doc):
                want_symbols[symbol].append((doc.path, index))
            parts = doc.path.lower().split("/")
            for i in range(len(parts)):
                want_suffixes["/".join(parts[i:])].append(doc.path)
            want_folders[(doc.source, folder_of(doc.path))].append(doc.path)
    for page in (d for d in docs if d.corpus is Corpus.DOCS):
        for tail in page.includes:
            for doc in docs:
                ends = doc.path == tail or doc.path.endswith("/" + tail)
                if doc.corpus is Corpus.CODE and ends:
                    want_includers[doc.path].append(page.path)
    assert {k: [(d.path, i) for d, i in v] for k, v in symbols.items()} == want_symbols
    assert {k: [d.path for d in v] for k, v in suffixes.items()} == want_suffixes
    assert {k: [d.path for d in v] for k, v in folders.items()} == want_folders
    assert {k: [d.path for d in v] for k, v in includers.items()} == want_includers
    assert want_includers  # the slice's pages include its examples


def test_made_documents_stay_within_their_bound(tmp_path, small_corpus, monkeypatch):
    """A session that touches every document keeps at most MADE_DOCUMENTS of them made; one
    let go is made again, the same, from the pack."""
    from scriptorium.index import doctable

    keys = _build(tmp_path, small_corpus)
    monkeypatch.setattr(doctable, "MADE_DOCUMENTS", 5)
    made: list[str] = []
    make = doctable.from_record
    monkeypatch.setattr(doctable, "from_record", lambda r, t: made.append(r[1]) or make(r, t))
    indexer = _engine(tmp_path, small_corpus).indexer
    assert indexer.open_newest()
    docs = indexer.snapshot.docs
    assert len(keys) > 10
    first = [(docs[key].path, len(docs[key].blocks)) for key in keys]
    assert first == [(path, len(docs[(source, path)].blocks)) for source, path in keys]
    held = [key for key in keys if docs.made(key) is not None]
    assert 0 < len(held) <= 5 and held == keys[-len(held) :]  # the most recently used
    before = len(made)
    assert docs[keys[0]].path == keys[0][1] and len(made) == before + 1


def test_a_build_lets_go_of_the_documents_it_made(tmp_path, small_corpus):
    """The documents a build or an update cut are in the pack it wrote: once it serves, they
    are read from there when asked for, not held for the generation's life."""
    write_fastapi_config(tmp_path / "c.toml", small_corpus)
    indexer = _engine(tmp_path, small_corpus).indexer
    indexer.load_or_build()  # no generation yet: built in this process
    keys = list(indexer.snapshot.docs)
    assert keys and all(indexer.snapshot.docs.made(key) is None for key in keys)
    edited = small_corpus / "docs/en/docs/tutorial/first-steps.md"
    edited.write_text(edited.read_text("utf-8") + "\n\nA capybara.\n", "utf-8")
    assert indexer.reconcile().changed == 1
    key = ("en", "tutorial/first-steps.md")
    assert indexer.snapshot.docs.made(key) is None
    assert "capybara" in indexer.snapshot.docs[key].text
