"""The suite seeds a commit's vectors from another commit of the same repository."""

from __future__ import annotations

import os
from pathlib import Path

from scriptorium.evaluation.suite.settle import seed_vectors

ENCODER = "model-256-alone"


def _state(cache: Path, commit: str, selection: str = "py-docs") -> Path:
    state = cache / "owner+repo" / commit / selection / "state"
    state.mkdir(parents=True)
    return state


def _vectors(state: Path, generation: int, content: bytes, stamp: float) -> Path:
    folder = state / "vectors" / ENCODER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"gen-{generation}.vec"
    path.write_bytes(content)
    os.utime(path, (stamp, stamp))
    return path


def test_a_commit_without_vectors_gets_the_newest_of_another_commit(tmp_path: Path) -> None:
    older = _state(tmp_path, "a" * 40)
    newer = _state(tmp_path, "b" * 40)
    _vectors(older, 3, b"older", 1_000)
    _vectors(newer, 1, b"newer", 2_000)
    _vectors(_state(tmp_path, "d" * 40, selection="docs"), 1, b"other selection", 3_000)
    target = _state(tmp_path, "c" * 40)
    (seeded,) = seed_vectors(target)
    assert seeded == target / "vectors" / ENCODER / "gen-0.vec"
    assert seeded.read_bytes() == b"newer"


def test_a_commit_with_its_own_vectors_is_left_alone(tmp_path: Path) -> None:
    _vectors(_state(tmp_path, "a" * 40), 2, b"other", 1_000)
    target = _state(tmp_path, "c" * 40)
    own = _vectors(target, 1, b"own", 500)
    assert seed_vectors(target) == []
    assert sorted(p.name for p in own.parent.iterdir()) == ["gen-1.vec"]


def test_the_only_commit_has_nothing_to_seed_from(tmp_path: Path) -> None:
    target = _state(tmp_path, "c" * 40)
    assert seed_vectors(target) == []
    assert not (target / "vectors").exists()
