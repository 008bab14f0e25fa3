"""Waiting for a daemon to settle before it is measured: its vectors made (or off).

The suite waits on the vectors rather than racing them, so its daemons make them at the
priority of the suite itself (``make eval-suite`` runs under ``nice``), not below it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from scriptorium.evaluation import runner
from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.v1 import retrieval_pb2 as pb

os.environ.setdefault("SCRIPTORIUM_VECTOR_NICENESS", "0")

# Vector states after which a source's vectors will not change without an edit.
SETTLED = frozenset({"ready", "off", "failed", ""})
VECTORS_TIMEOUT_S = 4 * 3600.0


def wait_for_vectors(client: runner.RetrievalClient, log: Callable[[str], None]) -> float:
    """Wait until every source's vectors are made (or semantic ranking is off), so the run
    scores the ranking a settled daemon gives; the seconds it took."""
    started = time.perf_counter()
    said = 0.0
    while True:
        sources = client.stub.ListSources(pb.ListSourcesRequest(), timeout=30.0).sources
        if all(s.vectors_state in SETTLED for s in sources):
            return time.perf_counter() - started
        waited = time.perf_counter() - started
        if waited > VECTORS_TIMEOUT_S:
            raise SuiteError(f"vectors not made after {waited:.0f}s")
        if waited - said >= 30.0:
            said = waited
            done = sum(s.vectors_done for s in sources)
            total = sum(s.vectors_total for s in sources)
            log(f"  waiting for vectors: {done} of {total} blocks ({waited:.0f}s)")
        time.sleep(1.0)
