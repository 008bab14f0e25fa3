"""What a pass of the vector builder keeps while it encodes a generation: its arrays, the
vectors already made by passage, its chunks, and which corpora are complete (``builder``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np

    from scriptorium.semantic import vectors as V

# Passages encoded between two looks at whether a newer generation serves.
CHUNK = 64


class TextVectors:
    """Vectors by passage hash: the served generation's, and those this pass encoded. A
    passage's vector depends on its text alone, so a block whose id is new (its file changed
    elsewhere) or a second block with the same passage takes the vector that text has."""

    def __init__(self, index: V.VectorIndex | None, matrix: np.ndarray) -> None:
        self._index = index
        self._matrix = matrix  # this pass's rows
        self._made: dict[int, int] = {}  # passage hash → row of this pass
        # The served generation's hashes sorted, with their rows: made on the first lookup,
        # so a pass with nothing to encode (a restart) does not sort them.
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None

    def get(self, text: int) -> np.ndarray | None:
        made = self._made.get(text)
        if made is not None:
            return self._matrix[made]
        index = self._index
        if index is None or index.texts is None or not len(index.texts):
            return None
        import numpy as np

        if self._sorted is None:
            rows = np.argsort(index.texts, kind="stable")
            self._sorted = (np.asarray(index.texts)[rows], rows)
        hashes, rows = self._sorted
        at = int(np.searchsorted(hashes, text))
        if at == len(hashes) or int(hashes[at]) != text:
            return None
        return index.vectors(rows[at : at + 1])[0]

    def add(self, text: int, row: int) -> None:
        self._made[text] = row


def chunks(missing: list[int], kinds: np.ndarray) -> Iterator[list[int]]:
    """``missing`` in chunks of at most ``CHUNK``, none spanning two corpora (the docs'
    last chunk ends where they do, so their vectors can serve before any code's is made)."""
    chunk: list[int] = []
    for at in missing:
        if len(chunk) == CHUNK or (chunk and kinds[at] != kinds[chunk[-1]]):
            yield chunk
            chunk = []
        chunk.append(at)
    if chunk:
        yield chunk


class PassBlocks(NamedTuple):
    """A pass's arrays, an entry per block of the generation (filled in place as it goes):
    the id, the corpus, the corpus as the vector file marks it (none: no vector), the vector,
    its passage's hash, and whether it has its vector yet."""

    bids: np.ndarray
    kinds: np.ndarray
    corpora: np.ndarray
    matrix: np.ndarray
    hashes: np.ndarray
    have: np.ndarray


class EarlyCorpora:
    """Which corpora of a first pass have every block's vector, and which of those serve."""

    def __init__(self, kinds: np.ndarray, missing: list[int]) -> None:
        from scriptorium.semantic import vectors as V

        self._kinds = kinds
        present = {int(k) for k in set(kinds.tolist())} & {V.DOCS, V.CODE}
        self._left = dict.fromkeys(present, 0)
        for at in missing:
            self._left[int(kinds[at])] += 1
        self.complete: list[int] = []

    def done(self, chunk: list[int]) -> None:
        for at in chunk:
            self._left[int(self._kinds[at])] -= 1

    def newly_complete(self) -> list[int]:
        """Corpora complete since the last call, while another still encodes (the last
        one's vectors serve with the generation's file)."""
        if not any(self._left.values()):
            return []
        new = [c for c, left in sorted(self._left.items()) if not left and c not in self.complete]
        self.complete.extend(new)
        return new
