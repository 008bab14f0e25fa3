"""Waiting on a condition in tests: a generous bound, never a measurement.

A test waits for an event (a file, a log line, a state it can ask for); the bound only keeps a
broken daemon from hanging the run, so it is long, and nothing asserts how soon it held.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], bool], timeout: float = 120.0, step: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
