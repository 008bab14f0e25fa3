"""The suite seeds a commit's vectors from the other commits of the same repository."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from scriptorium.evaluation.suite.settle import seed_vectors
from scriptorium.semantic import vectors as V

ENCODER = "model-256-alone"


def _state(cache: Path, commit: str, selection: str = "py-docs") -> Path:
    state = cache / "owner+repo" / commit / selection / "state"
    state.mkdir(parents=True)
    return state


def _vectors(state: Path, generation: int, rows: dict[int, float], stamp: float) -> Path:
    """A vector file of blocks ``rows`` (block id → the first coordinate of its vector)."""
    folder = state / "vectors" / ENCODER
    folder.mkdir(parents=True, exist_ok=True)
    bids = np.array(sorted(rows), dtype=np.int64)
    matrix = np.zeros((len(bids), 2), dtype=np.float32)
    matrix[:, 0] = [rows[int(b)] for b in bids]
    matrix[:, 1] = 1.0
    corpora = np.full(len(bids), V.CODE, dtype=np.uint8)
    path = folder / f"gen-{generation}.vec"
    V.write(path, V.VectorIndex("model/256/alone", generation, bids, corpora, matrix, bids * 7))
    os.utime(path, (stamp, stamp))
    return path


def _seeded(path: Path) -> dict[int, float]:
    index = V.read(path)
    return {
        int(b): float(v[0])
        for b, v in zip(index.bids, index.vectors(np.arange(len(index))), strict=True)
    }


def test_a_commit_without_vectors_gets_every_block_its_other_commits_have(tmp_path: Path) -> None:
    older = _state(tmp_path, "a" * 40)
    newer = _state(tmp_path, "b" * 40)
    _vectors(older, 3, {1: 0.1, 2: 0.2, 5: 0.5}, 1_000)
    _vectors(older, 2, {9: 0.9}, 900)  # an older generation of that commit: not read
    _vectors(newer, 1, {2: 0.25, 3: 0.3}, 2_000)
    _vectors(_state(tmp_path, "d" * 40, selection="docs"), 1, {4: 0.4}, 3_000)
    target = _state(tmp_path, "c" * 40)
    (seeded,) = seed_vectors(target)
    assert seeded == target / "vectors" / ENCODER / "gen-0.vec"
    # Both commits' blocks, the newer file's row for the block they share; not the other
    # selection's, nor an older generation's.
    assert _seeded(seeded) == pytest.approx({1: 0.1, 2: 0.25, 3: 0.3, 5: 0.5})
    assert list(V.read(seeded).texts) == [7, 14, 21, 35]


def test_a_commit_with_its_own_vectors_is_left_alone(tmp_path: Path) -> None:
    _vectors(_state(tmp_path, "a" * 40), 2, {1: 0.1}, 1_000)
    target = _state(tmp_path, "c" * 40)
    own = _vectors(target, 1, {2: 0.2}, 500)
    assert seed_vectors(target) == []
    assert sorted(p.name for p in own.parent.iterdir()) == ["gen-1.vec"]


def test_a_corrupt_file_of_another_commit_is_passed_over(tmp_path: Path) -> None:
    broken = _vectors(_state(tmp_path, "a" * 40), 1, {1: 0.1}, 2_000)
    broken.write_bytes(broken.read_bytes()[:-8])
    _vectors(_state(tmp_path, "b" * 40), 1, {2: 0.2}, 1_000)
    target = _state(tmp_path, "c" * 40)
    (seeded,) = seed_vectors(target)
    assert _seeded(seeded) == pytest.approx({2: 0.2})


def test_the_only_commit_has_nothing_to_seed_from(tmp_path: Path) -> None:
    target = _state(tmp_path, "c" * 40)
    assert seed_vectors(target) == []
    assert not (target / "vectors").exists()
