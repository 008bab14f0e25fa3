"""Reading, cutting and tokenizing changed files in several processes, for large builds.

A build is CPU-bound in Python (extractors and the tokenizer), so one process uses one core.
For a build with many changed files, helper processes load a share of the files — read, cut
into blocks, and tokenized — while the building process loads files too, from the other end of
the list, so nothing waits while the helpers start. The results are put back in the original
order and the generation is the same as a serial build's.

Helpers are *spawned* (fresh interpreters), never forked: the daemon builds while gRPC's
threads are running, and a fork would copy their locks. Each helper loads the plugins from the
entry points and builds the sources it is given; a helper whose extractors differ from the
caller's (plugins registered in code rather than through entry points) refuses, and the build
carries on in the building process alone.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from scriptorium.cancel import build_checkpoint
from scriptorium.domain.model import SourceDocument
from scriptorium.index.fields import Indexed, document_fields
from scriptorium.sources.base import PathEscapeError, Source, SourceConfig, SourceContext

log = logging.getLogger(__name__)

# Below this many files to load, starting interpreters costs more than the helpers save.
MIN_FILES = 200
# Files per task: large enough to amortise a round trip, small enough to balance the load.
CHUNK_FILES = 16
MAX_AUTO_HELPERS = 3
_STOP_POLL_S = 0.1

Item = tuple[str, str]  # (source name, path)


@dataclass(frozen=True, slots=True)
class Loaded:
    """One file as loaded for a build: the document (None if unreadable) and its tokens."""

    doc: SourceDocument | None
    tokens: tuple[Indexed, ...] = ()


def helper_count(setting: int, files: int) -> int:
    """How many helper processes a build of ``files`` changed files gets (0: none).

    ``setting`` is ``[server] build_workers``, the processes that load files including the
    building one: 0 picks one per core (helpers at most three), 1 keeps the build in one
    process, and a larger number is used as given.
    """
    if setting == 1 or files < MIN_FILES:
        return 0
    if setting > 1:
        return setting - 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(0, min((cores or 1) - 1, MAX_AUTO_HELPERS))


def load_files(
    sources: Mapping[str, Source], items: Sequence[Item], options: Mapping[str, bool]
) -> list[Loaded]:
    """Load and tokenize ``items`` in this process (what every helper runs)."""
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
        out.append(Loaded(doc, document_fields(doc, source.page_location(doc.path), options)))
    return out


# -- in a helper ------------------------------------------------------------------------------

_helper: dict[str, Any] = {}


class _ForeignPlugins(RuntimeError):
    """The helper's plugins are not the building process's."""


def _start_helper(configs: list[SourceConfig], options: dict[str, bool], fingerprint: str) -> None:
    from scriptorium.plugins import load_registry

    # Ctrl-C reaches the whole process group: the building process decides what stops (it
    # cancels the build and shuts the pool down); a helper must not die mid-chunk with a
    # KeyboardInterrupt traceback on the terminal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    registry = load_registry()
    chain = registry.extractor_chain
    if chain.fingerprint != fingerprint:
        # Said with the first task rather than raised here: a failing initializer only shows
        # as a broken pool, without the reason.
        _helper["refusal"] = "the helper processes' extractors differ from the daemon's"
        return
    context = SourceContext(extractors=chain)
    _helper["sources"] = {c.name: registry.source_factory(c.kind)(c, context) for c in configs}
    _helper["options"] = options


def _load_chunk(items: Sequence[Item]) -> list[Loaded]:
    if "refusal" in _helper:
        raise _ForeignPlugins(_helper["refusal"])
    return load_files(_helper["sources"], items, _helper["options"])


# -- in the building process ------------------------------------------------------------------


def load_shared(
    items: Sequence[Item],
    *,
    sources: Mapping[str, Source],
    options: Mapping[str, bool],
    fingerprint: str,
    helpers: int,
    on_fallback: Callable[[str], None] = lambda why: None,
    on_loaded: Callable[[Sequence[Item]], None] = lambda items: None,
    stop: Callable[[], bool] | None = None,
) -> list[Loaded]:
    """``Loaded`` for every item, in order, shared between this process and ``helpers``.

    Chunks are handed to the helpers from the front of the list while this process takes
    them from the back, so the work ends when the two meet. If the helpers cannot start (or
    refuse), ``on_fallback`` is told why and this process loads what they had not returned.
    ``on_loaded`` is told the items of every chunk once it is loaded, wherever it was. When
    ``stop()`` turns true, ``BuildCancelled`` is raised before the next chunk (a few files) or
    within a tenth of a second while the helpers work, and the queued chunks are dropped.
    """
    chunks = _chunks(items)
    results: list[list[Loaded] | None] = [None] * len(chunks)
    front, back = 0, len(chunks) - 1
    pending: dict[Future, int] = {}
    pool = _helper_pool(items, sources, options, fingerprint, helpers, on_fallback)
    try:
        while front <= back or pending:
            build_checkpoint(stop)
            if pool is not None:
                try:
                    for future in [f for f in pending if f.done()]:
                        index = pending[future]
                        results[index] = future.result()
                        del pending[future]
                        on_loaded(chunks[index])
                except (BrokenProcessPool, _ForeignPlugins) as exc:
                    on_fallback(str(exc))
                    pool.shutdown(wait=True, cancel_futures=True)
                    pool = None
                    for index in pending.values():
                        build_checkpoint(stop)
                        results[index] = load_files(sources, chunks[index], options)
                        on_loaded(chunks[index])
                    pending.clear()
            # Two chunks queued per helper keep it busy while a result travels back.
            while pool is not None and front <= back and len(pending) < 2 * helpers:
                pending[pool.submit(_load_chunk, chunks[front])] = front
                front += 1
            if front <= back:
                results[back] = load_files(sources, chunks[back], options)
                on_loaded(chunks[back])
                back -= 1
            elif pending:
                # Woken now and then to notice a cancellation while the helpers work.
                wait(pending, timeout=_STOP_POLL_S, return_when=FIRST_COMPLETED)
    finally:
        if pool is not None:
            # An abandoned build (an error here) drops the queued chunks.
            pool.shutdown(wait=True, cancel_futures=True)
    return [loaded for chunk in results if chunk is not None for loaded in chunk]


def _names(items: Sequence[Item]) -> list[str]:
    return list(dict.fromkeys(name for name, _ in items))


def _chunks(items: Sequence[Item]) -> list[Sequence[Item]]:
    return [items[i : i + CHUNK_FILES] for i in range(0, len(items), CHUNK_FILES)]


def _helper_pool(
    items: Sequence[Item],
    sources: Mapping[str, Source],
    options: Mapping[str, bool],
    fingerprint: str,
    helpers: int,
    on_fallback: Callable[[str], None],
) -> ProcessPoolExecutor | None:
    """``helpers`` loading processes set up for the sources of ``items``; None (and
    ``on_fallback`` told why) when there are none or they cannot start."""
    if not helpers:
        return None
    try:
        return ProcessPoolExecutor(
            max_workers=helpers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_helper,
            initargs=([sources[n].config for n in _names(items)], dict(options), fingerprint),
        )
    except (OSError, ValueError) as exc:
        on_fallback(str(exc))
        return None


def load_streaming(
    items: Sequence[Item],
    *,
    sources: Mapping[str, Source],
    options: Mapping[str, bool],
    fingerprint: str,
    helpers: int,
    on_fallback: Callable[[str], None] = lambda why: None,
) -> Iterator[list[tuple[Item, Loaded]]]:
    """``load_shared`` for a writer that sends as it goes (a push): each chunk as soon as it is
    loaded, in no set order, so the caller encodes and sends one while the helpers load the
    next, and never holds the whole tree. With no helpers (or none that start) this process
    loads every chunk itself."""
    chunks = _chunks(items)
    front, back = 0, len(chunks) - 1
    pending: dict[Future, int] = {}
    pool = _helper_pool(items, sources, options, fingerprint, helpers, on_fallback)

    def here(index: int) -> list[tuple[Item, Loaded]]:
        return list(zip(chunks[index], load_files(sources, chunks[index], options), strict=True))

    try:
        while front <= back or pending:
            ready = [f for f in pending if f.done()]
            for future in ready:
                index = pending.pop(future)
                try:
                    yield list(zip(chunks[index], future.result(), strict=True))
                except (BrokenProcessPool, _ForeignPlugins) as exc:
                    on_fallback(str(exc))
                    if pool is not None:
                        pool.shutdown(wait=True, cancel_futures=True)
                        pool = None
                    lost = [index, *pending.values()]
                    pending.clear()
                    for left in lost:
                        yield here(left)
                    break
            while pool is not None and front <= back and len(pending) < 2 * helpers:
                pending[pool.submit(_load_chunk, chunks[front])] = front
                front += 1
            if ready:
                continue
            if front <= back:
                index, back = back, back - 1
                yield here(index)
            elif pending:
                wait(pending, return_when=FIRST_COMPLETED)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
