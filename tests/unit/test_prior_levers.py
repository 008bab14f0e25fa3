"""The priors stage's lever table: each lever alone, and the stage applying them in order."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from scriptorium.domain.model import (
    Block,
    Candidate,
    Corpus,
    DocMeta,
    Query,
    RefKind,
    SourceDocument,
)
from scriptorium.ranking import priors
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.ranking.priors import LEVERS, SearchPriors
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import content_hash

JAN = datetime(2026, 1, 1, tzinfo=UTC)
JUN = datetime(2026, 6, 1, tzinfo=UTC)


def candidate(
    path: str = "guide/page.md", meta: DocMeta | None = None, source: str = "docs"
) -> Candidate:
    body = "## Page\n\nprose about routing\n"
    block = Block(RefKind.DOC, 1, 3, "Page", ("Page",), "page", body, 2)
    doc = SourceDocument(
        source, path, body, Corpus.DOCS, content_hash(body), meta=meta or DocMeta(), blocks=(block,)
    )
    return Candidate(source=source, document=doc, block=block, score=1.0)


def search(
    settings: RankingSettings | None = None,
    asked: list[str] | None = None,
    classes: dict[str, str] | None = None,
    **query: object,
) -> SearchPriors:
    """One search's shared decisions for the query "routing"; ``asked`` collects the sources
    whose class is asked."""

    def source_class(name: str) -> str:
        if asked is not None:
            asked.append(name)
        return (classes or {}).get(name, "")

    return SearchPriors.of(
        Query("routing", ("routing",), explain=True, **query),
        settings or RankingSettings(),
        source_class,
    )


def reasons(cand: Candidate) -> list[tuple[str, float, str]]:
    return [(r.name, r.weight, r.detail) for r in cand.reasons]


def test_the_table_names_each_lever_as_explain_does_in_the_order_applied():
    assert [lever.__name__.replace("_", "-") for lever in LEVERS] == [
        "pasted-text",
        "question",
        "translation",
        "page-boost",
        "source-class",
        "library",
        "renders-from-code",
        "auxiliary",
        "deprecated",
        "named-file",
        "definition",
        "message",
        "place",
        "language",
        "surface",
        "effective-dates",
        "superseded",
    ]
    # Described once, where it is defined.
    assert all(lever.__doc__ and lever.__doc__.strip() for lever in LEVERS)


def test_page_boost_weighs_by_front_matter_and_zeroes_a_boost_that_is_no_number():
    boosted = candidate(meta=DocMeta(boost=2.0))
    assert priors.page_boost(boosted, search()) is None
    assert boosted.score == 2.0
    assert reasons(boosted) == [("page-boost", 2.0, "front matter search.boost")]
    broken = candidate(meta=DocMeta(boost=float("nan")))
    priors.page_boost(broken, search())
    assert broken.score == 0.0
    off = candidate(meta=DocMeta(boost=2.0))
    priors.page_boost(off, search(settings=RankingSettings(page_boost=False)))
    assert (off.score, off.reasons) == (1.0, [])


def test_source_class_asks_each_source_once_per_search_and_the_page_class_wins():
    settings = RankingSettings(class_weights={"archive": 0.5, "guide": 2.0})
    asked: list[str] = []
    shared = search(settings=settings, asked=asked, classes={"old": "archive"})
    first, second = candidate(source="old"), candidate(source="old")
    priors.source_class(first, shared)
    priors.source_class(second, shared)
    assert (first.score, second.score) == (0.5, 0.5)
    assert asked == ["old"]
    own = candidate(source="old", meta=DocMeta(source_class="guide"))
    priors.source_class(own, shared)
    assert reasons(own) == [("source-class", 2.0, "guide")]


def test_effective_dates_drop_for_as_of_and_weigh_down_otherwise():
    expired = DocMeta(effective_to=JAN)
    dropped = candidate(meta=expired)
    assert priors.effective_dates(dropped, search(as_of=JUN)) == "no longer effective at as_of"
    assert dropped.score == 1.0
    not_yet = candidate(meta=DocMeta(effective_from=JUN))
    assert priors.effective_dates(not_yet, search(as_of=JAN)) == "not yet effective at as_of"
    settings = RankingSettings(expired_factor=0.25)
    weighed = candidate(meta=expired)
    assert priors.effective_dates(weighed, search(settings=settings)) is None
    assert reasons(weighed) == [("expired", 0.25, "")]


def test_named_file_weighs_the_named_file_and_the_last_one_more_again():
    settings = RankingSettings(named_file_factor=2.0, last_file_factor=1.5)
    named = frozenset({("docs", "a.md"), ("docs", "guide/page.md")})
    cand = candidate()
    priors.named_file(cand, search(settings=settings, files=named, last_file=("docs", "a.md")))
    assert [r[0] for r in reasons(cand)] == ["named-file"]
    last = candidate()
    shared = search(settings=settings, files=named, last_file=("docs", "guide/page.md"))
    priors.named_file(last, shared)
    assert [r[0] for r in reasons(last)] == ["named-file", "last-named-file"]
    assert last.score == 3.0


def test_the_stage_applies_the_table_in_order_and_a_drop_stops_the_rest():
    settings = RankingSettings(
        term_coverage=0.0, superseded_factor=0.5, expired_factor=0.25, translation_factor=1.0
    )
    pipeline = Pipeline(settings, lambda doc: doc.text.splitlines())
    meta = DocMeta(boost=2.0, effective_to=JAN, superseded_by="new.md")
    kept, dropped = candidate(meta=meta), candidate("other.md", meta=meta)
    query = Query("routing", ("routing",), explain=True)
    assert pipeline.priors(query, [kept], lambda _: "") == []
    names = [r.name for r in kept.reasons]
    assert names == ["page-boost", "expired", "superseded"]
    assert kept.score == 2.0 * 0.25 * 0.5
    as_of = dataclasses.replace(query, as_of=JUN)
    cands = [dropped]
    drops = pipeline.priors(as_of, cands, lambda _: "")
    assert cands == []
    assert [(d.location, d.why) for d in drops] == [("other.md", "no longer effective at as_of")]
    assert [r.name for r in dropped.reasons] == ["page-boost"]  # superseded never applied


def varied_candidates() -> list[Candidate]:
    """Candidates each lever has something to say about (and some it has not)."""
    return [
        candidate("guide/page.md", DocMeta(boost=2.0)),
        candidate("tests/test_page.md"),
        candidate("legacy/page.md", DocMeta(superseded_by="guide/page.md")),
        candidate("ja/guide/page.md", DocMeta(effective_from=JUN)),
        candidate("guide/routing.md", DocMeta(source_class="archive", effective_to=JAN)),
        candidate("site-packages/starlette/routing.md", source="deps"),
    ]


SEARCHES = [
    ({}, {}),
    ({"page_boost": False, "class_weights": {}, "translation_factor": 1.0}, {}),
    ({"surface_boost": 2.0, "library_factor": 0.5}, {"surface": "guide"}),
    ({}, {"files": frozenset({("docs", "guide/page.md")}), "last_file": ("docs", "a.md")}),
    ({"library_factor": 0.5}, {"library_sources": frozenset({"deps"})}),
    ({"expired_factor": 0.5}, {"as_of": JUN}),
]


def test_the_switched_off_levers_are_those_that_would_change_nothing():
    """The stage calls only the levers switched on for the search; calling every lever of the
    table on every candidate gives the same scores, reasons and drops."""
    seen_off: set[str] = set()
    for settings_changes, query_fields in SEARCHES:
        settings = RankingSettings(term_coverage=0.0, **settings_changes)
        query = Query("routing", ("routing",), explain=True, **query_fields)
        staged = varied_candidates()
        drops = Pipeline(settings, lambda doc: doc.text.splitlines()).priors(
            query, staged, lambda name: "archive" if name == "deps" else ""
        )
        every = varied_candidates()
        shared = SearchPriors.of(query, settings, lambda name: "archive" if name == "deps" else "")
        seen_off |= {lever.__name__ for lever in LEVERS} - {
            lever.__name__ for lever in priors.switched_on(shared)
        }
        kept, why = [], []
        for cand in every:
            ruled = [w for lever in LEVERS if (w := lever(cand, shared)) is not None]
            (why if ruled else kept).append(ruled[:1] or cand)
        assert [(c.document.path, c.score, c.reasons) for c in staged] == [
            (c.document.path, c.score, c.reasons) for c in kept
        ]
        assert [d.why for d in drops] == [w[0] for w in why]
    # The comparison covered levers switched off, not only the table run whole.
    assert {"named_file", "surface", "library", "page_boost"} <= seen_off
