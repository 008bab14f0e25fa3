"""Cooperative cancellation for work that runs in worker threads.

A cancelled or expired gRPC call cancels its handler task, but a thread started with
``asyncio.to_thread`` keeps running. ``run_in_thread`` hands the thread a flag (through a
context variable, which ``to_thread`` copies) and sets it when the caller goes away; long
computations call ``checkpoint()`` between stages and stop there.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from scriptorium import faults

T = TypeVar("T")
log = logging.getLogger(__name__)

_FLAG: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "scriptorium_cancel", default=None
)


class Cancelled(Exception):
    """The call this work belongs to was cancelled or ran out of time."""


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


async def run_in_thread(fn: Callable[..., T], *args) -> T:
    flag = threading.Event()
    token = _FLAG.set(flag)
    try:
        return await asyncio.to_thread(_stopping_at_checkpoints, fn, *args)
    except asyncio.CancelledError:
        flag.set()
        raise
    finally:
        _FLAG.reset(token)


async def hold(stage: str) -> None:
    """The pause point ``stage`` for a handler on the event loop: held in a worker thread (the
    loop keeps serving meanwhile), and let go early when the call goes away."""
    if faults.armed(stage):
        await run_in_thread(faults.pause, stage, cancelled)
