"""Log lines a client can cause, kept to a bounded number however many clients cause them.

A line a caller can provoke at will (a wrong token, a refused Host, a client that leaves
early) would otherwise let one caller grow the log by the megabyte. :class:`RepeatLimiter`
passes the first few lines of each kind per minute and counts the rest, and the next line of
that kind after the minute says how many were left out. :class:`VanishedGrpcClient` turns
grpcio's traceback for a client that left before its answer was sent into one such line.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

# The mark a line below WARNING carries (``extra={REPEATS: True}``) to be limited as well.
REPEATS = "repeats"
_GRPC_LOGGER = "grpc._cython.cygrpc"
_BATCH_ERROR = "ExecuteBatchError raised in core"
_METHOD = re.compile(r"\[([^\]]*)\]")
# Libraries that log every HTTP request at INFO: a crawl of a documentation site or a busy
# search cluster would fill the daemon's log with them. Shown at DEBUG.
CHATTY_LOGGERS = ("httpx", "httpcore", "opensearch", "urllib3")


@dataclass(slots=True)
class _Run:
    started: float
    passed: int = 1
    dropped: int = 0


class RepeatLimiter(logging.Filter):
    """At most ``burst`` lines of one kind (logger, level, format) per ``window`` seconds.

    Lines at WARNING and above are limited, and lower ones marked with ``REPEATS``; the rest
    (progress, start-up) pass untouched.
    """

    def __init__(
        self,
        burst: int = 5,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        max_kinds: int = 1000,
    ) -> None:
        super().__init__()
        self._burst = burst
        self._window = window
        self._clock = clock
        self._max_kinds = max_kinds
        self._runs: dict[tuple[str, int, str], _Run] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING and not getattr(record, REPEATS, False):
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = self._clock()
        run = self._runs.get(key)
        if run is None or now - run.started >= self._window:
            if run is not None and run.dropped:
                record.msg = f"{record.msg} (and {run.dropped} more like it in the last minute)"
            self._remember(key, _Run(now))
            return True
        if run.passed < self._burst:
            run.passed += 1
            return True
        run.dropped += 1
        return False

    def _remember(self, key: tuple[str, int, str], run: _Run) -> None:
        if key not in self._runs and len(self._runs) >= self._max_kinds:
            self._runs.clear()  # kinds are format strings, a fixed set; this is only a backstop
        self._runs[key] = run


class VanishedGrpcClient(logging.Filter):
    """grpcio's ERROR and traceback for an answer its client did not stay for, as one INFO line."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        if not text.startswith(_BATCH_ERROR):
            return True
        if not logging.getLogger(record.name).isEnabledFor(logging.INFO):
            return False
        found = _METHOD.search(record.getMessage())
        record.msg = "a gRPC client of %s went away before its answer was sent"
        record.args = (found.group(1) if found else "a method",)
        record.exc_info = None
        record.exc_text = None
        record.levelno = logging.INFO
        record.levelname = "INFO"
        setattr(record, REPEATS, True)
        return True


def install(handlers: list[logging.Handler]) -> None:
    """Limit repeated lines on ``handlers``, quiet grpcio's vanished-client traceback, and
    keep the per-request lines of HTTP libraries for DEBUG."""
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        for name in CHATTY_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
    limiter = RepeatLimiter()
    for handler in handlers:
        handler.addFilter(limiter)
    grpc_log = logging.getLogger(_GRPC_LOGGER)
    if not any(isinstance(f, VanishedGrpcClient) for f in grpc_log.filters):
        grpc_log.addFilter(VanishedGrpcClient())
