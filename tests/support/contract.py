"""A copy of the contract with one edit, for the tests that show a generator follows it."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def edited_contract(folder: Path, old: str, new: str) -> Path:
    """``proto/`` copied into ``folder`` with the first ``old`` of retrieval.proto replaced by
    ``new``; returns the copy's root. Fails when ``old`` is not in the contract any more."""
    root = folder / "proto"
    shutil.copytree(REPO / "proto", root)
    contract = root / "scriptorium" / "v1" / "retrieval.proto"
    text = contract.read_text(encoding="utf-8")
    changed = text.replace(old, new, 1)
    assert changed != text, f"{old!r} is not in the contract"
    contract.write_text(changed, encoding="utf-8")
    return root
