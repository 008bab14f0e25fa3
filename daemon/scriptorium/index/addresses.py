"""Block id -> its address in one generation's tantivy index.

A lexical hit knows where its block is in the index, so it reads the features the block was
indexed with (``text/features.py``). A block another route finds (the semantic retriever's
nearest blocks) knows only its id; without its address the ranking would read its body and
make the same features again, holding the body in the text cache and its memos. This table
gives those blocks their address, so they carry stored features too.

Two sorted ``int64`` arrays, 16 bytes a block (1 MB at 60,000 blocks), made once per
generation from the index's block id column, read by ranges of ids so that a search's hits
(one Python object each) never number more than about ``CHUNK`` at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tantivy

from scriptorium.index import schema as S
from scriptorium.index.guard import GuardedSearcher

if TYPE_CHECKING:
    import numpy as np

# Blocks read per search of the id column (block ids are hashes, spread evenly over 63 bits).
CHUNK = 16_384
_ID_SPACE = 1 << 63


class BlockAddresses:
    """The addresses of every block live in ``searcher``'s generation, by block id."""

    __slots__ = ("_addresses", "_ids")

    def __init__(self, searcher: GuardedSearcher, schema: tantivy.Schema) -> None:
        import numpy as np

        count = searcher.num_docs
        parts = max(1, -(-count // CHUNK))
        step = _ID_SPACE // parts
        ids: list[np.ndarray] = []
        packed: list[np.ndarray] = []
        for part in range(parts):
            low = part * step
            high = _ID_SPACE - 1 if part == parts - 1 else low + step - 1
            query = tantivy.Query.range_query(schema, S.BID, tantivy.FieldType.Unsigned, low, high)
            found = [
                address for _, address in searcher.search(query, max(count, 1), count=False).hits
            ]
            values = searcher.fast_field_values(S.BID, found)
            # A document without a block id (none is written so) is no block: left out, as
            # the lexical path leaves it out.
            pairs = [(bid, a) for bid, a in zip(values, found, strict=True) if bid is not None]
            ids.append(np.fromiter((bid for bid, _ in pairs), dtype=np.int64, count=len(pairs)))
            packed.append(
                np.fromiter(
                    ((a.segment_ord << 32) | a.doc for _, a in pairs),
                    dtype=np.int64,
                    count=len(pairs),
                )
            )
        every = np.concatenate(ids)  # one part at least, even over an empty index
        order = np.argsort(every, kind="stable")
        self._ids = every[order]
        self._addresses = np.concatenate(packed)[order]

    def __len__(self) -> int:
        return len(self._ids)

    def get(self, bid: int) -> tantivy.DocAddress | None:
        """Where block ``bid`` is, or None when this generation's index does not hold it."""
        ids = self._ids
        at = int(ids.searchsorted(bid))
        if at >= len(ids) or int(ids[at]) != bid:
            return None
        packed = int(self._addresses[at])
        return tantivy.DocAddress(packed >> 32, packed & 0xFFFFFFFF)
