"""Damaging a stored blob where it lives, loose or in a bundle, as a bad disk would."""

from __future__ import annotations

from scriptorium.index.store import BlobStore


def damage_blob(store: BlobStore, name: str) -> None:
    """Overwrite the first 8 bytes of blob ``name`` (its zlib header among them)."""
    found = store.where(name)
    assert found is not None, f"no blob {name[:12]}"
    path, offset, length = found
    assert length >= 8
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(b"not zlib")
