"""Search p50 of a scale against 1x, measured in turns on two daemons serving at once.

The scales are benched one after the other, minutes apart, and this machine's speed moves
between such phases by more than a ranking change does (the same 100x build took 139 s and
195 s within the hour). Two daemons, the 1x one and the scale's, answer the same queries in
alternating rounds, so a phase that slows one slows the other; the ratio is the median of the
rounds' ratios.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from bench.measure import latency, ratio
from bench.queries import QUERIES
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon

ROUNDS = 5


def search_in_turns(base: tuple[Path, Path], scaled: tuple[Path, Path], quick: bool) -> dict:
    """``base`` and ``scaled`` are (config, state) pairs with a generation already built."""
    n = 200 if quick else 500
    daemons = [Daemon(["--config", str(config)], state) for config, state in (base, scaled)]
    try:
        for daemon in daemons:
            daemon.start(timeout=900)
            daemon.wait_caught_up(900)
        rounds: list[tuple[float, float]] = []
        for turn in range(ROUNDS):
            p50s = [0.0, 0.0]
            # Which daemon goes first alternates, so an effect of the order cancels out.
            for side in (0, 1) if turn % 2 == 0 else (1, 0):
                stub = daemons[side].stub
                call = latency(
                    lambda i, s=stub: s.Search(pb.SearchRequest(query=QUERIES[i % 10])), n
                )
                p50s[side] = call["p50_ms"]
            rounds.append((p50s[0], p50s[1]))
    finally:
        for daemon in daemons:
            daemon.terminate()
    return {
        "rounds": ROUNDS,
        "x1_p50_ms": [a for a, _ in rounds],
        "p50_ms": [b for _, b in rounds],
        "ratio": round(statistics.median(ratio(b, a) for a, b in rounds), 2),
    }
