"""The block table: ids to (document, index) as sorted arrays, stored, and spliced on update."""

from __future__ import annotations

import random
from array import array

import pytest

from scriptorium.index.blocktable import BlockTable, CorruptBlockTableError


class Doc:
    """What the table reads of a served document: its record's id bytes and ``bids``."""

    def __init__(self, name: str, ids: list[int]) -> None:
        self.name = name
        self.record = (None,) * 11 + (array("q", ids).tobytes(),)

    @property
    def bids(self) -> array:
        return array("q", self.record[11])


def _docs(rng: random.Random, count: int) -> list[Doc]:
    return [
        Doc(f"d{i}", [rng.getrandbits(63) for _ in range(rng.randint(0, 9))]) for i in range(count)
    ]


def _expected(docs: list[Doc]) -> dict[int, tuple[Doc, int]]:
    return {bid: (doc, i) for doc in docs for i, bid in enumerate(doc.bids)}


def _as_dict(table: BlockTable) -> dict[int, tuple[Doc, int]]:
    return dict(table.items())


def test_every_id_maps_to_its_document_and_index_and_others_to_none():
    rng = random.Random(7)
    docs = _docs(rng, 200)
    table = BlockTable.of(docs)
    expected = _expected(docs)
    assert len(table) == len(expected)
    for bid, (doc, index) in expected.items():
        assert table.get(bid) == (doc, index)
        assert bid in table
    assert table.get(-5) is None and table.get(2**62 + 12345) is None
    assert list(table) == sorted(expected)


def test_a_stored_table_reads_back_the_same_and_a_damaged_one_is_refused():
    rng = random.Random(8)
    docs = _docs(rng, 50)
    table = BlockTable.of(docs)
    again = BlockTable.decode(table.encode(), docs)
    assert _as_dict(again) == _as_dict(table)
    with pytest.raises(CorruptBlockTableError):
        BlockTable.decode(b"not a table" + table.encode(), docs)
    with pytest.raises(CorruptBlockTableError):
        BlockTable.decode(table.encode()[:-3], docs)
    with pytest.raises(CorruptBlockTableError):
        BlockTable.decode(table.encode(), docs[:10])  # names documents that are not there


@pytest.mark.parametrize("seed", range(6))
def test_an_update_spliced_into_the_table_equals_one_sorted_from_scratch(seed):
    rng = random.Random(seed)
    docs = _docs(rng, 300)
    table = BlockTable.of(docs)
    for _ in range(5):
        gone, came = [], []
        nxt = list(docs)
        for _ in range(rng.randint(0, 6)):  # replaced in place
            at = rng.randrange(len(nxt))
            old = nxt[at]
            if old in came:
                continue
            new = Doc(old.name, [rng.getrandbits(63) for _ in range(rng.randint(0, 9))])
            nxt[at] = new
            gone.append(old)
            came.append(new)
        for _ in range(rng.randint(0, 4)):  # removed
            at = rng.randrange(len(nxt))
            if nxt[at] in came:
                continue
            gone.append(nxt.pop(at))
        for _ in range(rng.randint(0, 4)):  # new paths, anywhere in the order
            new = Doc("new", [rng.getrandbits(63) for _ in range(rng.randint(1, 9))])
            nxt.insert(rng.randrange(len(nxt) + 1), new)
            came.append(new)
        table = table.changed(nxt, gone, came)
        docs = nxt
        assert _as_dict(table) == _expected(docs)
        assert list(table) == sorted(_expected(docs))
