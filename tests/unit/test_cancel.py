"""Work in worker threads stops at its next checkpoint once the calling task is cancelled."""

from __future__ import annotations

import asyncio
import threading

import pytest

from scriptorium.cancel import Cancelled, cancelled, checkpoint, run_in_thread


def test_checkpoint_stops_work_after_the_caller_is_cancelled():
    started, resume = threading.Event(), threading.Event()
    stopped: list[str] = []

    def work() -> None:
        started.set()
        resume.wait(60)  # the work is under way when its caller goes away
        try:
            checkpoint()
        except Cancelled:
            stopped.append("cancelled")
            raise
        stopped.append("finished")

    async def scenario() -> None:
        task = asyncio.create_task(run_in_thread(work))
        assert await asyncio.to_thread(started.wait, 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        resume.set()

    asyncio.run(scenario())  # the default executor is shut down: the work has ended
    assert stopped == ["cancelled"]


def test_cancelled_tells_the_work_its_caller_went_away():
    started, resume = threading.Event(), threading.Event()
    seen: list[bool] = []

    def work() -> None:
        seen.append(cancelled())
        started.set()
        resume.wait(60)
        seen.append(cancelled())

    async def scenario() -> None:
        task = asyncio.create_task(run_in_thread(work))
        assert await asyncio.to_thread(started.wait, 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        resume.set()

    asyncio.run(scenario())
    assert seen == [False, True]
    assert not cancelled()


def test_checkpoint_is_free_outside_cancellable_work():
    checkpoint()
    assert asyncio.run(run_in_thread(lambda: 42)) == 42


def test_a_held_pause_point_lets_go_when_its_call_goes_away(tmp_path, monkeypatch):
    from scriptorium import faults
    from scriptorium.cancel import hold

    release = tmp_path / "release"  # never created
    monkeypatch.setitem(faults._POINTS, "rpc.search", release)
    assert faults.armed("rpc.search") and not faults.armed("rpc.guide")

    async def scenario() -> None:
        task = asyncio.create_task(hold("rpc.search"))
        while not faults.reached_marker(release).exists():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    # asyncio.run waits for the worker thread: it returns only if the pause let go.
    asyncio.run(asyncio.wait_for(scenario(), 60))
    assert not release.exists()
