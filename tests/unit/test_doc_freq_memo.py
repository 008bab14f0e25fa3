"""A generation's searcher remembers the document frequencies asked of it (abstention asks two
per query term, search after search), and answers them as tantivy does."""

from __future__ import annotations

from scriptorium.index import guard
from scriptorium.index.guard import GuardedSearcher
from tests.unit.test_definition_candidates import engine  # noqa: F401  (the fixture)


class Counting:
    def __init__(self, searcher) -> None:
        self.searcher, self.asked = searcher, 0

    def doc_freq(self, *args):
        self.asked += 1
        return self.searcher.doc_freq(*args)


def test_frequencies_are_tantivys_and_asked_once(engine, monkeypatch):  # noqa: F811
    raw = engine.indexer.snapshot.index.searcher()
    counting = Counting(raw)
    guarded = GuardedSearcher(counting, 7)  # type: ignore[arg-type]
    pairs = [("body", "token"), ("heading", "token"), ("body", "scopes"), ("body", "zzzz")]
    first = [guarded.doc_freq(field, term) for field, term in pairs]
    assert first == [raw.doc_freq(field, term) for field, term in pairs]
    assert first[0] > 0 and first[-1] == 0
    again = [guarded.doc_freq(field, term) for field, term in pairs]
    assert again == first and counting.asked == len(pairs)
    # Bounded: when full it starts again, and still answers as tantivy does.
    monkeypatch.setattr(guard, "DOC_FREQ_MEMO", 2)
    fresh = GuardedSearcher(Counting(raw), 8)  # type: ignore[arg-type]
    assert [fresh.doc_freq(f, t) for f, t in pairs * 2] == first * 2
    assert len(fresh._freqs) <= 2
