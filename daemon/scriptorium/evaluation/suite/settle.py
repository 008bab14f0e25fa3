"""Waiting for a daemon to settle before it is measured: its vectors made (or off).

The suite waits on the vectors rather than racing them, so its daemons make them at the
priority of the suite itself (``make eval-suite`` runs under ``nice``), not below it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from scriptorium.evaluation import runner
from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.semantic import vectors as V
from scriptorium.semantic.builder import VECTOR_FILE
from scriptorium.v1 import retrieval_pb2 as pb

os.environ.setdefault("SCRIPTORIUM_VECTOR_NICENESS", "0")

# Vector states after which a source's vectors will not change without an edit.
SETTLED = frozenset({"ready", "off", "failed", ""})
VECTORS_TIMEOUT_S = 4 * 3600.0


def seed_vectors(state_dir: Path) -> list[Path]:
    """Give a corpus state without vectors the vectors of the same repository at its other
    commits: one ``gen-0.vec`` (older than any of its own) holding every block any of them
    has a vector for, the newest file's row where they share one. Block ids name content, so
    its daemon encodes only the blocks no commit made so far holds. A whole checkout per
    commit (swebench) would otherwise encode every repository once per commit, and the
    newest file alone leaves out what an older commit shares with this one. The paths
    seeded."""
    # <cache>/<owner+repo>/<commit>/<selection>/state
    selection, commits = state_dir.parent.name, state_dir.parent.parent.parent
    # encoder → each other commit's newest vector file: (generation, mtime, path)
    files: dict[str, dict[Path, tuple[int, float, Path]]] = {}
    for sibling in commits.glob(f"*/{selection}/state/vectors/*/gen-*.vec"):
        match = VECTOR_FILE.match(sibling.name)
        if sibling.parents[4] == state_dir.parent.parent or not match:
            continue
        commit = sibling.parents[4]
        found = (int(match.group(1)), sibling.stat().st_mtime, sibling)
        held = files.setdefault(sibling.parent.name, {})
        if commit not in held or found[:2] > held[commit][:2]:
            held[commit] = found
    seeded = []
    for encoder, newest in sorted(files.items()):
        folder = state_dir / "vectors" / encoder
        if folder.is_dir() and any(VECTOR_FILE.match(p.name) for p in folder.iterdir()):
            continue
        union = _union([path for _, _, path in sorted(newest.values(), key=lambda f: -f[1])])
        if union is None:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / "gen-0.vec"
        V.write(target, union)
        seeded.append(target)
    return seeded


def _union(paths: list[Path]) -> V.VectorIndex | None:
    """One index of every block in the vector files at ``paths`` (newest first: the first
    file's row wins); None when none reads."""
    import numpy as np

    bids, corpora, texts, rows = [], [], [], []
    seen = np.zeros(0, dtype=np.int64)
    model = ""
    for path in paths:
        try:
            index = V.read(path)
        except V.CorruptVectorsError:
            continue
        model = model or index.model
        new = np.flatnonzero(~np.isin(index.bids, seen))
        if not len(new):
            continue
        bids.append(np.asarray(index.bids[new]))
        corpora.append(np.asarray(index.corpora[new]))
        held = index.texts if index.texts is not None else np.zeros(len(index.bids), np.int64)
        texts.append(np.asarray(held[new]))
        rows.append(index.vectors(new))
        seen = np.union1d(seen, bids[-1])
    if not bids:
        return None
    every = np.concatenate(bids)
    order = np.argsort(every, kind="stable")
    return V.VectorIndex(
        model,
        0,
        every[order],
        np.concatenate(corpora)[order],
        np.concatenate(rows)[order],
        np.concatenate(texts)[order],
    )


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
