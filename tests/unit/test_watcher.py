"""Event-driven watching: the paths the OS names are judged exactly as a full listing would."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from pathlib import Path

import pytest

from scriptorium.content.pages import paths_of
from scriptorium.content.resolve import Resolver
from scriptorium.engine import watching as retrieval
from scriptorium.engine.local import LocalEngine
from scriptorium.index.catalog import Snapshot
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from scriptorium.sources import watcher
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium.sources.watcher import RootMap, WatchedRoot
from tests.support.daemon import copy_security_slice, write_fastapi_config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def every_file(root: Path) -> list[str]:
    """Every file and directory under ``root`` as a relative path, skipped ones included."""
    found = []
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            found.append(os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/"))
    return found


@pytest.fixture
def registry():
    return load_registry()


def source_over(registry, root: Path, kind: str = "markdown", **options):
    factory = registry.source_factory(kind)
    config = SourceConfig(name="docs", kind=kind, root=root, options=options)
    return factory(config, SourceContext(extractors=registry.extractor_chain))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write(root / "index.md", "# Home\n")
    write(root / "guide/setup.md", "# Setup\n")
    write(root / "guide/deep/more.md", "# More\n")
    write(root / ".gitignore", "drafts/\n*.tmp.md\n")
    write(root / "drafts/wip.md", "# WIP\n")
    write(root / "notes.tmp.md", "# Temp\n")
    write(root / "guide/.gitignore", "private.md\n")
    write(root / "guide/private.md", "# Private\n")
    write(root / "guide/deep/private.md", "# Also ignored (pattern without a slash)\n")
    write(root / "node_modules/pkg/readme.md", "# Dependency\n")
    write(root / "pkg.egg-info/info.md", "# Metadata\n")
    write(root / "big.md", "# Big\n" + "x" * 5000)
    write(root / "image.png", "not markdown")
    # A built site (told by what it holds, not by its name).
    write(root / "site/built.md", "# Build output\n")
    write(root / "site/index.html", "<html></html>\n")
    write(root / "site/sitemap.xml", "<urlset/>\n")
    outside = write(tmp_path / "outside.md", "# Outside\n")
    (root / "escape.md").symlink_to(outside)
    (root / "alias.md").symlink_to(root / "index.md")
    return root


def test_stat_paths_admits_exactly_what_a_listing_finds(registry, tree):
    source = source_over(registry, tree, max_file_bytes=4096)
    listed = source.list_files()
    assert {f.path for f in listed} == {
        "alias.md",
        "guide/deep/more.md",
        "guide/setup.md",
        "index.md",
    }
    files = [
        p for p in every_file(tree) if (tree / p).is_file() and p.rpartition("/")[2] != ".gitignore"
    ]
    assert source.stat_paths(files) == listed
    # Paths that vanished, or never were, are simply left out.
    assert source.stat_paths(["missing.md", "guide/gone.md"]) == []


def test_stat_paths_asks_for_a_listing_when_only_a_listing_can_tell(registry, tree):
    source = source_over(registry, tree)
    assert source.stat_paths(["guide/.gitignore"]) is None
    (tree / "newdir").mkdir()
    assert source.stat_paths(["newdir"]) is None
    # A directory the walk never enters does not need one.
    (tree / "node_modules/other").mkdir()
    assert source.stat_paths(["node_modules/other", "drafts"]) == []


def test_root_map_maps_a_path_to_every_source_it_belongs_to(tmp_path):
    repo, docs = str(tmp_path / "repo"), str(tmp_path / "repo" / "docs")
    mapping = RootMap([WatchedRoot("code", repo), WatchedRoot("en", docs), WatchedRoot("x", docs)])
    changes = mapping.changes([f"{docs}/a.md", f"{repo}/main.py", str(tmp_path / "elsewhere.md")])
    assert changes == {"code": {"docs/a.md", "main.py"}, "en": {"a.md"}, "x": {"a.md"}}


def test_a_listing_names_the_directories_it_walked_and_only_those(registry, tree):
    source = source_over(registry, tree)
    assert source.listed_dirs == frozenset()
    source.list_files()
    walked = {os.path.relpath(d, tree) for d in source.listed_dirs}
    # Skipped (node_modules, *.egg-info, a built site) and ignored (drafts/) trees are not walked.
    assert walked == {".", "guide", "guide/deep"}


# -- a reconcile told what changed lands the same generation as one that lists everything --------


@pytest.fixture
def corpus(fastapi_corpus, tmp_path: Path) -> Path:
    return copy_security_slice(tmp_path / "corpus", ("en", "ja"))


def engine_over(tmp_path: Path, corpus: Path, name: str) -> LocalEngine:
    settings = load_settings(write_fastapi_config(tmp_path / f"{name}.toml", corpus))
    settings.state_dir = tmp_path / name
    settings.build_workers = 1
    engine = LocalEngine(settings, load_registry())
    engine.indexer.load_or_build()
    return engine


def tables(engine: LocalEngine) -> dict:
    return {
        name: {path: (f.hash, f.size, f.mtime_ns, f.blob, f.blocks) for path, f in s.files.items()}
        for name, s in engine.indexer.snapshot.manifest.sources.items()
    }


def served(engine: LocalEngine, snapshot=None, resolver=None) -> tuple:
    """What a snapshot and its resolver hold, in their order, comparable across engines."""
    snapshot = snapshot or engine.indexer.snapshot
    resolver = resolver or engine.indexer.resolver
    docs = [(key, doc.content_hash) for key, doc in snapshot.docs.items()]
    blocks = sorted((bid, doc.source, doc.path, i) for bid, (doc, i) in snapshot.blocks.items())
    pages = {
        name: {
            table: {k: list(paths_of(v)) for k, v in getattr(p, table).items() if v}
            for table in ("exact", "leaf", "moved", "module")
        }
        | {"top": dict(p.top_dirs)}
        for name, p in resolver.pages.items()
    }
    return docs, blocks, pages


def hits(engine: LocalEngine, query: str) -> list[str]:
    from scriptorium.domain.outcomes import SearchParams

    outcome = engine.searching.search_local(
        engine.searching.make_query(SearchParams(query=query, top_k=10))
    )
    return [hit.location for hit in outcome.hits]


def test_partial_reconcile_matches_a_full_one(tmp_path, corpus):
    told, listed = engine_over(tmp_path, corpus, "told"), engine_over(tmp_path, corpus, "listed")
    en = corpus / "docs/en/docs/tutorial/security"
    edited = en / "first-steps.md"
    edited.write_text(edited.read_text("utf-8") + "\n## Capybara\n\nA capybara login.\n", "utf-8")
    write(en / "new-page.md", "# New page\n\nThe okapi token flow.\n")
    (en / "simple-oauth2.md").unlink()
    (corpus / "fastapi/security/utils.py").unlink()
    write(corpus / "fastapi/security/extra.py", "def okapi_token():\n    return 'okapi'\n")
    write(en / "scratch.txt", "not indexed by either source")
    changed = {
        "en": {
            "tutorial/security/first-steps.md",
            "tutorial/security/new-page.md",
            "tutorial/security/simple-oauth2.md",
            "tutorial/security/scratch.txt",
        },
        "code": {"fastapi/security/utils.py", "fastapi/security/extra.py"},
    }
    summary = told.indexer.reconcile(changed)
    # Changed: the edit and the two new files; removed: the edit's old version, two deletions.
    assert summary is not None and (summary.changed, summary.removed) == (3, 3)
    full = listed.indexer.reconcile()
    assert full is not None and (full.changed, full.removed) == (3, 3)
    assert tables(told) == tables(listed)
    assert list(tables(told)["en"]) == sorted(tables(told)["en"])  # path order, as listed
    # The snapshot and resolver updated in place of a rebuild equal rebuilt ones.
    assert served(told) == served(listed)
    reloaded = Snapshot.load(told.indexer.store, told.indexer.snapshot.manifest)
    assert served(told) == served(told, reloaded, Resolver(told.catalog.local, reloaded))
    for query in ("capybara", "okapi token", "OAuth2PasswordBearer"):
        assert hits(told, query) == hits(listed, query)
    assert any(loc.startswith("tutorial/security/first-steps") for loc in hits(told, "capybara"))
    # Nothing named, nothing to do; a change that changes nothing indexed lands no generation.
    assert told.indexer.reconcile({}) is None
    assert told.indexer.reconcile({"en": {"tutorial/security/scratch.txt"}}) is None


def test_a_removed_directory_falls_back_to_a_listing(tmp_path, corpus):
    engine = engine_over(tmp_path, corpus, "dir")
    assert hits(engine, "HTTPBasic")
    shutil.rmtree(corpus / "fastapi/security")
    summary = engine.indexer.reconcile({"code": {"fastapi/security"}})
    assert summary is not None and summary.removed > 0
    assert not any(p.startswith("fastapi/security/") for p in tables(engine)["code"])


def test_events_unavailable_falls_back_to_listing_every_tick(tmp_path, corpus, monkeypatch, caplog):
    engine = engine_over(tmp_path, corpus, "fallback")
    engine.settings.watch_interval = 0.05

    async def no_events(paths):
        raise watcher.EventsUnavailable("no inotify here")
        yield set()  # pragma: no cover - makes this an async generator

    monkeypatch.setattr(retrieval, "event_batches", no_events)
    listed = []
    monkeypatch.setattr(engine.indexer, "reconcile", lambda changed=None: listed.append(changed))

    async def run() -> None:
        task = asyncio.create_task(engine.watch.run())
        while len(listed) < 3:  # one listing per tick, however long a tick takes here
            await asyncio.sleep(0.01)
        engine.watch.stopping.set()
        await task

    asyncio.run(asyncio.wait_for(run(), 60))
    assert "file-system events unavailable (no inotify here)" in caplog.text
    assert len(listed) >= 3 and all(changed is None for changed in listed)


def test_source_pages_changed_equals_a_rebuild(registry, tmp_path):
    from scriptorium.content.pages import SourcePages

    source = source_over(registry, tmp_path)

    def doc(path: str, title: str, moved: str = ""):
        front = f"---\nmoved_from: {moved}\n---\n" if moved else ""
        return source.document_from_text(path, f"{front}# {title}\n")

    a, b, c = doc("guide/a.md", "A", "old/a.md"), doc("guide/b.md", "B"), doc("other/a.md", "A2")
    b2, d = doc("guide/b.md", "B again", "old/b.md"), doc("new/d.md", "D")

    def view(pages: SourcePages) -> dict:
        tables = {
            t: {k: list(paths_of(v)) for k, v in getattr(pages, t).items() if v}
            for t in ("exact", "leaf", "moved", "module")
        }
        return {**tables, "top": dict(pages.top_dirs)}

    def entries(*docs):
        return [(x.path, x.meta.moved_from) for x in docs]

    before = SourcePages(source, entries(a, b, c))
    after = before.changed(removed=entries(a, b), added=entries(b2, d))
    assert view(after) == view(SourcePages(source, entries(b2, c, d)))
    assert "old/a" not in after.moved and after.paths("moved", "old/b") == (b2.path,)
    assert before.paths("leaf", "a") == ("guide/a.md", "other/a.md")
    assert after.paths("leaf", "a") == ("other/a.md",)
    assert view(before) == view(SourcePages(source, entries(a, b, c)))  # the old is untouched


# -- progress of a build, for ListSources ---------------------------------------------------------


def test_a_build_reports_its_progress_per_source_while_it_reads(tmp_path, corpus, monkeypatch):
    import threading

    settings = load_settings(write_fastapi_config(tmp_path / "progress.toml", corpus))
    settings.state_dir = tmp_path / "progress"
    settings.build_workers = 1
    engine = LocalEngine(settings, load_registry())
    code = engine.catalog.by_name["code"]
    expected = len(code.list_files())
    read, release = [], threading.Event()
    load = code.load

    def slow_load(path):
        read.append(path)
        if len(read) == 3:
            release.wait(60)  # hold the build with three code files read
        return load(path)

    monkeypatch.setattr(code, "load", slow_load)
    builder = threading.Thread(target=engine.indexer.load_or_build)
    builder.start()
    try:
        deadline = time.monotonic() + 60
        while len(read) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        reports = {r.name: r for r in engine.list_sources()}
        assert (reports["code"].build_files_total, reports["code"].build_files_done) == (
            expected,
            2,
        )
        assert reports["code"].state == "loading"
        # The Markdown sources were read before the code, completely.
        en = reports["en"]
        assert en.build_files_total == en.build_files_done > 0
    finally:
        release.set()
        builder.join(30)
    reports = {r.name: r for r in engine.list_sources()}
    assert all((r.build_files_total, r.build_files_done) == (0, 0) for r in reports.values())
    assert reports["code"].state == "ready" and reports["code"].document_count == expected


def test_list_sources_carries_build_progress_to_the_wire_and_the_command():
    from scriptorium.cli import format_sources
    from scriptorium.domain.model import Corpus
    from scriptorium.domain.outcomes import SourceReport
    from scriptorium.grpc import convert

    report = SourceReport(
        name="code",
        kind="code",
        state="loading",
        document_count=0,
        block_count=0,
        generation=0,
        indexed_at=None,
        last_error="",
        source_class="product",
        root="/src",
        bytes=0,
        corpus=Corpus.CODE,
        build_files_total=91200,
        build_files_done=1234,
    )
    response = convert.list_sources_response([report], "test")
    status = response.sources[0]
    assert (status.build_files_total, status.build_files_done) == (91200, 1234)
    row = format_sources(response).splitlines()[1].split()
    assert row[:6] == ["code", "code", "loading", "0", "0", "1234/91200"]
    # ... and to agents through the MCP bridge's list_sources.
    from scriptorium.mcp import shapes

    listed = shapes.sources_out(response).model_dump(mode="json", exclude_none=True)
    assert listed["sources"][0]["building"] == {"files_total": 91200, "files_done": 1234}
    assert listed["sources"][0]["state"] == "loading"


def test_small_updates_prune_the_blob_store_only_now_and_then(tmp_path, corpus):
    engine = engine_over(tmp_path, corpus, "blobs")
    page = corpus / "docs/en/docs/tutorial/security/first-steps.md"
    original = page.read_text("utf-8")
    rel = {"en": {"tutorial/security/first-steps.md"}}

    def blob_of_page() -> str:
        return (
            engine.indexer.snapshot.manifest.sources["en"]
            .files["tutorial/security/first-steps.md"]
            .blob
        )

    first = blob_of_page()
    for i in range(4):  # four more generations: the first version's is dropped (3 are kept)
        page.write_text(original + f"\nEdit number {i}.\n", "utf-8")
        assert engine.indexer.reconcile(rel) is not None
    assert engine.indexer.store.blobs.exists(first)  # unreferenced, but left for the next pruning
    engine.indexer._blobs_pruned_at = float("-inf")  # as if a minute had passed
    page.write_text(original + "\nThe last edit.\n", "utf-8")
    assert engine.indexer.reconcile(rel) is not None
    assert blob_of_page() != first
    assert not engine.indexer.store.blobs.exists(first)
    assert engine.indexer.store.blobs.exists(blob_of_page())


def test_a_burst_of_events_is_followed_by_a_listing_and_a_few_by_a_partial_look(
    tmp_path, corpus, monkeypatch
):
    engine = engine_over(tmp_path, corpus, "burst")
    root = str(engine.catalog.by_name["en"].root)
    burst = {f"{root}/page-{i}.md" for i in range(retrieval.LIST_AFTER_EVENTS)}
    batches = [set(), {f"{root}/one.md"}, burst]

    async def scripted(directories):
        for batch in batches:
            yield batch
        await asyncio.sleep(3600)

    monkeypatch.setattr(retrieval, "event_batches", scripted)
    seen = []
    monkeypatch.setattr(engine.indexer, "reconcile", lambda changed=None: seen.append(changed))

    async def run() -> None:
        task = asyncio.create_task(engine.watch.run())
        while len(seen) < 3:
            await asyncio.sleep(0.01)
        engine.watch.stopping.set()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(run(), 60))
    first_listing, partial, after_burst = seen[:3]
    assert first_listing is None  # the first batch: a listing covers the time before the watch
    assert partial["en"] == {"one.md"}
    assert after_burst is None
