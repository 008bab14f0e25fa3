"""Block id -> (document, index) over every block of a generation, as three flat arrays.

Search maps each tantivy hit's 63-bit block id back to its document and block. At 600,000
blocks a dict of them costs seconds to make and tens of MB to hold; here the ids are one
sorted ``array('q')``, with the owning document's position and the block's index in two
parallel ``array('i')``, looked up by bisection. A generation stores the three arrays
(``index/blocks.table``, checksummed with the index files), so a cold start reads them in
three C calls and makes no object per block; an update derives the next table from the
served one by slicing (it is sorted once only when most blocks changed, or when a generation
was written without the file).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scriptorium.index.texts import StoredDocument

BLOCK_TABLE_FILE = "blocks.table"
MAGIC = b"scriptorium-blocks-1\n"
# Past this many changed blocks an update sorts the table again instead of splicing it.
SPLICE_LIMIT = 4_096


class CorruptBlockTableError(RuntimeError):
    """A stored block table does not decode, or does not match its documents."""


def _id_bytes(docs: Sequence[StoredDocument], at: int) -> bytes:
    """The block id bytes of the document at ``at`` (without making it, where ``docs`` can)."""
    bids_at = getattr(docs, "bids_at", None)
    return bids_at(at) if bids_at is not None else docs[at].record[11]


def _ids(chunk: bytes) -> array:
    ids = array("q")
    ids.frombytes(chunk)
    return ids


class BlockTable:
    """The block ids of ``docs`` (documents in served order), sorted, with their owners."""

    __slots__ = ("_docs", "_ids", "_index", "_owner")

    def __init__(self, docs: Sequence[StoredDocument], ids: array, owner: array, index: array):
        self._docs, self._ids, self._owner, self._index = docs, ids, owner, index

    # -- making one -------------------------------------------------------------------------

    @classmethod
    def of(cls, docs: Sequence[StoredDocument]) -> BlockTable:
        """Sorted from scratch (a first build, or a generation stored without the table)."""
        chunks = [_id_bytes(docs, at) for at in range(len(docs))]
        ids = array("q")
        ids.frombytes(b"".join(chunks))
        owner = array("i")
        index = array("i")
        for at, chunk in enumerate(chunks):
            count = len(chunk) // 8
            owner.extend([at] * count)
            index.extend(range(count))
        order = sorted(range(len(ids)), key=ids.__getitem__)
        return cls(
            docs,
            array("q", map(ids.__getitem__, order)),
            array("i", map(owner.__getitem__, order)),
            array("i", map(index.__getitem__, order)),
        )

    @classmethod
    def decode(cls, data: bytes, docs: Sequence[StoredDocument]) -> BlockTable:
        """The table a generation stored (``encode``), over its documents in pack order."""
        if not data.startswith(MAGIC):
            raise CorruptBlockTableError("not a block table")
        body = memoryview(data)[len(MAGIC) :]
        count, rest = divmod(len(body), 16)
        if rest:
            raise CorruptBlockTableError("a block table of a partial size")
        ids, owner, index = array("q"), array("i"), array("i")
        ids.frombytes(body[: 8 * count])
        owner.frombytes(body[8 * count : 12 * count])
        index.frombytes(body[12 * count :])
        if count and (max(owner) >= len(docs) or min(owner) < 0):
            raise CorruptBlockTableError("a block table naming documents the pack lacks")
        return cls(docs, ids, owner, index)

    def encode(self) -> bytes:
        return MAGIC + self._ids.tobytes() + self._owner.tobytes() + self._index.tobytes()

    def changed(
        self,
        docs: Sequence[StoredDocument],
        gone: Sequence[StoredDocument],
        came: Sequence[StoredDocument],
    ) -> BlockTable:
        """The table of ``docs`` (the next generation's documents, in order): this one less
        the blocks of ``gone`` and plus those of ``came`` (documents named by identity)."""
        ordinal = {id(doc): at for at, doc in enumerate(docs)}
        remap = array("q", [ordinal.get(id(doc), -1) for doc in self._docs])
        return self.spliced(
            docs, remap, [d.record[11] for d in gone], [ordinal[id(d)] for d in came]
        )

    def spliced(
        self,
        docs: Sequence[StoredDocument],
        remap: array,
        gone: Sequence[bytes],
        came: Sequence[int],
    ) -> BlockTable:
        """The table of ``docs`` (the next generation's documents, in order), by slicing,
        without a sort: ``remap`` gives each old position's new one (-1: gone), ``gone`` the
        block id bytes of the documents that left, ``came`` the positions of those that came."""
        changed = (sum(map(len, gone)) + sum(len(_id_bytes(docs, at)) for at in came)) // 8
        if changed > SPLICE_LIMIT or changed * 4 > len(self._ids):
            return BlockTable.of(docs)
        ids, owner, index = self._ids, self._owner, self._index
        found = (self._position(bid) for chunk in gone for bid in _ids(chunk))
        drop = sorted(at for at in found if at is not None)
        ids, owner, index = (_without(a, drop) for a in (ids, owner, index))
        owner = array("i", map(remap.__getitem__, owner))
        added = sorted(
            (bid, at, i) for at in came for i, bid in enumerate(_ids(_id_bytes(docs, at)))
        )
        ids, owner, index = _with(ids, owner, index, added)
        return BlockTable(docs, ids, owner, index)

    # -- reading it ---------------------------------------------------------------------------

    def _position(self, bid: int) -> int | None:
        at = bisect_left(self._ids, bid)
        return at if at < len(self._ids) and self._ids[at] == bid else None

    def get(self, bid: int) -> tuple[StoredDocument, int] | None:
        at = self._position(bid)
        if at is None:
            return None
        return self._docs[self._owner[at]], self._index[at]

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, bid: object) -> bool:
        return isinstance(bid, int) and self._position(bid) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids)

    def items(self) -> Iterator[tuple[int, tuple[StoredDocument, int]]]:
        docs = self._docs
        for bid, at, i in zip(self._ids, self._owner, self._index, strict=True):
            yield bid, (docs[at], i)

    def values(self) -> Iterator[tuple[StoredDocument, int]]:
        return (value for _, value in self.items())


def _without(values: array, drop: list[int]) -> array:
    """``values`` less the positions ``drop`` (sorted), by slices."""
    if not drop:
        return values
    out = array(values.typecode)
    start = 0
    for at in drop:
        out += values[start:at]
        start = at + 1
    out += values[start:]
    return out


def _with(
    ids: array, owner: array, index: array, added: list[tuple[int, int, int]]
) -> tuple[array, array, array]:
    """The three arrays with the sorted ``added`` (id, owner, index) put in place, by slices."""
    if not added:
        return ids, owner, index
    new_ids, new_owner, new_index = array("q"), array("i"), array("i")
    start = 0
    for bid, at, i in added:
        cut = bisect_left(ids, bid, start)
        new_ids += ids[start:cut]
        new_owner += owner[start:cut]
        new_index += index[start:cut]
        new_ids.append(bid)
        new_owner.append(at)
        new_index.append(i)
        start = cut
    new_ids += ids[start:]
    new_owner += owner[start:]
    new_index += index[start:]
    return new_ids, new_owner, new_index
