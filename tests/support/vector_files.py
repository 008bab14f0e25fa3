"""Vector files as an earlier format wrote them (the daemon still reads them)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from scriptorium.semantic import vectors as V


def format_2(index: V.VectorIndex) -> bytes:
    """``index`` in the second format: a row for every block, zero where it has no vector."""
    rows = index.vectors(np.arange(len(index)))
    matrix = np.where((index.corpora == V.NONE)[:, None], 0.0, rows).astype(np.float32)
    texts = np.zeros(len(index), dtype=np.int64) if index.texts is None else index.texts
    parts = [
        np.asarray(index.bids, dtype=np.int64).tobytes(),
        np.asarray(index.corpora, dtype=np.uint8).tobytes(),
        np.asarray(texts, dtype=np.int64).tobytes(),
        matrix.tobytes(),
    ]
    meta = {
        "model": index.model,
        "generation": index.generation,
        "count": len(index),
        "dimensions": int(matrix.shape[1]),
        "sha256": hashlib.sha256(b"".join(parts)).hexdigest(),
    }
    data = bytearray(V.MAGIC_2 + json.dumps(meta).encode() + b"\n")
    for part in parts:
        data += b"\0" * (-len(data) % V.ALIGN) + part
    return bytes(data)


def rewrite_as_format_2(path: Path) -> None:
    """Replace the vector file at ``path`` with the same vectors in the second format."""
    path.write_bytes(format_2(V.read(path)))
