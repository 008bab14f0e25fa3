"""Reading, cutting and tokenizing changed files in worker processes, for large builds.

A build is CPU-bound in Python (extractors and the tokenizer), so one process uses one core.
For a build with many changed files, worker processes each load a share of the files and
return the documents with the token strings of every block; the calling process adds them to
the index in the original order, so the generation is the same as a serial build's.

Workers are *spawned* (fresh interpreters), never forked: the daemon builds while gRPC's
threads are running, and a fork would copy their locks. Each worker loads the plugins from
the entry points and builds the sources it is given; a worker whose extractors differ from
the caller's (plugins registered in code rather than through entry points) refuses, and the
build runs serially instead.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from scriptorium.index.fields import Tokens, block_tokens
from scriptorium.model import SourceDocument
from scriptorium.sources import PathEscapeError, SourceConfig, SourceContext

log = logging.getLogger(__name__)

# Below this many files to load, starting interpreters costs more than the workers save.
MIN_FILES = 200
# Files per task: large enough to amortise a round trip, small enough to balance the load.
CHUNK_FILES = 16
MAX_AUTO_WORKERS = 4


class WorkersUnavailable(RuntimeError):
    """The workers could not start or refused; the caller loads serially instead."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """One file as a worker loaded it: the document (None if unreadable) and its tokens."""

    doc: SourceDocument | None
    tokens: tuple[Tokens, ...] = ()
    error: str = ""


def worker_count(setting: int, files: int) -> int:
    """How many workers a build of ``files`` changed files gets (0 or 1 means serial).

    ``setting`` is ``[server] build_workers``: 0 picks one per core (at most four), 1 turns
    workers off, and any larger number is used as given.
    """
    if setting == 1 or files < MIN_FILES:
        return 1
    if setting > 1:
        return setting
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_AUTO_WORKERS))


# -- in the worker --------------------------------------------------------------------------

_worker: dict[str, Any] = {}


def _start_worker(configs: list[SourceConfig], options: dict[str, bool], fingerprint: str) -> None:
    from scriptorium.plugins import load_registry

    registry = load_registry()
    chain = registry.extractor_chain
    if chain.fingerprint != fingerprint:
        raise WorkersUnavailable("the worker's extractors differ from the daemon's")
    context = SourceContext(extractors=chain)
    _worker["sources"] = {c.name: registry.source_factory(c.kind)(c, context) for c in configs}
    _worker["options"] = options


def _load_chunk(items: Sequence[tuple[str, str]]) -> list[Loaded]:
    sources, options = _worker["sources"], _worker["options"]
    out = []
    for name, path in items:
        source = sources[name]
        try:
            doc = source.load(path)
        except (OSError, PathEscapeError) as exc:
            out.append(Loaded(None, (), type(exc).__name__))
            continue
        if doc is None:
            out.append(Loaded(None))
            continue
        page = source.page_location(doc.path)
        out.append(Loaded(doc, tuple(block_tokens(doc, b, page, options) for b in doc.blocks)))
    return out


# -- in the caller --------------------------------------------------------------------------


def load_in_workers(
    items: Sequence[tuple[str, str]],
    *,
    configs: list[SourceConfig],
    token_options: dict[str, bool],
    fingerprint: str,
    workers: int,
) -> Iterator[Loaded]:
    """``Loaded`` for every ``(source name, path)`` of ``items``, in order.

    Raises :class:`WorkersUnavailable` before yielding anything if the workers cannot start;
    once results flow, a worker failure is an error of the build like any other.
    """
    chunks = [items[i : i + CHUNK_FILES] for i in range(0, len(items), CHUNK_FILES)]
    context = multiprocessing.get_context("spawn")
    try:
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(configs, token_options, fingerprint),
        )
    except (OSError, ValueError) as exc:
        raise WorkersUnavailable(str(exc)) from exc
    try:
        results = pool.map(_load_chunk, chunks)
        try:
            first = next(results, None)
        except BrokenProcessPool as exc:
            raise WorkersUnavailable(f"build workers failed to start: {exc}") from exc
        if first is not None:
            yield from first
        for chunk in results:
            yield from chunk
    finally:
        # An abandoned build (an error, or a caller that stops early) drops the queued chunks.
        pool.shutdown(wait=True, cancel_futures=True)
