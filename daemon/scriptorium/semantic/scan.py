"""The pass over every vector a search makes, on int8 codes of the rows.

Finding a query's nearest blocks reads every vector of the generation once per search. As
float32 that pass is bound by memory (384 floats a block: 94 MB for 61,000 blocks, ~16 ms, and
all of it resident), so it reads int8 codes instead: a quarter of the bytes, one scale per row.
The codes only choose which rows are read exactly: the nearest blocks are the best of the
``prefilter`` rows the codes rank highest, ordered by their float32 cosines, so every score a
search reports is exact. A block the codes misplace by more than that margin is what the
approximation can cost (measured identical on the ranking suite; docs/ranking.md).

The dot products, and the choice of each corpus's best rows from them, run in the compiled
extension (``native/src/vectors.rs``) when it is installed, in one pass that keeps no score
array; the numpy expressions here are the reference and give the same integers and rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from scriptorium.text.compiled import native_part

# Rows quantized at a time, through one float32 buffer (making the codes of a large index
# leaves no temporaries behind in the allocator).
CHUNK_ROWS = 1024
# The largest code magnitude: symmetric, so a code's negation is a code.
PEAK = 127
# The corpus byte of a row without a vector (``vectors.NONE``).
NONE = 255


def prefilter(limit: int) -> int:
    """Rows read exactly for ``limit`` nearest blocks: four times as many, at least 200."""
    return max(4 * limit, 200)


def quantize(rows: np.ndarray, which: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes of ``rows`` (of the rows ``which`` only, in that order, when given; each
    scaled so its largest magnitude is ``PEAK``) and each one's scale (a code times its scale
    is about the row)."""
    dims = rows.shape[1]
    count = len(rows) if which is None else len(which)
    codes = np.empty((count, dims), dtype=np.int8)
    scales = np.empty(count, dtype=np.float32)
    buffer = np.empty((min(count, CHUNK_ROWS), dims), dtype=np.float32)
    for start in range(0, count, CHUNK_ROWS):
        taken = slice(start, start + CHUNK_ROWS)
        chunk = np.asarray(rows[taken] if which is None else rows[which[taken]], dtype=np.float32)
        work = buffer[: len(chunk)]
        np.abs(chunk, out=work)
        peak = work.max(axis=1) if dims else np.zeros(len(chunk), np.float32)
        scale = np.where(peak > 0, peak / PEAK, 1.0).astype(np.float32)
        np.divide(chunk, scale[:, None], out=work)
        np.rint(work, out=work)
        codes[start : start + len(chunk)] = work
        scales[start : start + len(chunk)] = scale
    return codes, scales


def query_code(query: np.ndarray) -> np.ndarray:
    """The query's int8 code (its scale is the same for every row, so it is not kept): what
    :func:`quantize` makes of it as one row, in the same float32 steps without its buffers."""
    row = np.asarray(query, dtype=np.float32)
    peak = np.abs(row).max() if row.size else np.float32(0)
    scale = peak / PEAK if peak > 0 else np.float32(1.0)
    return np.rint(row / scale).astype(np.int8)


def dots(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The int32 dot product of each row of ``codes`` with the int8 ``query``."""
    out = np.empty(len(codes), dtype=np.int32)
    if not len(codes):
        return out
    compiled = _compiled()
    if compiled is not None:
        compiled(np.ascontiguousarray(codes), np.ascontiguousarray(query), out)
    else:
        out[:] = reference_dots(codes, query)
    return out


def reference_dots(codes: np.ndarray, query: np.ndarray) -> np.ndarray:
    """What the compiled scan computes, in numpy."""
    return np.einsum("ij,j->i", codes, query, dtype=np.int32)


def best_rows(
    codes: np.ndarray,
    query: np.ndarray,
    scales: np.ndarray,
    corpora: np.ndarray,
    wanted: Sequence[int | None],
    count: int,
) -> list[np.ndarray]:
    """For each corpus of ``wanted`` (None: any row that has one), the rows (ascending) of its
    ``count`` best approximate scores (each row's dot product with ``query`` times its scale);
    where scores tie at the margin, the lower row is kept."""
    compiled = native_part("int8_best_rows")
    if compiled is not None and len(codes):
        out = np.empty((len(wanted), count), dtype=np.int64)
        counts = compiled(
            np.ascontiguousarray(codes),
            np.ascontiguousarray(query),
            np.ascontiguousarray(scales, dtype=np.float32),
            np.ascontiguousarray(corpora, dtype=np.uint8),
            list(wanted),
            count,
            out,
        )
        return [rows[:n] for rows, n in zip(out, counts, strict=True)]
    return reference_best_rows(dots(codes, query) * scales, corpora, wanted, count)


def reference_best_rows(
    scores: np.ndarray, corpora: np.ndarray, wanted: Sequence[int | None], count: int
) -> list[np.ndarray]:
    """What the compiled selection computes, in numpy, from every row's score."""
    out = []
    for corpus in wanted:
        rows = np.flatnonzero(corpora != NONE if corpus is None else corpora == corpus)
        if count < len(rows):
            of = scores[rows]
            bar = -np.partition(-of, count - 1)[count - 1]  # the count-th best score
            above = rows[of > bar]
            rows = np.concatenate([above, rows[of == bar][: count - len(above)]])
        out.append(np.sort(rows[:count]) if count else rows[:0])
    return out


def _compiled() -> Callable[[np.ndarray, np.ndarray, np.ndarray], None] | None:
    return native_part("int8_dots")
