"""Cooperative cancellation for work that runs in worker threads.

A cancelled or expired gRPC call cancels its handler task, but a thread started with
``asyncio.to_thread`` keeps running. ``run_in_thread`` hands the thread a flag (through a
context variable, which ``to_thread`` copies) and sets it when the caller goes away; long
computations call ``checkpoint()`` between stages and stop there.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_FLAG: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "scriptorium_cancel", default=None
)


class Cancelled(Exception):
    """The call this work belongs to was cancelled or ran out of time."""


def checkpoint() -> None:
    """Stop here if the call that started this work has gone away."""
    flag = _FLAG.get()
    if flag is not None and flag.is_set():
        raise Cancelled()


async def run_in_thread(fn: Callable[..., T], *args) -> T:
    flag = threading.Event()
    token = _FLAG.set(flag)
    try:
        return await asyncio.to_thread(fn, *args)
    except asyncio.CancelledError:
        flag.set()
        raise
    finally:
        _FLAG.reset(token)
