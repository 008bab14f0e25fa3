"""The committed Python stubs must be exactly what the contract generates today.

A stale stub silently serves an older contract, so this regenerates them into a temporary
directory with the same grpc_tools (through the same script `make gen` runs) and compares bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "daemon" / "scriptorium" / "v1"
GENERATOR = REPO / "scripts" / "gen_stubs.sh"
HINT = "the generated stubs are stale: run `make gen` and commit daemon/scriptorium/v1/"


def _stub_files(directory: Path) -> dict[str, bytes]:
    """Generated stubs by name; hand-written package files such as __init__.py are not stubs."""
    return {
        path.name: path.read_bytes()
        for path in sorted(directory.iterdir())
        if path.suffix in {".py", ".pyi"} and path.name != "__init__.py"
    }


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("stubs")
    subprocess.run(
        [str(GENERATOR), str(out)],
        check=True,
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        timeout=60,
    )
    return _stub_files(out / "scriptorium" / "v1")


def test_generator_produces_the_three_stubs(regenerated: dict[str, bytes]) -> None:
    assert set(regenerated) == {"retrieval_pb2.py", "retrieval_pb2.pyi", "retrieval_pb2_grpc.py"}


def test_committed_stub_set_matches(regenerated: dict[str, bytes]) -> None:
    assert set(_stub_files(COMMITTED)) == set(regenerated), HINT


@pytest.mark.parametrize("name", ["retrieval_pb2.py", "retrieval_pb2.pyi", "retrieval_pb2_grpc.py"])
def test_committed_stub_is_fresh(regenerated: dict[str, bytes], name: str) -> None:
    committed = COMMITTED / name
    assert committed.exists(), HINT
    assert committed.read_bytes() == regenerated[name], f"{name}: {HINT}"
