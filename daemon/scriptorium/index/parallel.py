"""Reading, cutting and tokenizing changed files in several processes, for large builds.

A build is CPU-bound in Python (extractors and the tokenizer), so one process uses one core.
For a build with many changed files, helper processes load the files — read, cut into
blocks, and tokenized — and the building process only writes them: the tokenizer's memos (about
200 MB over a large tree) and the interpreter's time then stay out of the process that holds
the writer's arena. The results are handed on in the original order as soon as each is
complete, so the building process indexes the first files while the helpers load the next,
and the generation is the same as a serial build's. A helper's results
come back through a file (see ``_Helpers``).

Helpers are *spawned* (fresh interpreters), never forked: the daemon builds while gRPC's
threads are running, and a fork would copy their locks. Each helper loads the plugins with
the caller's ``load_plugins`` (a module-level function, so it reaches the helper by name: the
engine hands down the plugin manager's loader, and the index never imports it) and builds the
sources it is given; a helper whose extractors differ from the caller's ``fingerprint``
(plugins registered in code rather than through entry points) refuses, and the build carries
on in the building process alone.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import shutil
import signal
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from scriptorium import faults
from scriptorium.cancel import build_checkpoint
from scriptorium.domain.model import SourceDocument, pickled_as_call
from scriptorium.index.fields import Indexed, document_fields
from scriptorium.index.lifeline import die_with_parent
from scriptorium.index.store import encode_document
from scriptorium.sources.base import PathEscapeError, Source, SourceConfig, SourceContext

log = logging.getLogger(__name__)

# Below this many files to load, starting interpreters costs more than the helpers save.
MIN_FILES = 200
# Files per task: large enough to amortise a round trip, small enough to balance the load.
# With the files' sizes known, a task is at least CHUNK_FILES files and CHUNK_BYTES bytes (a
# page at a time of FastAPI's, about 8 KB each), at most CHUNK_MAX_FILES: 16 pages of
# tldr-pages' 500 bytes were 2 ms of a helper's work, and the helper sat idle for
# most of a build between them, waiting for the building process to hand out the next.
CHUNK_FILES = 16
CHUNK_BYTES = 128 * 1024
CHUNK_MAX_FILES = 256
MAX_AUTO_HELPERS = 3
# Chunks queued per helper: enough that a helper never waits on the building process, which
# hands out work only between the chunks it loads or writes itself.
QUEUED_PER_HELPER = 4
_STOP_POLL_S = 0.1

Item = tuple[str, str]  # (source name, path)


@dataclass(frozen=True, slots=True)
class Loaded:
    """One file as loaded for a build: the document (None if unreadable), its tokens, and,
    from a helper, its blob already encoded (the building process encodes the rest)."""

    doc: SourceDocument | None
    tokens: tuple[Indexed, ...] = ()
    blob: bytes | None = None

    __reduce__ = pickled_as_call


def helper_count(setting: int, files: int) -> int:
    """How many helper processes a build of ``files`` changed files gets (0: none).

    ``setting`` is ``[server] build_workers``, the processes that load files: 0 picks one
    per core (at most three), 1 keeps the build in one process, and a larger number is used
    as given. With helpers, they load every file and the building process only writes: it
    then holds none of the tokenizer's memos (about 200 MB over a large tree), and the
    interpreter is free for the writer rather than shared between loading and writing.
    """
    if setting == 1 or files < MIN_FILES:
        return 0
    if setting > 1:
        return setting
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = min(cores or 1, MAX_AUTO_HELPERS)
    return cores if cores > 1 else 0


def load_files(
    sources: Mapping[str, Source],
    items: Sequence[Item],
    options: Mapping[str, bool],
    encode: bool = False,
) -> list[Loaded]:
    """Load and tokenize ``items`` in this process (what every helper runs); ``encode`` also
    encodes each document's blob.

    A helper encodes: in the building process the blob thread's encoding takes the
    interpreter from the thread that writes the index, and with many small pages (tldr-pages'
    38,430) that thread waited a quarter of the build for the blob thread to keep up.
    """
    out = []
    for name, path in items:
        source = sources[name]
        try:
            doc = source.load(path)
        except (OSError, PathEscapeError):
            doc = None
        if doc is None:
            out.append(Loaded(None))
            continue
        fields = document_fields(doc, source.page_location(doc.path), options)
        out.append(Loaded(doc, fields, encode_document(doc) if encode else None))
    return out


# -- in a helper ------------------------------------------------------------------------------

_helper: dict[str, Any] = {}


class _ForeignPlugins(RuntimeError):
    """The helper's plugins are not the building process's."""


def _start_helper(
    configs: list[SourceConfig],
    options: dict[str, bool],
    load_plugins: Callable[[], Any],
    fingerprint: str,
    spool: str,
    parent: int,
) -> None:
    # A building process killed outright must not leave its helpers waiting for work forever.
    die_with_parent(parent)

    # Ctrl-C reaches the whole process group: the building process decides what stops (it
    # cancels the build and shuts the pool down); a helper must not die mid-chunk with a
    # KeyboardInterrupt traceback on the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    registry = load_plugins()
    chain = registry.extractor_chain
    if chain.fingerprint != fingerprint:
        # Said with the first task rather than raised here: a failing initializer only shows
        # as a broken pool, without the reason.
        _helper["refusal"] = "the helper processes' extractors differ from the daemon's"
        return
    context = SourceContext(extractors=chain)
    _helper["sources"] = {c.name: registry.source_factory(c.kind)(c, context) for c in configs}
    _helper["options"] = options
    _helper["spool"] = spool


def _load_chunk(items: Sequence[Item], encode: bool) -> str:
    """Load ``items`` (``encode``: their blobs too); returns the file their results were
    written to (see ``_Helpers``)."""
    if "refusal" in _helper:
        raise _ForeignPlugins(_helper["refusal"])
    faults.pause("build.helper")
    loaded = load_files(_helper["sources"], items, _helper["options"], encode)
    path = os.path.join(_helper["spool"], f"{uuid.uuid4().hex}.pickle")
    with open(path, "wb") as handle:
        pickle.dump(loaded, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path


# -- in the building process ------------------------------------------------------------------


def load_shared(items: Sequence[Item], **how: Any) -> list[Loaded]:
    """``Loaded`` for every item, in order: :func:`load_in_order` (its keywords), collected."""
    return [loaded for chunk in load_in_order(items, **how) for loaded in chunk]


def load_in_order(
    items: Sequence[Item],
    *,
    sources: Mapping[str, Source],
    options: Mapping[str, bool],
    fingerprint: str,
    load_plugins: Callable[[], Any],
    helpers: int,
    on_fallback: Callable[[str], None] = lambda why: None,
    on_loaded: Callable[[Sequence[Item]], None] = lambda items: None,
    stop: Callable[[], bool] | None = None,
    sizes: Mapping[Item, int] | None = None,
) -> Iterator[list[Loaded]]:
    """``Loaded`` for every item, chunk by chunk in the items' order, shared between this
    process and ``helpers``, each chunk handed on as soon as it and every chunk before it are
    loaded: the caller writes one while the helpers load the next.

    Chunks go to the helpers in order, and this process waits for the next in order rather
    than load one itself: loading here made the building process the largest of the build
    (the tokenizer's memos beside the writer's arena: 880 -> 599 MB peak over 13,741 DevDocs
    pages at the same arena) for no gain in time on two cores. If the helpers cannot start
    (or refuse), ``on_fallback`` is told why and this process loads what they had not
    returned. ``on_loaded`` is told the items of every chunk
    once it is loaded, wherever it was. When ``stop()`` turns true, ``BuildCancelled`` is
    raised before the next chunk (a few files) or within a tenth of a second while the
    helpers work, and the queued chunks are dropped. ``sizes`` (bytes by item) make the
    chunks by bytes rather than by files.
    """
    chunks = _chunks(items, sizes)
    results: list[list[Loaded] | None] = [None] * len(chunks)
    front, last, ready = 0, len(chunks) - 1, 0
    pending: dict[Future, int] = {}
    pool = _helper_pool(
        items, sources, options, (load_plugins, fingerprint), helpers, on_fallback, encode=True
    )
    try:
        while ready < len(chunks):
            build_checkpoint(stop)
            if pool is not None:
                try:
                    for future in [f for f in pending if f.done()]:
                        index = pending[future]
                        results[index] = pool.result(future)
                        del pending[future]
                        on_loaded(chunks[index])
                except _LOST as exc:
                    for index in _give_up(pool, pending, exc, on_fallback):
                        build_checkpoint(stop)
                        results[index] = load_files(sources, chunks[index], options)
                        on_loaded(chunks[index])
                    pool = None
            if pool is not None:
                front = pool.hand_out(chunks, front, last, pending, ready)
            if results[ready] is not None:
                chunk, results[ready] = results[ready], None
                ready += 1
                yield chunk
            elif front <= last and pool is None:
                results[front] = load_files(sources, chunks[front], options)
                on_loaded(chunks[front])
                front += 1
            elif pending:
                # Woken now and then to notice a cancellation while the helpers work.
                wait(pending, timeout=_STOP_POLL_S, return_when=FIRST_COMPLETED)
    finally:
        if pool is not None:
            # An abandoned build (an error here, or a caller that stopped reading) drops
            # the queued chunks.
            pool.shutdown()


def _names(items: Sequence[Item]) -> list[str]:
    return list(dict.fromkeys(name for name, _ in items))


def _chunks(items: Sequence[Item], sizes: Mapping[Item, int] | None) -> list[Sequence[Item]]:
    """``items`` cut into tasks: CHUNK_FILES files each, or by bytes given their ``sizes``."""
    if sizes is None:
        return [items[i : i + CHUNK_FILES] for i in range(0, len(items), CHUNK_FILES)]
    chunks, start, total = [], 0, 0
    for end, item in enumerate(items, 1):
        total += sizes.get(item, 0)
        files = end - start
        if files >= CHUNK_MAX_FILES or (files >= CHUNK_FILES and total >= CHUNK_BYTES):
            chunks.append(items[start:end])
            start, total = end, 0
    if start < len(items):
        chunks.append(items[start:])
    return chunks


class _Helpers:
    """The helper processes of one load, and the directory their results come back through.

    A chunk's results (documents and tokens, about 0.5 MB pickled for 16 Markdown pages) are
    written to a file by the helper, and only the file's name goes through the pool's pipe.
    Sent through the pipe itself, 64 KB at a time, each piece waited for the building
    process's result thread to get the interpreter back from the threads writing the index:
    the helper spent a quarter of a 10x build blocked on the pipe, and loaded a quarter of
    the files, where it loads half through files.
    """

    def __init__(self, pool: ProcessPoolExecutor, helpers: int, spool: str, encode: bool) -> None:
        self._pool = pool
        self._encode = encode  # the blobs too: a build writes them, a push does not
        self._queued = QUEUED_PER_HELPER * helpers
        self._spool = spool

    def hand_out(
        self,
        chunks: Sequence[Sequence[Item]],
        front: int,
        back: int,
        pending: dict[Future, int],
        written: int | None = None,
    ) -> int:
        """Queue chunks ``front``.. (not past ``back``) until the helpers have their share
        waiting, recording each in ``pending``; returns the next chunk not handed out.

        Given ``written`` (the chunks the caller has taken, in order), chunks loaded and not
        taken yet count as waiting too: a writer slower than the helpers then holds a bounded
        number of loaded chunks, not every chunk the helpers got ahead by."""
        while front <= back and len(pending) < self._queued:
            if written is not None and front - written >= self._queued:
                break
            pending[self._pool.submit(_load_chunk, chunks[front], self._encode)] = front
            front += 1
        return front

    @staticmethod
    def result(future: Future) -> list[Loaded]:
        """A finished chunk's results (raises what the helper raised, or ``OSError``)."""
        path = future.result()
        with open(path, "rb") as handle:
            data = handle.read()
        os.unlink(path)
        return pickle.loads(data)

    def shutdown(self) -> None:
        """Stop the helpers, dropping queued chunks, and remove what they left behind."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._spool, ignore_errors=True)


# A helper's result that cannot be had: the chunk is loaded here instead.
_LOST = (BrokenProcessPool, _ForeignPlugins, OSError)


def _give_up(
    pool: _Helpers,
    pending: dict[Future, int],
    exc: BaseException,
    on_fallback: Callable[[str], None],
) -> list[int]:
    """The helpers are lost (``exc``): say why, stop them, and return the chunks they still
    held, for this process to load."""
    on_fallback(str(exc))
    pool.shutdown()
    lost = list(pending.values())
    pending.clear()
    return lost


def _helper_pool(
    items: Sequence[Item],
    sources: Mapping[str, Source],
    options: Mapping[str, bool],
    plugins: tuple[Callable[[], Any], str],
    helpers: int,
    on_fallback: Callable[[str], None],
    *,
    encode: bool,
) -> _Helpers | None:
    """``helpers`` loading processes set up for the sources of ``items`` (``encode``: they
    encode the blobs too); None (and ``on_fallback`` told why) when there are none or they
    cannot start."""
    if not helpers:
        return None
    try:
        spool = tempfile.mkdtemp(prefix="scriptorium-load-")
    except OSError as exc:
        on_fallback(str(exc))
        return None
    try:
        pool = ProcessPoolExecutor(
            max_workers=helpers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_helper,
            initargs=(
                [sources[n].config for n in _names(items)],
                dict(options),
                *plugins,
                spool,
                os.getpid(),
            ),
        )
    except (OSError, ValueError) as exc:
        shutil.rmtree(spool, ignore_errors=True)
        on_fallback(str(exc))
        return None
    return _Helpers(pool, helpers, spool, encode)


def load_streaming(
    items: Sequence[Item],
    *,
    sources: Mapping[str, Source],
    options: Mapping[str, bool],
    fingerprint: str,
    load_plugins: Callable[[], Any],
    helpers: int,
    on_fallback: Callable[[str], None] = lambda why: None,
) -> Iterator[list[tuple[Item, Loaded]]]:
    """``load_shared`` for a writer that sends as it goes (a push): each chunk as soon as it is
    loaded, in no set order, so the caller encodes and sends one while the helpers load the
    next, and never holds the whole tree. With no helpers (or none that start) this process
    loads every chunk itself."""
    chunks = _chunks(items, None)
    front, back = 0, len(chunks) - 1
    pending: dict[Future, int] = {}
    pool = _helper_pool(
        items, sources, options, (load_plugins, fingerprint), helpers, on_fallback, encode=False
    )

    def here(index: int) -> list[tuple[Item, Loaded]]:
        return list(zip(chunks[index], load_files(sources, chunks[index], options), strict=True))

    try:
        while front <= back or pending:
            ready = [f for f in pending if f.done()]
            for future in ready:
                index = pending.pop(future)
                try:
                    yield list(zip(chunks[index], pool.result(future), strict=True))
                except _LOST as exc:
                    lost = [index, *_give_up(pool, pending, exc, on_fallback)]
                    pool = None
                    for left in lost:
                        yield here(left)
                    break
            if pool is not None:
                front = pool.hand_out(chunks, front, back, pending)
            if ready:
                continue
            if front <= back:
                index, back = back, back - 1
                yield here(index)
            elif pending:
                wait(pending, return_when=FIRST_COMPLETED)
    finally:
        if pool is not None:
            pool.shutdown()
