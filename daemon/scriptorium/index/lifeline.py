"""Build helper processes end with the process that started them.

A build's helpers are spawned interpreters that wait for chunks on a queue. When the building
process is killed outright (``kill -9``, the OOM killer), nothing tells them: each was left
re-parented to init, blocked for good in ``Queue.get`` and holding its interpreter and plugins
(about 60 MB), and with them the multiprocessing resource tracker, which waits until every
process holding its pipe has ended. So a helper, first thing, asks the kernel to kill it when
its parent ends (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``); elsewhere a thread watches the
parent's pid. Once the helpers are gone the resource tracker's pipe closes and it exits too.

A spawned helper first imports its parent's main module. A script that opens an engine at its
top level, without ``if __name__ == "__main__":``, would open it again in each helper, whose
build then waits for ever on the write lock its parent holds while the parent waits for the
helper: :func:`refuse_in_helper_start` ends such a helper instead, saying why in one line, and
the parent builds the rest itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading

_PR_SET_PDEATHSIG = 1
_WATCH_SECONDS = 0.5


# Said by a helper that ends because its parent's main module opens an engine when imported.
UNGUARDED_MAIN = (
    "scriptorium: a build helper ended: the script that started the build opens its engine "
    'when imported; open it under `if __name__ == "__main__":` (build helpers are spawned, '
    "and a spawned process runs the main module's top level). The build goes on without helpers."
)


def refuse_in_helper_start() -> None:
    """End a spawned process that is still importing its parent's main module (the test
    multiprocessing makes before starting a process there), saying why in one line: its
    parent builds on alone."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        print(UNGUARDED_MAIN, file=sys.stderr, flush=True)
        os._exit(1)


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
