"""Near-duplicate detection: the word-set signatures rule pairs out without changing a verdict.

The word sets are those of real blocks of the FastAPI corpus and of copies mutated the way
the benchmark's scaled corpora are (``bench/corpus.py``): word sets of like size, most of
them not near-duplicates, which the size bound alone lets through to an intersection.
"""

from __future__ import annotations

import itertools

import pytest

from bench.corpus import _mutate
from scriptorium.ranking.twins import near_duplicate
from scriptorium.text.features import SIGNATURE_BITS, WordSet, word_set, word_set_of
from tests.support.daemon import CORPUS

TUTORIAL = CORPUS / "docs_src"


class CountedWords(frozenset):
    """A word set that counts the intersections made with it."""

    made = 0

    def __and__(self, other):
        CountedWords.made += 1
        return frozenset.__and__(self, other)


def _exact(found: frozenset[str], shown: list[frozenset[str]], similarity: float) -> int | None:
    """The first set in ``shown`` whose Jaccard with ``found`` reaches ``similarity``."""
    for index, other in enumerate(shown):
        union = len(found | other)
        if union and len(found & other) >= similarity * union:
            return index
    return None


def _texts() -> list[str]:
    files = sorted(TUTORIAL.rglob("*.py"))[:60]
    texts = [f.read_text("utf-8") for f in files if f.stat().st_size > 300]
    # Each file and two mutated copies of it, as in a 3x scaled corpus.
    return [variant for text in texts for variant in (text, _mutate(text, 1), _mutate(text, 2))]


def _counted(text: str) -> WordSet:
    found = word_set_of(word_set(text))
    return WordSet(CountedWords(found.words), found.size, found.bits)


@pytest.mark.parametrize("similarity", [0.5, 0.8, 0.95])
def test_signatures_give_the_exact_verdict_with_fewer_intersections(fastapi_corpus, similarity):
    sets = [_counted(text) for text in _texts()]
    assert len(sets) > 60
    CountedWords.made = 0
    pairs_in_size = 0
    for i, found in enumerate(sets):
        shown = sets[max(0, i - 25) : i]
        verdict = near_duplicate(found, shown, similarity)
        # The verdict of the plain Jaccard test over the words, pair by pair (not counted).
        made = CountedWords.made
        assert verdict == _exact(
            frozenset(found.words), [frozenset(s.words) for s in shown], similarity
        )
        CountedWords.made = made
        pairs_in_size += sum(
            min(found.size, s.size) >= similarity * max(found.size, s.size) for s in shown
        )
    # Without the signatures every pair of like size is intersected; with them only those the
    # bound cannot rule out (here: about the matches).
    assert pairs_in_size > 100
    assert CountedWords.made < pairs_in_size / 3


def test_a_signature_has_one_bit_per_word_hash():
    found = word_set_of(frozenset({"declare", "path", "parameters"}))
    assert found.size == 3
    assert 1 <= found.bits.bit_count() <= 3
    assert found.bits < 1 << SIGNATURE_BITS
    assert word_set_of(frozenset()).bits == 0


def test_near_threshold_pairs_are_decided_by_the_words():
    # Sets built to sit on either side of the threshold: the bound never decides these.
    base = [f"w{i}" for i in range(100)]
    for shared, extra in itertools.product((78, 80, 82), (0, 2, 5)):
        a = frozenset(base)
        b = frozenset(base[:shared] + [f"x{i}" for i in range(100 - shared + extra)])
        expected = _exact(a, [b], 0.8)
        assert near_duplicate(word_set_of(a), [word_set_of(b)], 0.8) == expected
