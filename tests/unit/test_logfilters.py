"""Repeated log lines are limited per kind with a count of the rest, and grpcio's traceback for
a vanished client is one INFO line (scriptorium/logfilters.py), on records made as the daemon's
loggers make them and a clock the test moves."""

from __future__ import annotations

import logging
import sys

from scriptorium.logfilters import REPEATS, RepeatLimiter, VanishedGrpcClient


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(msg: str, *args: object, level: int = logging.WARNING, **extra: object):
    made = logging.LogRecord("scriptorium.x", level, __file__, 1, msg, args, None)
    made.__dict__.update(extra)
    return made


def test_a_flood_of_one_kind_passes_a_burst_then_counts_the_rest():
    clock = Clock()
    limiter = RepeatLimiter(burst=5, window=60.0, clock=clock)
    passed = [limiter.filter(record("refused %s: %s", f"m{i}", "wrong")) for i in range(3000)]
    assert sum(passed) == 5
    clock.now = 61.0
    late = record("refused %s: %s", "m", "wrong")
    assert limiter.filter(late)
    assert late.getMessage() == "refused m: wrong (and 2995 more like it in the last minute)"


def test_kinds_are_limited_apart_and_quiet_lines_pass():
    limiter = RepeatLimiter(burst=1, clock=Clock())
    assert limiter.filter(record("a %s", 1))
    assert limiter.filter(record("b %s", 1))
    assert not limiter.filter(record("a %s", 2))
    assert limiter.filter(record("a %s", 2, level=logging.ERROR))  # another level, another kind
    for _ in range(100):  # progress and start-up lines are never limited
        assert limiter.filter(record("indexing %s", 1, level=logging.INFO))
    marked = [record("gone %s", 1, level=logging.INFO, **{REPEATS: True}) for _ in range(3)]
    assert [limiter.filter(r) for r in marked] == [True, False, False]


def batch_error() -> logging.LogRecord:
    """The record grpcio's aio server logs (``_LOGGER.exception``) for a send to a gone client."""
    try:
        raise RuntimeError('Failed "execute_batch": (<SendMessageOperation>,)')
    except RuntimeError:
        exc_info = sys.exc_info()
    return logging.LogRecord(
        "grpc._cython.cygrpc",
        logging.ERROR,
        "server.pyx.pxi",
        1,
        "ExecuteBatchError raised in core by servicer method [%s]",
        ("/scriptorium.v1.RetrievalService/Search",),
        exc_info,
    )


def test_grpcios_batch_error_for_a_vanished_client_is_one_info_line(caplog):
    caplog.set_level(logging.INFO, logger="grpc._cython.cygrpc")
    made = batch_error()
    assert VanishedGrpcClient().filter(made)
    assert made.levelno == logging.INFO and made.exc_info is None
    assert made.getMessage() == (
        "a gRPC client of /scriptorium.v1.RetrievalService/Search went away before its answer"
        " was sent"
    )
    assert getattr(made, REPEATS)  # and so limited like any flood
    caplog.set_level(logging.WARNING, logger="grpc._cython.cygrpc")
    assert not VanishedGrpcClient().filter(batch_error())  # not logged at all below INFO
