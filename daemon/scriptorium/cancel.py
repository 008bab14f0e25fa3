"""Cooperative cancellation for work that runs in worker threads.

A cancelled or expired gRPC call cancels its handler task, but a thread started with
``asyncio.to_thread`` keeps running. ``run_in_thread`` hands the thread a flag (through a
context variable, which ``to_thread`` copies) and sets it when the caller goes away; long
computations call ``checkpoint()`` between stages and stop there.

Index builds are stopped the same way, by a flag of their own: a shutdown (or ``BuildSignals``
in ``index build``) sets it, and the build calls ``build_checkpoint`` per file and before its
commit.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import signal
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from types import FrameType
from typing import Any, TypeVar

from scriptorium import faults

T = TypeVar("T")

# The exit status of a process stopped before it was done (a daemon before it was ready, a
# build), when no signal is known (SIGINT's).
EXIT_INTERRUPTED = 130
log = logging.getLogger(__name__)

_FLAG: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "scriptorium_cancel", default=None
)


class Cancelled(Exception):
    """The call this work belongs to was cancelled or ran out of time."""


class BuildCancelled(Exception):
    """An index build was asked to stop (a shutdown or an interrupt); it adds no generation
    (a build listing every root may keep its progress, ``index/resume.py``)."""


def build_checkpoint(stop: Callable[[], bool] | None) -> None:
    """Stop a build here if ``stop`` says so: between files, and before a commit."""
    if stop is not None and stop():
        raise BuildCancelled()


def cancelled() -> bool:
    """Whether the call that started this work has gone away (False outside such work)."""
    flag = _FLAG.get()
    return flag is not None and flag.is_set()


def checkpoint() -> None:
    """Stop here if the call that started this work has gone away."""
    if cancelled():
        raise Cancelled()


def _stopping_at_checkpoints(fn: Callable[..., T], *args) -> T:
    """Run ``fn``; say so when it stopped at a checkpoint (nobody awaits it any more)."""
    try:
        return fn(*args)
    except Cancelled:
        log.debug("%s stopped at a checkpoint: call cancelled", getattr(fn, "__name__", "work"))
        raise


def in_thread(executor: Executor | None, fn: Callable[..., T], *args: object) -> Awaitable[T]:
    """``fn(*args)`` in a thread of ``executor`` (None: the loop's default pool), in a copy of
    this context, as ``asyncio.to_thread`` runs it in the default pool."""
    import asyncio  # here: a build helper imports this module for ``build_checkpoint`` only

    call = functools.partial(contextvars.copy_context().run, fn, *args)
    return asyncio.get_running_loop().run_in_executor(executor, call)


async def run_in_thread(fn: Callable[..., T], *args, executor: Executor | None = None) -> T:
    """Run ``fn`` in a worker thread (the loop's default pool, or ``executor``) with a
    cancellation flag the caller's going away sets (the thread's copy of the context holds
    it)."""
    import asyncio

    flag = threading.Event()
    token = _FLAG.set(flag)
    try:
        return await in_thread(executor, _stopping_at_checkpoints, fn, *args)
    except asyncio.CancelledError:
        flag.set()
        raise
    finally:
        _FLAG.reset(token)


class BuildSignals:
    """While inside: SIGINT and SIGTERM ask the build to stop instead of interrupting it.

    The first signal sets ``event`` (the build's stop flag, see ``build_checkpoint``), so the
    build ends at its next checkpoint and removes what it wrote; a second one raises
    KeyboardInterrupt at once. Main thread only (where Python runs signal handlers).
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt
        self.signal = signum
        log.warning("received %s: cancelling the index build", signal.Signals(signum).name)
        self.event.set()

    def __enter__(self) -> BuildSignals:
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


# Threads for held pause points of their own: a held call must not take a thread of the pool
# the calls that do their work in threads share (six on two cores), or twelve held calls of
# one kind keep every call of another from reaching its own pause point. (A pool starts no
# thread until it is given work: without a pause armed it stays empty.)
_HOLDS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="scriptorium-hold")


async def hold(stage: str) -> None:
    """The pause point ``stage`` for a handler on the event loop: held in a thread of its own
    (the loop keeps serving meanwhile, and the shared worker pool is left to the calls that
    need it), and let go early when the call goes away."""
    if faults.armed(stage):
        await run_in_thread(faults.pause, stage, cancelled, executor=_HOLDS)
