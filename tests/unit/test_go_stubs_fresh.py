"""The Go client's stubs must be exactly what the contract generates today.

clients/go/scriptoriumv1 is generated from proto/ by scripts/gen_go_stubs.sh (`make gen`) with
pinned protoc plugins; a stale copy silently speaks an older contract, so this regenerates the
stubs into a temporary directory and compares bytes, like the Node message-types test. The Go
toolchain is required (the plugins are built with it, once, into clients/go/.bin).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.contract import edited_contract

REPO = Path(__file__).resolve().parents[2]
GO_CLIENT = REPO / "clients" / "go"
STUBS = GO_CLIENT / "scriptoriumv1"
SCRIPT = REPO / "scripts" / "gen_go_stubs.sh"
HINT = "clients/go/scriptoriumv1 is stale: run `make gen` (scripts/gen_go_stubs.sh) and commit it"
FILES = ("retrieval.pb.go", "retrieval_grpc.pb.go")


def _go() -> str:
    go = shutil.which("go") or "/usr/local/go/bin/go"
    assert Path(go).exists(), "the Go toolchain is needed to check the Go stubs"
    return go


def _generate(out: Path, proto_root: Path | None = None) -> dict[str, bytes]:
    """Run the generator into ``out`` (against a copy of the repository's proto/ if given)."""
    env = {**os.environ, "GO": _go(), "PYTHON": sys.executable}
    if proto_root is not None:
        env["PROTO_ROOT"] = str(proto_root)
    subprocess.run(
        ["bash", str(SCRIPT), str(out)], check=True, capture_output=True, timeout=600, env=env
    )
    return {name: (out / "scriptoriumv1" / name).read_bytes() for name in FILES}


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return _generate(tmp_path_factory.mktemp("go"))


def test_committed_go_stubs_are_fresh(regenerated: dict[str, bytes]) -> None:
    for name, data in regenerated.items():
        assert (STUBS / name).exists(), HINT
        assert (STUBS / name).read_bytes() == data, f"{name}: {HINT}"
    assert sorted(p.name for p in STUBS.iterdir()) == sorted(FILES)


def test_the_plugin_pin_matches_the_module_requirement() -> None:
    """protoc-gen-go is pinned to the google.golang.org/protobuf the module builds against."""
    pin = re.search(r"^PROTOC_GEN_GO_VERSION=(\S+)", SCRIPT.read_text(), re.MULTILINE)
    required = re.search(r"google\.golang\.org/protobuf (v\S+)", (GO_CLIENT / "go.mod").read_text())
    assert pin and required
    assert pin.group(1) == required.group(1)


def test_a_contract_change_changes_the_stubs(tmp_path: Path) -> None:
    """What makes the freshness test fail: a field added to proto/ appears in the output."""
    proto = edited_contract(
        tmp_path,
        "message ListSourcesRequest {}",
        "message ListSourcesRequest {\n  repeated Corpus seen = 1;\n}",
    )
    stubs = _generate(tmp_path / "out", proto)
    assert stubs["retrieval.pb.go"] != (STUBS / "retrieval.pb.go").read_bytes()
    assert re.search(rb"\n\tSeen +\[\]Corpus ", stubs["retrieval.pb.go"])
