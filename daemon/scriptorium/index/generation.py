"""Versioned, checksummed index generations on disk.

Kept whole past 500 lines: writing, finding, verifying and pruning generations share one
writer lock and one numbering. A generation is a directory ``generations/gen-NNNNNN`` holding
a tantivy index and a manifest, written under a temporary name and renamed into place only
once complete, so a crash never leaves a half generation that looks usable; the manifest
carries per-file checksums and a checksum of itself, so a corrupted generation is refused at
load and an older one serves.

Generations are immutable. An incremental update writes a *new* generation whose tantivy files
are hard links to the previous one's (tantivy never rewrites a segment file in place), plus the
changed documents, then the engine swaps to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import tantivy

from scriptorium import faults
from scriptorium.cancel import BuildCancelled, build_checkpoint
from scriptorium.domain.model import SourceDocument
from scriptorium.index import schema as S
from scriptorium.index import verify as checks
from scriptorium.index.blobwriter import BlobWriter
from scriptorium.index.blocktable import BLOCK_TABLE_FILE
from scriptorium.index.failures import (
    CorruptGenerationError,
    GenerationWriteError,
    megabytes,
    write_failure,
)
from scriptorium.index.files import fsync_dir, linked_digest, sha256_file, write_durable
from scriptorium.index.leases import Lease, leased
from scriptorium.index.lifeline import refuse_in_helper_start
from scriptorium.index.locks import exclusive_lock
from scriptorium.index.manifest import (  # noqa: F401 (also imported from here)
    FILES_TABLE,
    FORMAT_VERSION,
    FileEntry,
    Manifest,
    SourceEntry,
    TableFragments,
)
from scriptorium.index.pack import PACK_FILE, CorruptPackError, PackRecords
from scriptorium.index.readonly import open_read_only, writable
from scriptorium.index.resume import Kept, ProgressKept, kept_dirs, kept_name, write_record
from scriptorium.index.store import BlobStore, blob_name
from scriptorium.index.texts import StoredDocument

log = logging.getLogger(__name__)

MANIFEST = "MANIFEST.json"
# The sha256 of the manifest file's bytes: checking it costs one hash over the file, where
# the canonical checksum inside re-encodes every file table (seconds at 90,000 files).
MANIFEST_DIGEST = "MANIFEST.sha256"
_PREFIX = "gen-"
_TMP_PREFIX = ".tmp-"
_LOCK_FILES = {".tantivy-writer.lock", ".tantivy-meta.lock"}
WRITER_LOCK = "writer.lock"


def block_id(source: str, path: str, content_hash: str, index: int) -> int:
    """A 63-bit id for one block, stored as a tantivy fast field and mapped back in memory."""
    digest = hashlib.blake2b(
        f"{source}\x1f{path}\x1f{content_hash}\x1f{index}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass(slots=True)
class Change:
    """What a new generation changes relative to its parent."""

    removed: list[tuple[str, str]] = field(default_factory=list)  # (source, path)
    # Each document as it came, or once written its stored record (its text dropped).
    added: list[SourceDocument] = field(default_factory=list)
    # The bytes of the files behind ``added``, counted as they come (a failed write says
    # what it needed without reading texts the stored records no longer hold).
    added_bytes: int = 0


# One step of a streamed write: a document to add, or the (source, path) of one to remove.
Step = SourceDocument | tuple[str, str]


@dataclass(frozen=True, slots=True)
class Finish:
    """What a streamed write needs once its steps are over: the new generation's complete
    file table, and its document pack and block table (each made when asked)."""

    sources: dict[str, SourceEntry]
    pack: Callable[[], bytes] | None = None
    block_table: Callable[[], bytes] | None = None


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a streamed write is of, besides its steps."""

    parent: Manifest | None
    change: Change
    extractors: str
    tokens_for: Callable
    stop: Callable[[], bool] | None
    encoded_for: Callable[[SourceDocument], bytes | None]
    # Given the steps applied when a stop came, what to keep of them (``index/resume.py``);
    # None: a stopped write keeps nothing.
    keep: Callable[[list[Step]], Kept | None] | None = None
    # What the write keeps of a document once its blob and blocks are handed on (its stored
    # record, text dropped): a build then holds no document's text past its own step.
    settle: Callable[[SourceDocument], SourceDocument] = lambda doc: doc


class _NothingChanged(Exception):
    """A streamed write whose ``finish()`` found nothing to write: what was begun goes."""


_NO_STEP = object()


def _chained(first: Step, rest: Iterator[Step]) -> Iterator[Step]:
    yield first
    yield from rest


# The tantivy writer's indexing budget when none is given (``[server] build_memory_mb`` gives
# it, ``writer_heap_bytes``). A write that fills it is flushed as a segment, and a search visits
# every segment with its own top-k pass: at 64 MB a 420 MB corpus (608,790 blocks) was written
# as 8 segments and its tantivy query took about 25 % longer than over one. The arena grows
# only as a write needs it, so a small write costs no more memory.
WRITER_HEAP_BYTES = 1_000_000_000
# tantivy refuses a writer with less than this per indexing thread.
MIN_WRITER_HEAP_BYTES = 15_000_000
# The share of a build's memory bound given to the writer's arena. tantivy holds about 1.75
# times its arena while writing (the arena, then the segment it serialises), and the building
# process about 250 MB of its own (the interpreter, documents in flight, the new generation's
# tables): over 13,741 DevDocs pages a 100 MB arena peaked at 426 MB, a 200 MB one at 599 MB.
WRITER_HEAP_SHARE = 0.25


def writer_heap_bytes(build_memory_mb: int) -> int:
    """The tantivy writer's arena for a build bounded to ``build_memory_mb`` (0: no bound, the
    default arena)."""
    if build_memory_mb <= 0:
        return WRITER_HEAP_BYTES
    share = int(build_memory_mb * 1_000_000 * WRITER_HEAP_SHARE)
    return max(MIN_WRITER_HEAP_BYTES, min(WRITER_HEAP_BYTES, share))


class GenerationStore:
    """All generations and the shared blob store under one state directory."""

    def __init__(
        self, state_dir: Path, *, read_only: bool = False, writer_heap: int = WRITER_HEAP_BYTES
    ) -> None:
        self.state_dir = state_dir
        # The tantivy writer's arena of every write (see ``writer_heap_bytes``).
        self.writer_heap = writer_heap
        # A reader: it serves what is there and writes no generation, blob or partial. So is
        # any store whose directory this process cannot write (a read-only mount).
        self.read_only = read_only or (state_dir.is_dir() and not writable(state_dir))
        # The generation this process serves, named for other processes' pruning.
        self._lease = Lease(state_dir)
        self.generations_dir = state_dir / "generations"
        self.blobs = BlobStore(state_dir / "blobs")
        # Manifests this process wrote or read, by generation (generations are immutable):
        # pruning after every update would otherwise re-read each one from disk. Only pruning
        # reads this table (it needs the blob names, not a verification).
        self._manifests: dict[int, Manifest] = {}
        self._fragments = TableFragments()
        # The highest generation this process set aside: its number is not given again.
        self._retired = 0
        # Generations that live under another name than ``gen-NNNNNN`` (a kept partial one
        # a build continues from, ``index/resume.py``).
        self._located: dict[int, Path] = {}

    # -- one writer at a time ---------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self, *, wait: bool = True) -> Iterator[bool]:
        """Hold the state directory's writer lock (an advisory ``flock`` on ``writer.lock``).

        Writing a generation, pruning and clearing partial generations happen under it, so two
        processes on one state directory (a watching daemon and an ``index build``, or a daemon
        starting while another writes) never number two generations alike, never prune blobs
        the other has just written, and never clear the other's half-written generation.
        Yields True when held; with ``wait=False`` yields False at once if another process
        holds it. Where the directory cannot hold the lock file (read only), nothing is
        locked: nothing can be written there either.
        """
        refuse_in_helper_start()  # its parent holds this lock while it waits for the helper
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
        except OSError:
            yield True
            return
        with exclusive_lock(self.state_dir / WRITER_LOCK, wait=wait) as held:
            yield held

    def hold(self, generation: int) -> None:
        """Name ``generation`` as the one this process serves: no writer prunes it (or the
        blobs it names) while this process lives. Taken before the generation is opened."""
        if self.state_dir.is_dir():
            self._lease.hold([generation])

    def release(self) -> None:
        """This process serves nothing from here any more (its shutdown)."""
        self._lease.release()

    # -- discovery ------------------------------------------------------------------------

    def generation_dir(self, generation: int) -> Path:
        located = self._located.get(generation)
        if located is not None:
            return located
        return self.generations_dir / f"{_PREFIX}{generation:06d}"

    def locate(self, generation: int, path: Path) -> None:
        """Find ``generation`` at ``path`` (a kept partial generation, never served)."""
        self._located[generation] = path

    def forget(self, generation: int) -> None:
        self._located.pop(generation, None)
        self._manifests.pop(generation, None)

    def drop_kept(self) -> None:
        """Remove every kept partial generation (a build that lists every root has landed:
        what they held is served, or continued a generation that no longer serves)."""
        with self.writing():
            for generation, path in kept_dirs(self.generations_dir):
                self.forget(generation)
                shutil.rmtree(path, ignore_errors=True)

    def complete_generations(self) -> list[int]:
        """Generation numbers with a directory in place, newest first."""
        if not self.generations_dir.is_dir():
            return []
        found = []
        for entry in self.generations_dir.iterdir():
            if entry.name.startswith(_PREFIX) and entry.is_dir():
                try:
                    found.append(int(entry.name[len(_PREFIX) :]))
                except ValueError:
                    continue
        return sorted(found, reverse=True)

    def cleanup_partials(self) -> int:
        """Remove generations that a crash left half written. Call only at start-up.

        Skipped while another process holds the writer lock: its partial generation is alive.
        """
        if self.read_only or not self.generations_dir.is_dir():
            return 0
        with self.writing(wait=False) as held:
            if not held:
                log.info("another process is writing this state directory; partials kept")
                return 0
            removed = 0
            for entry in self.generations_dir.iterdir():
                if entry.name.startswith(_TMP_PREFIX):
                    shutil.rmtree(entry, ignore_errors=True)
                    removed += 1
                    log.warning("removed a partial index generation left by an interrupted build")
            return removed

    def discard(self, generation: int) -> None:
        """Set a refused generation aside (call under the writer lock): it becomes a partial,
        never served again and removed at the next start, while files it has open stay valid."""
        name = f"{_TMP_PREFIX}{generation:06d}-refused-{uuid.uuid4().hex[:8]}"
        target = self.generations_dir / name
        with contextlib.suppress(OSError):
            os.rename(self.generation_dir(generation), target)
        self._manifests.pop(generation, None)
        self._retired = max(self._retired, generation)

    def load_manifest(self, generation: int, *, verify: bool = True) -> Manifest:
        """Read and verify a generation's manifest: the sha256 of its bytes, the sizes of its
        index files and the checksums of the small ones (``index/verify.py``); the
        large ones and the file tables are checked by :meth:`verify_rest` once it serves.

        ``verify=False`` only parses it, for pruning: pruning reads older generations to keep
        the blobs they name, and a damaged manifest can at worst keep a few blobs too many
        (it is refused whenever it would be served). A manifest of another format is returned
        parsed, unverified: the caller does not serve it.
        """
        gen_dir = self.generation_dir(generation)
        try:
            raw = (gen_dir / MANIFEST).read_bytes()
            data = json.loads(raw)
            if data.get("format_version") != FORMAT_VERSION:
                return Manifest.from_json(data)
            manifest = Manifest.from_json(
                data, lambda name, where: checks.read_table(gen_dir, generation, name, where)
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptGenerationError(
                f"generation {generation}: unreadable manifest ({exc})"
            ) from None
        if not verify:
            return manifest
        try:
            recorded = (gen_dir / MANIFEST_DIGEST).read_text("ascii").strip()
        except (OSError, ValueError):
            raise CorruptGenerationError(
                f"generation {generation}: manifest checksum missing"
            ) from None
        manifest.checksum = hashlib.sha256(raw).hexdigest()
        if manifest.checksum != recorded:
            raise CorruptGenerationError(f"generation {generation}: manifest checksum mismatch")
        if manifest.generation != generation:
            raise CorruptGenerationError(f"generation {generation}: manifest names another")
        checks.opened(gen_dir, manifest)
        self._manifests[generation] = manifest
        return manifest

    def verify_rest(
        self, manifest: Manifest, stop: Callable[[], bool] | None = None
    ) -> tuple[str, str] | None:
        """What opening ``manifest``'s generation did not check (see ``index/verify.py``)."""
        return checks.rest(self.generation_dir(manifest.generation), manifest, stop)

    def read_pack(self, generation: int) -> PackRecords | None:
        """The document records of a verified generation, read on demand; None when it was
        written without a pack. Its bytes are checked after it serves (``verify_rest``)."""
        path = self.generation_dir(generation) / "index" / PACK_FILE
        try:
            handle = path.open("rb")
        except FileNotFoundError:
            return None
        try:
            return PackRecords.of_file(handle)
        except (CorruptPackError, OSError) as exc:
            handle.close()
            raise CorruptGenerationError(f"generation {generation}: {exc}") from None

    def read_block_table(self, generation: int) -> bytes | None:
        """A verified generation's stored block table; None when it was written without one
        (its checksum was checked with the index files)."""
        try:
            return (self.generation_dir(generation) / "index" / BLOCK_TABLE_FILE).read_bytes()
        except FileNotFoundError:
            return None

    def open_index(self, generation: int) -> tantivy.Index:
        index_dir = self.generation_dir(generation) / "index"
        if not writable(index_dir):  # tantivy would make its lock file there
            return open_read_only(index_dir)
        return tantivy.Index.open(str(index_dir))

    # -- writing --------------------------------------------------------------------------

    def write(
        self,
        *,
        parent: Manifest | None,
        change: Change,
        sources: dict[str, SourceEntry],
        extractors: str,
        tokens_for,
        stop: Callable[[], bool] | None = None,
        pack: Callable[[], bytes] | None = None,
        block_table: Callable[[], bytes] | None = None,
    ) -> Manifest:
        """Write a new generation = ``parent`` + ``change``; returns its verified manifest.

        ``sources`` is the complete file table of the new generation. ``tokens_for(doc,
        block)`` returns the (body, heading, path) token strings for one block. ``pack()``
        gives the generation's document pack (see ``index/pack.py``), written beside the
        tantivy files and checksummed with them; ``block_table()`` likewise gives its block
        table (``index/blocktable.py``). The rest is :meth:`write_streamed`'s.
        """

        def steps() -> Iterator[Step]:
            yield from change.removed
            yield from change.added

        manifest = self.write_streamed(
            parent=parent,
            change=change,
            extractors=extractors,
            steps=steps(),
            tokens_for=tokens_for,
            finish=lambda: Finish(sources, pack, block_table),
            stop=stop,
        )
        assert manifest is not None  # finish() always gives a generation to write
        return manifest

    def write_streamed(
        self,
        *,
        parent: Manifest | None,
        change: Change,
        extractors: str,
        steps: Iterable[Step],
        tokens_for,
        finish: Callable[[], Finish | None],
        stop: Callable[[], bool] | None = None,
        encoded_for: Callable[[SourceDocument], bytes | None] = lambda doc: None,
        keep: Callable[[list[Step]], Kept | None] | None = None,
        settle: Callable[[SourceDocument], SourceDocument] = lambda doc: doc,
    ) -> Manifest | None:
        """Write a new generation from ``parent`` as ``steps`` arrive; returns its verified
        manifest, or None when there was nothing to write.

        Each step is a document to add (its blob stored, its blocks indexed) or a ``(source,
        path)`` whose blocks go; a document that replaces another comes after its removal.
        Steps are taken while they are made, so a build indexes one file while it loads the
        next. ``change`` is what the steps amount to, filled in by whoever makes them
        (failures name its sources). Once the steps are over, ``finish()`` gives the new
        generation's file table and tables, or None when nothing changed: nothing is written
        then if no step came either, and whatever was begun is removed otherwise.

        ``encoded_for(doc)`` gives a document's blob when it was encoded already (by a
        build helper), else None.

        Written under the writer lock (see :meth:`writing`). When ``stop()`` turns true the
        write ends with ``BuildCancelled`` at its next step or before its commit, leaving
        nothing behind; a file-system failure ends it with ``GenerationWriteError``,
        likewise. Given ``keep``, a stopped write keeps what ``keep(applied)`` says of the
        steps it had applied, as a partial generation (``index/resume.py``), and ends with
        ``ProgressKept``. ``settle(doc)`` is called once a document's blob and blocks are
        handed on, and what it returns is what ``keep`` is given of it.
        """
        steps = iter(steps)
        plan = _Plan(parent, change, extractors, tokens_for, stop, encoded_for, keep, settle)
        try:
            with self.writing():
                first = next(steps, _NO_STEP)
                if first is _NO_STEP:
                    final = finish()
                    return None if final is None else self._write(plan, (), lambda: final)
                return self._write(plan, _chained(first, steps), finish)
        finally:
            close = getattr(steps, "close", None)
            if close is not None:
                close()  # a write that failed half-way: whatever makes the steps stops now

    def _write(
        self, plan: _Plan, steps: Iterable[Step], finish: Callable[[], Finish | None]
    ) -> Manifest | None:
        parent, change, stop = plan.parent, plan.change, plan.stop
        generation = self._next_number()
        tmp = self.generations_dir / f"{_TMP_PREFIX}{generation:06d}-{uuid.uuid4().hex[:8]}"
        index_dir = tmp / "index"
        blob_writer: BlobWriter | None = None
        writer = None
        kept: Kept | None = None
        keeping = False  # a stop came, and what was applied is being kept
        try:
            index_dir.mkdir(parents=True)
            if parent is not None:
                self._link_index(self.generation_dir(parent.generation) / "index", index_dir)
                index = tantivy.Index.open(str(index_dir))
            else:
                index = tantivy.Index(S.build_schema(), path=str(index_dir))
            writer = index.writer(heap_size=self.writer_heap, num_threads=1)
            blob_writer = BlobWriter(self.blobs)
            applied: list[Step] = []
            with blob_writer as blobs:
                stopped = self._apply(writer, blobs, steps, plan, applied)
                if not stopped:
                    final = finish()
                    if final is None:
                        raise _NothingChanged
                    try:
                        faults.pause("build.write", stop)
                        build_checkpoint(stop)  # the last moment a build can stop cheaply
                    except BuildCancelled:
                        if plan.keep is None:
                            raise
                        stopped = True
                if stopped:  # kept: ``keep`` says what its tables are
                    assert plan.keep is not None
                    keeping = True
                    kept = plan.keep(applied)
                    if kept is None:
                        raise BuildCancelled()
                    final = kept.finish
                # The commit runs without the GIL, so the last blobs are written meanwhile.
                writer.commit()
                finished, writer = writer, None
                finished.wait_merging_threads()
            manifest = self._seal(tmp, generation, plan, final, bool(change.added or kept))
            self._publish(tmp, generation, manifest, kept)
        except BaseException as exc:
            failure = write_failure(exc, self.generations_dir)  # before the partial goes
            if writer is not None:
                # Stop the writer's threads first: one still running writes its files (such as
                # .managed.json) back into the directory about to be removed.
                with contextlib.suppress(Exception):
                    writer.rollback()
                with contextlib.suppress(Exception):
                    writer.wait_merging_threads()
                writer = None
            shutil.rmtree(tmp, ignore_errors=True)
            if blob_writer is not None:  # its writes are over (see BlobWriter.__exit__)
                blob_writer.discard()
            if isinstance(exc, _NothingChanged):
                return None
            if keeping and not isinstance(exc, BuildCancelled):
                # A stop still stops: what could not be kept goes, as it did before.
                why = failure[0] if failure is not None else repr(exc)
                log.warning("could not keep the stopped build's progress: %s", why)
                raise BuildCancelled() from exc
            if failure is None:
                raise
            raise self._write_error(generation, change, *failure) from exc
        if kept is not None:
            self._retired = max(self._retired, generation)
            raise ProgressKept(generation, kept.record)
        return manifest

    def _publish(self, tmp: Path, generation: int, manifest: Manifest, kept: Kept | None) -> None:
        """Rename a sealed generation into place: one to serve, or (``kept``) the partial a
        stopped build leaves for the next to continue from, replacing any older one."""
        if kept is not None:
            write_record(tmp, kept.record)
            fsync_dir(tmp)
            for _, older in kept_dirs(self.generations_dir):
                shutil.rmtree(older, ignore_errors=True)
            os.rename(tmp, self.generations_dir / kept_name(generation))
        else:
            os.rename(tmp, self.generation_dir(generation))
        fsync_dir(self.generations_dir)
        if kept is None:
            self._manifests[generation] = manifest

    def _next_number(self) -> int:
        """The next generation's number: past every generation, kept partial or set aside."""
        existing = self.complete_generations()
        kept = kept_dirs(self.generations_dir)
        return max(existing[0] if existing else 0, kept[0][0] if kept else 0, self._retired) + 1

    def _apply(
        self, writer, blobs: BlobWriter, steps: Iterable[Step], plan: _Plan, applied: list[Step]
    ) -> bool:
        """Index ``steps``; True when a stop came and ``plan`` keeps what was applied (listed
        in ``applied``), else a stop raises ``BuildCancelled``."""
        documents = 0
        try:
            for step in steps:
                build_checkpoint(plan.stop)
                if isinstance(step, tuple):
                    writer.delete_documents_by_term(S.DOC, S.doc_term(*step))
                else:
                    blobs.put(blob_name(step, plan.extractors), step, plan.encoded_for(step))
                    self._add_blocks(writer, step, plan.tokens_for)
                    step = plan.settle(step)
                    documents += 1
                    faults.pause_counted("build.files", documents, plan.stop)
                if plan.keep is not None:
                    applied.append(step)
        except BuildCancelled:
            if plan.keep is None or not any(not isinstance(s, tuple) for s in applied):
                raise
            return True
        return False

    def _seal(
        self, tmp: Path, generation: int, plan: _Plan, final: Finish, added: bool
    ) -> Manifest:
        """Write a committed generation's pack, block table, file tables and manifest into
        ``tmp``, each durable before the manifest names it; ``added``: new blobs were written."""
        parent = plan.parent
        index_dir = tmp / "index"
        if final.pack is not None:
            (index_dir / PACK_FILE).write_bytes(final.pack())
        if final.block_table is not None:
            (index_dir / BLOCK_TABLE_FILE).write_bytes(final.block_table())
        index_files = {}
        for path in sorted(index_dir.rglob("*")):
            if path.is_file() and path.name not in _LOCK_FILES:
                rel = path.relative_to(index_dir).as_posix()
                stat = path.stat()
                digest = linked_digest(stat, rel, parent, self._index_dir(parent))
                index_files[rel] = [stat.st_size, digest or sha256_file(path)]
        manifest = Manifest(
            generation=generation,
            created_at=time.time(),
            parent=parent.generation if parent else 0,
            extractors=plan.extractors,
            sources=final.sources,
            index_files=index_files,
        )
        text, tables = manifest.serialize(self._fragments)
        manifest.checksum = hashlib.sha256(text.encode("utf-8")).hexdigest()
        write_durable(tmp / FILES_TABLE, tables)
        if added:
            os.sync()  # blobs and index files reach the disk before the manifest names them
        manifest_tmp = tmp / (MANIFEST + ".tmp")
        write_durable(manifest_tmp, text.encode("utf-8"))
        os.replace(manifest_tmp, tmp / MANIFEST)
        write_durable(tmp / MANIFEST_DIGEST, (manifest.checksum + "\n").encode("ascii"))
        fsync_dir(tmp)
        return manifest

    def _write_error(
        self, generation: int, change: Change, why: str, disk_full: bool
    ) -> GenerationWriteError:
        """One sentence on a failed write: the sources, the directory, the reason, the sizes.

        Free space is measured after the partial generation is removed: it is what the build
        had to work with. The new text is a floor for what the generation needs (the index and
        the stored documents take about as much again).
        """
        names = tuple(
            dict.fromkeys([d.source for d in change.added] + [s for s, _ in change.removed])
        )
        if not names:
            which = ""
        elif len(names) == 1:
            which = f" for source {names[0]!r}"
        else:
            which = " for sources " + ", ".join(repr(n) for n in names)
        message = (
            f"cannot write index generation {generation}{which} to {self.generations_dir}: {why}"
        )
        if disk_full:
            try:
                free_bytes: int | None = shutil.disk_usage(self.state_dir).free
                free = megabytes(free_bytes) + " free"
            except OSError:
                free_bytes, free = None, "free space unknown"
            text = change.added_bytes or sum(
                len(d.text.encode("utf-8"))
                for d in change.added
                if not isinstance(d, StoredDocument)
            )
            files = len(change.added)
            if free_bytes is not None and free_bytes > 2 * text:
                # The text is not what did not fit: something else filled the disk for a
                # moment, or a quota applies to the state directory.
                message += (
                    f" ({free} now, more than twice the {megabytes(text)} of new text: the disk "
                    "filled up while writing, or a quota applies to the state directory)"
                )
            else:
                needed = (
                    f"the new text of {files} file{'s' if files != 1 else ''} alone is "
                    f"{megabytes(text)}; "
                    if files
                    else ""
                )
                message += f" ({needed}{free})"
        return GenerationWriteError(message, names)

    def _index_dir(self, manifest: Manifest | None) -> Path | None:
        return self.generation_dir(manifest.generation) / "index" if manifest else None

    @staticmethod
    def _link_index(src: Path, dst: Path) -> None:
        for path in src.iterdir():
            if path.is_file() and path.name not in _LOCK_FILES | {PACK_FILE, BLOCK_TABLE_FILE}:
                os.link(path, dst / path.name)

    @staticmethod
    def _add_blocks(writer, doc: SourceDocument, tokens_for) -> None:
        term = S.doc_term(doc.source, doc.path)
        for i, block in enumerate(doc.blocks):
            fields = tokens_for(doc, block)
            body, heading, path = fields[:3]
            record = tantivy.Document(
                body=body,
                heading=heading,
                path=path,
                source=doc.source,
                corpus=str(doc.corpus),
                doc=term,
            )
            if block.symbol:
                record.add_text(S.SYMBOL, block.symbol.casefold())
            if len(fields) > 3:  # the block's ranking features (``index/fields.py``)
                record.add_bytes(S.FEATURES, fields[3])
            record.add_unsigned(S.BID, block_id(doc.source, doc.path, doc.content_hash, i))
            writer.add_document(record)

    # -- retention ------------------------------------------------------------------------

    def prune(self, keep: int, in_use: Iterable[int] = (), *, blobs: bool = True) -> None:
        """Keep the newest ``keep`` generations (and any in use); drop unreferenced blobs.

        ``blobs=False`` leaves the blob store alone: listing it costs in proportion to the
        corpus (0.16 s for 91,000 blobs), so frequent small updates prune it only now and then.
        Runs under the writer lock: another writer's new blobs are referenced by no manifest
        until its generation is complete.
        """
        with self.writing():
            self._prune(keep, in_use, blobs=blobs)

    def _prune(self, keep: int, in_use: Iterable[int], *, blobs: bool) -> None:
        generations = self.complete_generations()
        # Besides the newest: what this process and every live reader serve (``leases.py``).
        protected = set(generations[:keep]) | set(in_use) | leased(self.state_dir)
        for generation in generations:
            if generation not in protected:
                shutil.rmtree(self.generation_dir(generation), ignore_errors=True)
        self._manifests = {g: m for g, m in self._manifests.items() if g in protected}
        if not blobs:
            return
        referenced: set[str] = set()
        # A kept partial generation's blobs too: a restart continues from it.
        for generation, path in kept_dirs(self.generations_dir):
            if generation not in generations:
                self._located.setdefault(generation, path)
                protected.add(generation)
        for generation in protected:
            try:
                manifest = self._manifests.get(generation)
                if manifest is None:
                    manifest = self.load_manifest(generation, verify=False)
                    self._manifests[generation] = manifest
            except CorruptGenerationError:
                continue
            for source in manifest.sources.values():
                referenced.update(f.blob for f in source.files.values())
        if referenced:
            self.blobs.prune(referenced)
