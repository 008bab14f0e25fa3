"""What a reconcile writes: the sources it scanned, the files that changed among them, loaded
(shared with helper processes when there are many), and the steps of the write they make.

Apart from the ``Indexer`` (which decides when a reconcile runs and serves what it wrote) so the
write's own bookkeeping reads in one place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from scriptorium.cancel import build_checkpoint
from scriptorium.domain.model import Block, FileStat, SourceDocument
from scriptorium.index.fields import Indexed, document_fields
from scriptorium.index.generation import Change, FileEntry, Manifest, SourceEntry, Step
from scriptorium.index.parallel import helper_count, load_in_order
from scriptorium.index.progress import BuildProgress
from scriptorium.index.store import blob_name
from scriptorium.sources.base import PathEscapeError, Source

# The indexer's logger: these lines are the build's ("resumed: ...", helper fallbacks).
log = logging.getLogger("scriptorium.index.builder")


@dataclass(slots=True)
class Prepared:
    """What the build helpers made beside the documents they loaded, by object identity:
    each block's fields and each document's encoded blob."""

    tokens: dict[int, Indexed] = field(default_factory=dict)
    blobs: dict[int, bytes | None] = field(default_factory=dict)
    # [files an interrupted build read before this reconcile continued it, files to read now]
    progress: list[int] = field(default_factory=lambda: [0, 0])

    def blob_for(self, doc: SourceDocument) -> bytes | None:
        return self.blobs.pop(id(doc), None)


@dataclass(slots=True)
class Scan:
    """One scanned source of a reconcile: its new file table, its old one, what is on disk.

    ``stats`` covers the whole tree, or, when ``only`` is set, just those paths (the watcher
    named them; every other file is as the old table has it).
    """

    source: Source
    table: SourceEntry
    old_files: dict[str, FileEntry]
    stats: list[FileStat]
    only: frozenset[str] | None = None
    # Blobs found damaged or missing: their files are read again from the root even when
    # the listing says they are unchanged (a repair, see ``Indexer._refuse``).
    reread: frozenset[str] = frozenset()

    def unchanged(self, entry: FileEntry | None, stat: FileStat) -> bool:
        """Whether ``stat``'s file can keep ``entry`` as it is (not changed, not damaged)."""
        return _unchanged(entry, stat) and entry.blob not in self.reread


@dataclass(slots=True)
class Listing:
    """What listing the sources found: each one's new file table (by name), the sources to
    scan, and the change begun (every file of a source whose fingerprint changed is removed)."""

    tables: dict[str, SourceEntry] = field(default_factory=dict)
    scans: list[Scan] = field(default_factory=list)
    change: Change = field(default_factory=Change)


@dataclass(slots=True)
class Tally:
    """What a reconcile's steps found besides the change itself."""

    metadata_changed: bool = False


def _unchanged(entry: FileEntry | None, stat: FileStat) -> bool:
    return entry is not None and entry.size == stat.size and entry.mtime_ns == stat.mtime_ns


def write_steps(
    scans: list[Scan],
    tables: dict[str, SourceEntry],
    base: Manifest | None,
    change: Change,
    tally: Tally,
    loaded: Iterator[tuple[tuple[str, str], SourceDocument | None]],
    fingerprint: str,
) -> Iterator[Step]:
    """The steps of a reconcile's write, made while its changed files load: each file as
    it comes, compared with its old entry, fills ``change``, ``tally`` and the new file
    ``tables`` and gives its removal and its new document, in listing order.

    A removal always comes before the document that replaces it (a tantivy delete by term
    removes only what was added before it), so the index holds what a write of the whole
    ``change`` at once would.
    """
    yield from list(change.removed)  # sources whose extractors changed: all of it goes
    for scan in scans:
        source, table, old_files = scan.source, scan.table, scan.old_files
        seen = set()
        if scan.only is not None:
            table.files = dict(old_files)
            present = {stat.path for stat in scan.stats}
            for path in scan.only:
                if path in old_files and path not in present:
                    del table.files[path]
                    change.removed.append((source.name, path))
                    yield source.name, path
            seen = old_files.keys()
        for stat in scan.stats:
            entry = old_files.get(stat.path)
            if scan.only is None:
                seen.add(stat.path)
            if scan.unchanged(entry, stat):
                table.files[stat.path] = entry
                continue
            key, doc = next(loaded)
            if key != (source.name, stat.path):
                raise RuntimeError(f"files loaded out of order: {key} for {stat.path}")
            if doc is None:
                if entry is not None:
                    table.files.pop(stat.path, None)
                    change.removed.append(key)
                    yield key
                continue
            if (
                entry is not None
                and entry.hash == doc.content_hash
                and entry.blob not in scan.reread
            ):
                tally.metadata_changed = True
                table.files[stat.path] = FileEntry(
                    entry.hash, stat.size, stat.mtime_ns, entry.blob, entry.blocks
                )
                continue
            if entry is not None:
                change.removed.append(key)
                yield key
            change.added.append(doc)
            change.added_bytes += stat.size
            # Before the step: a stopped write keeps the entries of what it applied.
            table.files[stat.path] = FileEntry(
                doc.content_hash,
                stat.size,
                stat.mtime_ns,
                blob_name(doc, fingerprint),
                len(doc.blocks),
            )
            yield doc
        for path in old_files:
            if path not in seen:
                change.removed.append((source.name, path))
                yield source.name, path
        if scan.only is not None and any(
            path in table.files and path not in old_files for path in scan.only
        ):
            # New paths went in at the end: keep the table in path order, as a listing
            # gives it (documents are served, and ties broken, in that order).
            table.files = dict(sorted(table.files.items()))
        if table.files == old_files:
            table.files = old_files  # unchanged: share the (immutable) previous table
    if base is not None:
        for name, entry in base.sources.items():
            if name not in tables:
                gone = [(name, p) for p in entry.files]
                change.removed += gone
                yield from gone


def load_changed(
    scans: list[Scan],
    prepared: Prepared,
    *,
    states: Mapping[str, Any],
    sources: Mapping[str, Source],
    token_options: Mapping[str, bool],
    build_workers: int,
    fingerprint: str,
    load_plugins: Callable[[], Any] | None,
    stop: Callable[[], bool],
) -> Iterator[tuple[tuple[str, str], SourceDocument | None]]:
    """Every changed file of ``scans`` read and cut (None when unreadable), by (source,
    path), in listing order, each as soon as it and the files before it are loaded.

    Many files are shared with helper processes and tokenized as they are loaded (their
    tokens, and the blobs the helpers encoded, go into ``prepared``); a few are only
    loaded here, and the generation writer tokenizes and encodes them.
    """
    wanted = [
        (scan.source.name, stat.path)
        for scan in scans
        for stat in scan.stats
        if not scan.unchanged(scan.old_files.get(stat.path), stat)
    ]
    sizes = {(scan.source.name, stat.path): stat.size for scan in scans for stat in scan.stats}
    progress = BuildProgress(states, wanted, sizes)
    prepared.progress[1] = len(wanted)
    if prepared.progress[0]:
        done = prepared.progress[0]
        log.info(
            "resumed: %d of %d files already done; reading the other %d",
            done,
            done + len(wanted),
            len(wanted),
        )
    helpers = helper_count(build_workers, len(wanted))
    if helpers and load_plugins is not None:
        keys = iter(wanted)
        for chunk in load_in_order(
            wanted,
            sources=sources,
            options=token_options,
            fingerprint=fingerprint,
            load_plugins=load_plugins,
            helpers=helpers,
            on_fallback=lambda why: log.warning("building without helper processes: %s", why),
            on_loaded=progress.advance,
            stop=stop,
            sizes=sizes,
        ):
            for result in chunk:
                if result.doc is not None:
                    for block, fields in zip(result.doc.blocks, result.tokens, strict=True):
                        prepared.tokens[id(block)] = fields
                    # Set even when None: an identity freed since may be reused.
                    prepared.blobs[id(result.doc)] = result.blob
                yield next(keys), result.doc
        return
    for item in wanted:
        build_checkpoint(stop)
        name, path = item
        try:
            doc = sources[name].load(path)
        except (OSError, PathEscapeError):
            doc = None
        progress.advance((item,))
        yield item, doc


def tokens_from(
    tokens: dict[int, Indexed], sources: Mapping[str, Source], token_options: Mapping[str, bool]
) -> Callable[[SourceDocument, Block], Indexed]:
    """``tokens_for`` for one write: a block's fields from ``tokens`` when a worker made
    them, else made for its whole document at once as a worker makes them (the page's
    path and shared headings tokenized once; the writer asks for a document's blocks one
    after another)."""
    made: list = [None, {}]  # the document last made, and its fields by block identity

    def tokens_for(doc: SourceDocument, block: Block) -> Indexed:
        found = tokens.pop(id(block), None)
        if found is not None:
            return found
        if made[0] is not doc:
            source = sources.get(doc.source)
            page = source.page_location(doc.path) if source else doc.path
            fields = document_fields(doc, page, token_options)
            made[:] = [doc, {id(b): f for b, f in zip(doc.blocks, fields, strict=True)}]
        return made[1][id(block)]

    return tokens_for
