"""Waiting for a daemon to settle before it is measured: its vectors made (or off).

The suite waits on the vectors rather than racing them, so its daemons make them at the
priority of the suite itself (``make eval-suite`` runs under ``nice``), not below it.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from scriptorium.evaluation import runner
from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.semantic.builder import VECTOR_FILE
from scriptorium.v1 import retrieval_pb2 as pb

os.environ.setdefault("SCRIPTORIUM_VECTOR_NICENESS", "0")

# Vector states after which a source's vectors will not change without an edit.
SETTLED = frozenset({"ready", "off", "failed", ""})
VECTORS_TIMEOUT_S = 4 * 3600.0


def seed_vectors(state_dir: Path) -> list[Path]:
    """Give a corpus state without vectors the newest vector file of the same repository at
    another commit (as ``gen-0.vec``, older than any of its own): block ids name content, so
    its daemon encodes only the blocks that commit does not share. A whole checkout per
    commit (swebench) would otherwise encode every repository once per commit. The paths
    seeded."""
    # <cache>/<owner+repo>/<commit>/<selection>/state
    selection, commits = state_dir.parent.name, state_dir.parent.parent.parent
    newest: dict[str, tuple[float, Path]] = {}
    for sibling in commits.glob(f"*/{selection}/state/vectors/*/gen-*.vec"):
        if sibling.parents[4] == state_dir.parent.parent or not VECTOR_FILE.match(sibling.name):
            continue
        encoder = sibling.parent.name
        stamp = sibling.stat().st_mtime
        if encoder not in newest or stamp > newest[encoder][0]:
            newest[encoder] = (stamp, sibling)
    seeded = []
    for encoder, (_, source) in sorted(newest.items()):
        folder = state_dir / "vectors" / encoder
        if folder.is_dir() and any(VECTOR_FILE.match(p.name) for p in folder.iterdir()):
            continue
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / "gen-0.vec"
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        seeded.append(target)
    return seeded


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
