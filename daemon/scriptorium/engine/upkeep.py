"""The index's upkeep in threads of its own.

Loading, catching up and reconciling an edit run in worker threads, as do the calls that
compose their answers in threads (GuideImplementation, ExpandRelated, SummarizeFlow). Those
share asyncio's default pool: six threads on two cores. Were the upkeep in that pool too, a
burst of such calls would queue an edited file's update behind them, and the index would
fall behind the tree for as long as they last. So the upkeep has a lane of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from scriptorium.cancel import in_thread

T = TypeVar("T")

# Enough for the one update that holds the write lock and one caller waiting for it to end
# (a stop while the watcher's update runs).
UPKEEP_THREADS = 2


class Upkeep:
    """Runs the index's upkeep in threads no RPC takes."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(UPKEEP_THREADS, thread_name_prefix="scriptorium-upkeep")

    def run(self, fn: Callable[..., T], *args: object) -> Awaitable[T]:
        """``fn(*args)`` in an upkeep thread, in a copy of this context (as ``to_thread``)."""
        return in_thread(self._pool, fn, *args)

    def close(self) -> None:
        """Let the threads go once their work is done (nothing waits for them here)."""
        self._pool.shutdown(wait=False)
