"""Which served paths end with given path segments, without a table of every suffix.

A dict from every trailing run of segments of every path to its files held about seven
entries per file (44 MB of the heap at 91,200 files, built by the first search that named a
file). This holds one position per file, sorted by the reversed lower-cased path, and
answers a suffix with four binary searches: the paths equal to it, then those that end with
``/`` and it (reversed: that start with it and ``/``).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable


class PathSuffixes:
    """Positions of the paths that end with whole lower-cased path segments."""

    __slots__ = ("_key", "_order")

    def __init__(self, count: int, path_at: Callable[[int], str]) -> None:
        def key(at: int) -> str:
            return path_at(at).lower()[::-1]

        self._key = key
        self._order = array("q", sorted(range(count), key=key))

    def positions(self, suffix: str, limit: int | None = None) -> list[int]:
        """Positions whose path is ``suffix`` or ends with ``/`` + ``suffix`` (at most
        ``limit`` of them, in no particular order)."""
        if not suffix:
            return []
        target = suffix.lower()[::-1]
        order, key = self._order, self._key
        # "0" follows "/" in code-point order: [target + "/", target + "0") is every
        # reversed path that continues with a separator after the suffix.
        found: list[int] = []
        for low, high in ((target, None), (target + "/", target + "0")):
            start = bisect.bisect_left(order, low, key=key)
            if high is None:
                end = bisect.bisect_right(order, low, lo=start, key=key)
            else:
                end = bisect.bisect_left(order, high, lo=start, key=key)
            found.extend(order[start:end])
            if limit is not None and len(found) >= limit:
                return found[:limit]
        return found
