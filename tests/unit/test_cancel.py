"""Work in worker threads stops at its next checkpoint once the calling task is cancelled."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from scriptorium.cancel import Cancelled, checkpoint, run_in_thread


def test_checkpoint_stops_work_after_the_caller_is_cancelled():
    started = threading.Event()
    stopped: list[str] = []

    def work() -> None:
        started.set()
        try:
            for _ in range(500):
                time.sleep(0.01)
                checkpoint()
        except Cancelled:
            stopped.append("cancelled")
            raise
        stopped.append("finished")

    async def scenario() -> None:
        task = asyncio.create_task(run_in_thread(work))
        await asyncio.to_thread(started.wait, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    deadline = time.monotonic() + 5
    while not stopped and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stopped == ["cancelled"]


def test_checkpoint_is_free_outside_cancellable_work():
    checkpoint()
    assert asyncio.run(run_in_thread(lambda: 42)) == 42
