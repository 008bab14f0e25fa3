"""Block vectors on disk: one checksummed, memory-mapped file per generation, and the partial
file a build appends to so its progress outlives a restart.

A vector file (``gen-<N>.vec``) is a header line of JSON (model, dimensions, count, vectors,
the sha256 of what follows), then the block ids (int64, sorted), one corpus byte per block
(0 docs, 1 code, 255 none), a hash of each block's passage (int64, 0 unknown), and the unit
vectors (float32) of the blocks that have one, in block order, each part starting at a
multiple of 64 bytes. Blocks the encoder does not read (translations, generated files) have no
row: over a tree with many, the file and what serving maps of it are a fraction of the size
(27 instead of 95 MB over the FastAPI corpus at 10×). The first two formats (no hashes; a
zero row for every block without a vector) are still read. A file is written whole to a
temporary name and renamed, so a reader sees a whole file or none. Serving maps it and keeps
an int8 code of each row in memory (a quarter of the vectors' size): every search passes over
the codes, and reads only its candidates' float32 rows (semantic/scan.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import struct
import threading
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from cachetools import LRUCache

from scriptorium.semantic import scan

MAGIC = b"scriptorium-vectors-3\n"
# The earlier formats, still read: a row for every block (2), and no passage hashes (1).
MAGIC_2 = b"scriptorium-vectors-2\n"
MAGIC_1 = b"scriptorium-vectors-1\n"
ALIGN = 64
DOCS, CODE = 0, 1
# A block the encoder does not read (a translation, CJK text: the model is English), kept with
# a zero row so later generations need not look at it again.
NONE = scan.NONE


class CorruptVectorsError(RuntimeError):
    """A vector file does not decode or fails its checksum (it is removed and made again)."""


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


# Queries whose chosen rows an index remembers.
HEADS_MEMO = 256
# A head's block ids (int64) and their cosines with the query (float32), best first: arrays,
# a sixth of the memory of tuples of Python numbers, since the memo holds hundreds.
Ranked = tuple[np.ndarray, np.ndarray]


class HeadsMemo:
    """The rows :meth:`VectorIndex.heads` chose for a query vector (with its limit and
    corpora). Agents ask the same question again, and the pass reads every code of the
    generation: over sympy's 32,000 rows 0.5–0.9 ms, most of what the retriever adds to a
    short question. Held by the index, so another generation's vectors start with none;
    searches in threads (composed calls) share it, hence the lock.

    It also keeps the order :meth:`VectorIndex.nearest` read those rows in (their exact
    cosines, hundreds of float32 rows read per corpus), for the rows it holds."""

    def __init__(self) -> None:
        self._chosen: LRUCache = LRUCache(maxsize=HEADS_MEMO)
        # (query, id of a head held above) -> (that head, its block ids and cosines, best
        # first); the head is kept and compared, so an id reused after eviction never matches.
        self._ranked: LRUCache = LRUCache(maxsize=2 * HEADS_MEMO)
        self._lock = threading.Lock()

    def get(self, key: tuple) -> list[np.ndarray] | None:
        with self._lock:
            return self._chosen.get(key)

    def put(self, key: tuple, rows: list[np.ndarray]) -> None:
        for chosen in rows:
            chosen.setflags(write=False)  # shared by every search that asks again
        with self._lock:
            self._chosen[key] = rows

    def ranked(self, query: bytes, head: np.ndarray) -> Ranked | None:
        """The order :meth:`keep_ranked` kept for ``head`` read against ``query``, if any."""
        with self._lock:
            held = self._ranked.get((query, id(head)))
        return held[1] if held is not None and held[0] is head else None

    def keep_ranked(self, query: bytes, head: np.ndarray, ranked: Ranked) -> None:
        with self._lock:
            self._ranked[(query, id(head))] = (head, ranked)


@dataclass(frozen=True, slots=True)
class VectorIndex:
    """The vectors of one generation's blocks: sorted ids, a corpus per block, unit rows."""

    model: str
    generation: int
    bids: np.ndarray  # int64, sorted
    corpora: np.ndarray  # uint8
    # float32, often a memory map: a row per block, or (``dense`` given) per block with a vector.
    matrix: np.ndarray
    # A hash of each block's passage (int64, 0 unknown): a block whose id is new but whose
    # passage is not (an edit elsewhere in its file) takes the vector its text already has.
    texts: np.ndarray | None = None
    # The int8 codes and scales (semantic/scan.py) of the rows with a vector (code i is row
    # ``corpus_rows[2][i]``; a code tree can have a third of its blocks without one), and
    # their corpora, made once in the vector thread (``with_codes``) before the index
    # serves; without them the pass reads the float32 rows.
    codes: np.ndarray | None = None
    scales: np.ndarray | None = None
    code_corpora: np.ndarray | None = None
    # The rows of each corpus (docs, code, either), made with the codes.
    corpus_rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    # Each block's row of ``matrix`` (-1: none) when it holds only the blocks with a vector
    # (a file read from disk); None when it holds a row for every block (one being made).
    dense: np.ndarray | None = None
    # The rows :meth:`heads` chose for the queries asked last (made anew with each index,
    # ``dataclasses.replace`` included).
    chosen: HeadsMemo = field(default_factory=HeadsMemo, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.bids)

    def with_codes(self) -> VectorIndex:
        """This index with its codes made (what serving searches over)."""
        rows = (self.rows_for(DOCS), self.rows_for(CODE), self.rows_for(None))
        # A dense matrix holds exactly the rows with a vector, in order.
        codes, scales = scan.quantize(self.matrix, None if self.dense is not None else rows[2])
        return dataclasses.replace(
            self,
            codes=codes,
            scales=scales,
            code_corpora=np.ascontiguousarray(self.corpora[rows[2]]),
            corpus_rows=rows,
        )

    def rows_for(self, corpus: int | None) -> np.ndarray:
        """The rows of ``corpus`` (of either when None; never a block without a vector)."""
        if self.corpus_rows is not None:
            return self.corpus_rows[2 if corpus is None else corpus]
        wanted = self.corpora != NONE if corpus is None else self.corpora == corpus
        return np.flatnonzero(wanted)

    def rows_of(self, bids: np.ndarray) -> np.ndarray:
        """The row of each of ``bids`` (-1 where a block has no vector)."""
        if not len(self.bids):
            return np.full(len(bids), -1, dtype=np.int64)
        at = np.searchsorted(self.bids, bids)
        at = np.minimum(at, len(self.bids) - 1)
        return np.where(self.bids[at] == bids, at, -1)

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of block ``rows`` (a zero row for a block without one)."""
        if self.dense is None:
            return self.matrix[rows]
        at = self.dense[rows]
        out = (
            self.matrix[np.maximum(at, 0)]
            if len(self.matrix)
            else np.zeros((len(rows), self.matrix.shape[1]), dtype=np.float32)
        )
        out[at < 0] = 0.0
        return out

    def similarity(self, query: np.ndarray, bids: np.ndarray) -> np.ndarray:
        """The cosine of ``query`` with each of ``bids`` (NaN where a block has no vector)."""
        rows = self.rows_of(bids)
        out = np.full(len(bids), np.nan, dtype=np.float32)
        have = rows >= 0
        if have.any():
            out[have] = self.vectors(rows[have]) @ query
            out[have & (self.corpora[np.maximum(rows, 0)] == NONE)] = np.nan
        return out

    def heads(
        self, query: np.ndarray, limit: int, corpora: Sequence[int | None]
    ) -> list[np.ndarray]:
        """For each of ``corpora`` (None: either), the rows (ascending) :meth:`nearest` reads
        exactly for its first ``limit`` blocks: with the codes made, the best
        ``scan.prefilter(limit)`` by the codes, all chosen in one pass over them; without,
        every row."""
        rows = [self.rows_for(corpus) for corpus in corpora]
        if self.codes is None or self.scales is None or self.code_corpora is None:
            return rows
        key = (np.asarray(query, dtype=np.float32).tobytes(), limit, tuple(corpora))
        held = self.chosen.get(key)
        if held is not None:
            return held
        count = scan.prefilter(limit)
        read = [c for c, of in zip(corpora, rows, strict=True) if len(of) > count]
        coded = self.rows_for(None)
        best = iter(
            scan.best_rows(
                self.codes, scan.query_code(query), self.scales, self.code_corpora, read, count
            )
            if read
            else []
        )
        # A corpus with no more rows than the prefilter reads all of them.
        chosen = [coded[next(best)] if len(of) > count else of for of in rows]
        self.chosen.put(key, chosen)
        return chosen

    def nearest(
        self,
        query: np.ndarray,
        limit: int,
        corpus: int | None = None,
        head: np.ndarray | None = None,
    ) -> Iterator[tuple[int, float]]:
        """Block ids by decreasing cosine with ``query`` (of one corpus when given), with the
        cosine. The first ``limit`` come from the rows :meth:`heads` chooses (the best
        ``scan.prefilter(limit)`` by the codes, read exactly); a caller that reads on (a
        filter dropped some) gets every other row by its exact cosine. ``head`` (from
        :meth:`heads`) spares a caller asking for several corpora a pass each."""
        if head is None:
            head = self.heads(query, limit, [corpus])[0]
        if not len(head):
            return
        bids, cosines = self._ranked_head(query, head)
        yield from zip(bids.tolist(), cosines.tolist(), strict=True)
        rows = self.rows_for(corpus)
        if len(head) == len(rows):
            return
        # The caller read on past the head: the rest by exact cosine.
        given = set(head.tolist())
        every = self.vectors(rows) @ query
        for at in np.argsort(-every, kind="stable").tolist():
            row = int(rows[at])
            if row not in given:
                yield int(self.bids[row]), float(every[at])

    def _ranked_head(self, query: np.ndarray, head: np.ndarray) -> Ranked:
        """``head``'s block ids by decreasing exact cosine with ``query``, with the cosines.
        For a head the memo holds (read-only: :meth:`heads` chose it for this query) the order
        is kept, so a query asked again reads none of the rows."""
        key = np.asarray(query, dtype=np.float32).tobytes()
        held = None if head.flags.writeable else self.chosen.ranked(key, head)
        if held is not None:
            return held
        cosines = self.vectors(head) @ query  # head is in file order: reads go forward
        order = np.argsort(-cosines, kind="stable")
        ranked = (self.bids[head[order]], cosines[order])
        if not head.flags.writeable:
            for array in ranked:
                array.setflags(write=False)  # shared by every search that asks again
            self.chosen.keep_ranked(key, head, ranked)
        return ranked


def text_hash(text: str) -> int:
    """A passage's hash as stored in a vector file (never 0, which means unknown)."""
    value = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    value = value - (1 << 64) if value >= 1 << 63 else value
    return value or 1


def write(path: Path, index: VectorIndex) -> None:
    """Write ``index`` to ``path`` atomically (a temporary name, fsync, rename)."""
    bids = np.ascontiguousarray(index.bids, dtype=np.int64)
    corpora = np.ascontiguousarray(index.corpora, dtype=np.uint8)
    texts = np.zeros(len(bids), dtype=np.int64) if index.texts is None else index.texts
    texts = np.ascontiguousarray(texts, dtype=np.int64)
    # A row only for each block with a vector (a matrix being made has one for every block).
    rows = index.matrix if index.dense is not None else index.matrix[corpora != NONE]
    matrix = np.ascontiguousarray(rows, dtype=np.float32)
    parts = [bids.tobytes(), corpora.tobytes(), texts.tobytes(), matrix.tobytes()]
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    header = (
        MAGIC
        + json.dumps(
            {
                "model": index.model,
                "generation": index.generation,
                "count": len(bids),
                "vectors": len(matrix),
                "dimensions": int(matrix.shape[1]) if matrix.ndim == 2 else 0,
                "sha256": digest.hexdigest(),
            }
        ).encode()
        + b"\n"
    )
    temporary = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    with temporary.open("wb") as handle:
        offset = len(header)
        handle.write(header)
        for part in parts:
            pad = _aligned(offset) - offset
            handle.write(b"\0" * pad)
            handle.write(part)
            offset += pad + len(part)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def read(path: Path, *, verify: bool = True) -> VectorIndex:
    """The vector file at ``path``, its arrays mapped from disk (checked first unless
    ``verify`` is False). Raises CorruptVectorsError when it does not decode or match."""
    try:
        with path.open("rb") as handle:
            magic = handle.read(len(MAGIC))
            line = handle.readline(4096)
        if magic not in (MAGIC, MAGIC_2, MAGIC_1) or not line.endswith(b"\n"):
            raise ValueError("not a vector file")
        hashed, dense = magic != MAGIC_1, magic == MAGIC
        meta = json.loads(line)
        count, dims = int(meta["count"]), int(meta["dimensions"])
        rows = int(meta["vectors"]) if dense else count
        if not 0 <= rows <= count:
            raise ValueError("more vectors than blocks")
        offset = _aligned(len(MAGIC) + len(line))
        sizes = (count * 8, count, *((count * 8,) if hashed else ()), rows * dims * 4)
        starts = []
        for size in sizes:
            starts.append(offset)
            offset = _aligned(offset + size)
        if path.stat().st_size < starts[-1] + sizes[-1]:
            raise ValueError("truncated")
        if verify and count:
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                for start, size in zip(starts, sizes, strict=True):
                    handle.seek(start)
                    left = size
                    while left:
                        chunk = handle.read(min(left, 1 << 20))
                        if not chunk:
                            raise ValueError("truncated")
                        digest.update(chunk)
                        left -= len(chunk)
            if digest.hexdigest() != meta["sha256"]:
                raise ValueError("checksum mismatch")
        if not count:
            empty = np.zeros((0, dims), dtype=np.float32)
            return VectorIndex(
                meta["model"],
                int(meta["generation"]),
                np.zeros(0, np.int64),
                np.zeros(0, np.uint8),
                empty,
            )
        bids = _mapped(path, np.int64, starts[0], (count,))
        corpora = _mapped(path, np.uint8, starts[1], (count,))
        texts = _mapped(path, np.int64, starts[2], (count,)) if hashed else None
        matrix = (
            _mapped(path, np.float32, starts[-1], (rows, dims))
            if rows
            else np.zeros((0, dims), dtype=np.float32)
        )
        at = None
        if dense:
            with_vector = corpora != NONE
            if int(with_vector.sum()) != rows:
                raise ValueError("vectors do not match the blocks' corpora")
            at = np.where(with_vector, np.cumsum(with_vector) - 1, -1)
        return VectorIndex(
            str(meta["model"]), int(meta["generation"]), bids, corpora, matrix, texts, dense=at
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptVectorsError(f"{path.name}: {exc}") from None


def _mapped(path: Path, dtype: type, offset: int, shape: tuple[int, ...]) -> np.ndarray:
    """Part of a vector file, mapped read-only, as a plain array over the map: a search
    indexes these arrays several times, and slicing ``np.memmap`` itself makes a ``memmap``
    each time through Python-level bookkeeping (5 % of a search with vectors)."""
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape).view(np.ndarray)


# -- the partial file: encoded rows appended as they are made -----------------------------------

_CHUNK = struct.Struct("<II")  # rows, crc32 of the rows' bytes


def append_partial(path: Path, bids: np.ndarray, corpora: np.ndarray, rows: np.ndarray) -> None:
    """Append encoded rows to the partial file (a torn last chunk is dropped when read)."""
    payload = (
        np.ascontiguousarray(bids, dtype=np.int64).tobytes()
        + np.ascontiguousarray(corpora, dtype=np.uint8).tobytes()
        + np.ascontiguousarray(rows, dtype=np.float32).tobytes()
    )
    with path.open("ab") as handle:
        handle.write(_CHUNK.pack(len(bids), zlib.crc32(payload)) + payload)


def read_partial(path: Path, dimensions: int) -> dict[int, tuple[int, np.ndarray]]:
    """Every whole, intact chunk of a partial file: block id → (corpus, vector)."""
    found: dict[int, tuple[int, np.ndarray]] = {}
    try:
        data = path.read_bytes()
    except OSError:
        return found
    at = 0
    while at + _CHUNK.size <= len(data):
        count, crc = _CHUNK.unpack_from(data, at)
        size = count * (8 + 1 + dimensions * 4)
        payload = data[at + _CHUNK.size : at + _CHUNK.size + size]
        if len(payload) < size or zlib.crc32(payload) != crc:
            break
        bids = np.frombuffer(payload, dtype=np.int64, count=count)
        corpora = np.frombuffer(payload, dtype=np.uint8, count=count, offset=count * 8)
        rows = np.frombuffer(payload, dtype=np.float32, offset=count * 9).reshape(count, dimensions)
        for bid, corpus, row in zip(bids.tolist(), corpora.tolist(), rows, strict=True):
            found[bid] = (corpus, row)
        at += _CHUNK.size + size
    return found
