"""The Node client's message types must be exactly what the contract generates today.

clients/node/messages.d.ts is generated from proto/ by scripts/gen_node_types.py (`make gen`);
a stale copy silently types an older contract, so this regenerates it into a temporary file and
compares bytes, like the stale-stub test does for the Python stubs. index.d.ts, the client's
hand-written API, must import the messages from it rather than declare its own copies.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.contract import edited_contract

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "clients" / "node"
COMMITTED = CLIENT / "messages.d.ts"
GENERATOR = REPO / "scripts" / "gen_node_types.py"
HINT = "clients/node/messages.d.ts is stale: run `make gen` and commit it"
DECLARED = re.compile(r"^export (?:interface|type) (\w+)", re.MULTILINE)


def _interfaces(text: str) -> dict[str, list[str]]:
    """Interface name -> field names, comments dropped."""
    text = re.sub(r"/\*\*.*?\*/|//[^\n]*", "", text, flags=re.DOTALL)
    return {
        m.group(1): re.findall(r"^\s*(\w+)\??:", m.group(2), re.MULTILINE)
        for m in re.finditer(r"export interface (\w+) \{(.*?)\}", text, re.DOTALL)
    }


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_node_types", GENERATOR)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("node") / "messages.d.ts"
    subprocess.run(
        [sys.executable, str(GENERATOR), str(out)], check=True, capture_output=True, timeout=60
    )
    return out.read_bytes()


def test_committed_message_types_are_fresh(regenerated: bytes) -> None:
    assert COMMITTED.exists(), HINT
    assert COMMITTED.read_bytes() == regenerated, HINT


def test_every_message_has_its_fields_in_proto_order(regenerated: bytes) -> None:
    interfaces = _interfaces(regenerated.decode())
    for name, message in pb.DESCRIPTOR.message_types_by_name.items():
        assert interfaces.get(name) == [f.name for f in message.fields], name
    assert interfaces["Timestamp"] == ["seconds", "nanos"]


def test_every_enum_is_the_union_of_its_names(regenerated: bytes) -> None:
    text = regenerated.decode()
    for name, enum in pb.DESCRIPTOR.enum_types_by_name.items():
        union = re.search(rf"export type {name} =(.*?);", text, re.DOTALL)
        assert union, name
        assert re.findall(r"'(\w+)'", union.group(1)) == [v.name for v in enum.values]


def test_index_declares_no_message_of_its_own_and_re_exports_them() -> None:
    generated = set(DECLARED.findall(COMMITTED.read_text(encoding="utf-8")))
    index = (CLIENT / "index.d.ts").read_text(encoding="utf-8")
    assert not set(DECLARED.findall(index)) & generated
    assert "export * from './messages';" in index
    imported = re.search(r"import type \{([^}]*)\} from './messages';", index)
    assert imported and set(re.findall(r"\w+", imported.group(1))) <= generated
    assert "messages.d.ts" in (CLIENT / "package.json").read_text(encoding="utf-8")


def test_a_contract_change_changes_the_types(generator: ModuleType, tmp_path: Path) -> None:
    """What makes the freshness test fail: a field added to proto/ appears in the output."""
    proto = edited_contract(
        tmp_path,
        "  int64 generation = 3;\n}",
        "  int64 generation = 3;\n  // Seeds that were expanded.\n  repeated Corpus seen = 4;\n}",
    )
    rendered = generator.Generator(generator.load(proto)).render()
    assert rendered.encode() != COMMITTED.read_bytes()
    assert "  /** Seeds that were expanded. */\n  seen: Corpus[];\n}" in rendered
