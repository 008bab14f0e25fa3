"""Incremental updates for the newer languages and config formats: a watching daemon picks up a
Rust function and a TOML table added to real third-party files, and a JSON file that grows past
the data-file cap leaves the index."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.waiting import wait_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "code_languages"
RUST = "itoa/src/lib.rs"
TOML = "flask/pyproject.toml"
JSON = "flask/.devcontainer/devcontainer.json"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("code-updates") / "repo"
    for path in (RUST, TOML, JSON):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / path, root / path)
    return root


@pytest.fixture(scope="module")
def stub(tree: Path) -> Iterator:
    with running([str(tree)], tree.parent / "state") as served:
        yield served.stub


def resolves(stub, location: str) -> bool:
    try:
        stub.GetContent(pb.GetContentRequest(location=location), timeout=30)
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.NOT_FOUND, err.details()
        return False
    return True


def test_an_added_rust_method_and_toml_table_resolve_after_the_edit(stub, tree):
    assert resolves(stub, f"{RUST}#Buffer::format")
    assert not resolves(stub, f"{RUST}#Buffer::reset")
    assert not resolves(stub, f"{TOML}#tool.scriptorium")
    rust = (tree / RUST).read_text(encoding="utf-8")
    rust += (
        "\nimpl Buffer {\n    pub fn reset(&mut self) {\n        self.bytes = [0; 40];\n    }\n}\n"
    )
    (tree / RUST).write_text(rust, encoding="utf-8")
    toml = (tree / TOML).read_text(encoding="utf-8")
    (tree / TOML).write_text(toml + '\n[tool.scriptorium]\nroots = ["src"]\n', encoding="utf-8")

    assert wait_for(lambda: resolves(stub, f"{RUST}#Buffer::reset")), "the edit was never indexed"
    assert wait_for(lambda: resolves(stub, f"{TOML}#tool.scriptorium"))
    reply = stub.GetContent(pb.GetContentRequest(location=f"{RUST}#Buffer.reset"), timeout=30)
    assert reply.content.startswith("    pub fn reset(&mut self) {")
    tool = stub.GetContent(
        pb.GetContentRequest(location=f"{TOML}#tool", mode=pb.CONTENT_MODE_DEFINITION), timeout=30
    )
    assert tool.end_line == len((tree / TOML).read_text(encoding="utf-8").splitlines())


def test_a_json_file_grown_past_the_cap_leaves_the_index(stub, tree):
    assert resolves(stub, f"{JSON}#customizations")
    body = ",\n".join(f'  "k{i}": "{"x" * 60}"' for i in range(5000))  # ~350 KB
    (tree / JSON).write_text("{\n" + body + "\n}\n", encoding="utf-8")
    assert wait_for(lambda: not resolves(stub, JSON)), "the oversized file was still served"
