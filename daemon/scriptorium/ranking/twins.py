"""Near-duplicate detection: which better result a candidate's words copy, if any.

The test is exact Jaccard over word sets (``text.features.word_set``). Most pairs compared
are not near-duplicates, and on a tree of copied pages (variants of one example program, a
vendored copy, pages copied into another tree) most of them have word sets of like size,
which the size bound lets through. Each word set therefore carries a signature made once per
block (``text.features.WordSet``, one bit per word): a bit set in one signature and not in
the other stands for at least one word of that set the other lacks, so counting those bits
bounds the shared words from above without looking at a word. Only a pair whose bound could
still reach the threshold is intersected.
"""

from __future__ import annotations

from scriptorium.text.features import WordSet


def near_duplicate(found: WordSet, shown: list[WordSet], similarity: float) -> int | None:
    """The index of the first word set in ``shown`` that ``found`` shares at least
    ``similarity`` of (Jaccard), if any: variants of one example program, a copied page.

    The test is ``shared >= similarity * (size + other_size - shared)``; it holds for more
    shared words, never for fewer, so a pair whose upper bound on the shared words fails it
    fails it for the true count as well, and the bounds skip no pair that would match.
    """
    size, bits = found.size, found.bits
    for index, other in enumerate(shown):
        other_size, other_bits = other.size, other.bits
        # |A ∩ B| / |A ∪ B| >= s needs min/max of the sizes >= s: many pairs stop here.
        if size < other_size:
            if size < similarity * other_size:
                continue
        elif other_size < similarity * size or not size:
            continue
        total = size + other_size
        # Each bit only one side has is a word of that side the other lacks: the shared words
        # are at most size - (A's own bits) and other_size - (B's own bits), so at most half
        # of total - (the bits they differ in).
        bound = (total - (bits ^ other_bits).bit_count()) // 2
        if bound < similarity * (total - bound):
            continue
        shared = len(found.words & other.words)  # made only now, when a pair needs them
        if shared >= similarity * (total - shared):
            return index
    return None
