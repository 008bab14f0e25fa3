"""Damaging a stored blob where it lives, loose or in a bundle, as a bad disk would."""

from __future__ import annotations

from pathlib import Path

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


def flip_blob_bit(store: BlobStore, name: str) -> None:
    """Flip one bit in the middle of blob ``name``, where it lives, as a bad sector would."""
    found = store.where(name)
    assert found is not None, f"no blob {name[:12]}"
    path, offset, length = found
    with open(path, "r+b") as handle:
        handle.seek(offset + length // 2)
        byte = handle.read(1)
        handle.seek(offset + length // 2)
        handle.write(bytes([byte[0] ^ 0x10]))


def flip_table_bit(bundles: Path) -> Path:
    """Flip one bit in the middle of the (only) bundle table under ``bundles``; its path."""
    (table,) = bundles.glob("*.table")
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0x01
    table.write_bytes(bytes(data))
    return table
