"""Build helper processes end with the process that started them.

A build's helpers are spawned interpreters that wait for chunks on a queue. When the building
process is killed outright (``kill -9``, the OOM killer), nothing tells them: each was left
re-parented to init, blocked for good in ``Queue.get`` and holding its interpreter and plugins
(about 60 MB), and with them the multiprocessing resource tracker, which waits until every
process holding its pipe has ended. So a helper, first thing, asks the kernel to kill it when
its parent ends (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``); elsewhere a thread watches the
parent's pid. Once the helpers are gone the resource tracker's pipe closes and it exits too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading

_PR_SET_PDEATHSIG = 1
_WATCH_SECONDS = 0.5


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` (the pid that started it) ends."""
    if not (sys.platform.startswith("linux") and _death_signal()):
        threading.Thread(
            target=_watch, args=(parent,), name="scriptorium-parent-watch", daemon=True
        ).start()
    # The parent may have ended before the request was made: nothing would fire then.
    if os.getppid() != parent:
        os._exit(1)


def _death_signal() -> bool:
    """Whether the kernel will SIGKILL this process when its parent ends."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    return False


def _watch(parent: int) -> None:
    stop = threading.Event()
    while not stop.wait(_WATCH_SECONDS):
        if os.getppid() != parent:
            os._exit(1)
