"""The provider chain: order, first-non-empty, skip on failure, cancellation, fuse, misses."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

import pytest

from scriptorium.domain.model import (
    Block,
    Candidate,
    Corpus,
    Query,
    RefKind,
    Scores,
    SourceDocument,
)
from scriptorium.domain.outcomes import (
    ContentOutcome,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Resolution,
    SearchHit,
    SearchOutcome,
    Unavailable,
)
from scriptorium.retrieval.providers import (
    LocalProvider,
    ProviderChain,
    best_miss,
    build_chain,
    chain_mode,
    local_order,
    miss_error,
    ordered,
)
from scriptorium.sources.remote import FetchMiss, FetchRequest, SearchBatch

SECRET_QUERY = "find the token sk-live-123 in settings"


def query(text: str = SECRET_QUERY) -> Query:
    return Query(text=text, terms=tuple(text.split()))


def candidate(source: str, path: str, score: float) -> Candidate:
    block = Block(RefKind.DOC, 1, 1, path, (path,), "", path)
    doc = SourceDocument(source, path, path, Corpus.DOCS, path, blocks=(block,))
    return Candidate(source, doc, block, score, Scores(lexical=score))


def rank(query: Query, batch: SearchBatch) -> SearchOutcome:
    """A stand-in for the engine's pipeline: keep the order by score, top 10."""
    cands = (
        sorted(batch.candidates, key=lambda c: -c.score) if not batch.listing else batch.candidates
    )
    hits = [
        SearchHit(
            ref_id=c.document.path, kind=RefKind.DOC, location=c.document.path, url="",
            title="", section_path=[], start_line=1, end_line=1, snippet="", preview="",
            score=c.score, scores=c.scores, reasons=list(c.reasons), source=c.source,
            doc_version="",
        )
        for c in cands[:10]
    ]  # fmt: skip
    outcome = SearchOutcome(hits=hits, provider="ranked")
    if not hits:
        outcome.abstained, outcome.abstain_reason = True, "no_candidates"
    return outcome


def content(source: str) -> ContentOutcome:
    return ContentOutcome(
        location=f"{source}/page", requested_location="page", url="", source=source,
        content="text", ranges=[], truncated=False, total_lines=1, doc_version="v",
        resolution=Resolution("resolved", "exact"), ref_id="", kind=RefKind.DOC, title="",
        start_line=1, end_line=1, provider="",
    )  # fmt: skip


class Fake:
    """A provider; with ``hold``, its search waits until that (async) callable returns."""

    def __init__(self, name, order, *, search=None, fetch=None, hold=None):
        self.name, self.order = name, order
        self._search, self._fetch, self._hold = search, fetch, hold
        self.searched = self.fetched = 0

    async def search(self, q: Query) -> SearchBatch:
        self.searched += 1
        if self._hold is not None:
            await self._hold()
        result = self._search() if callable(self._search) else self._search
        return result or SearchBatch()

    async def fetch(self, request: FetchRequest):
        self.fetched += 1
        return self._fetch() if callable(self._fetch) else self._fetch


def boom():
    raise RuntimeError(f"backend choked on {SECRET_QUERY}")


def run(coro):
    return asyncio.run(coro)


def test_providers_are_ordered_by_order_then_configuration() -> None:
    a, b, c, d = Fake("a", 200), Fake("b", 100), Fake("c", 200), Fake("d", 0)
    assert [p.name for p in ordered([a, b, c, d])] == ["d", "b", "a", "c"]


def test_first_non_empty_provider_answers_and_later_ones_are_not_asked() -> None:
    empty = Fake("empty", 0, search=SearchBatch())
    first = Fake("first", 10, search=lambda: SearchBatch([candidate("first", "x", 2.0)]))
    later = Fake("later", 20, search=lambda: SearchBatch([candidate("later", "y", 9.0)]))
    outcome = run(ProviderChain([later, first, empty], rank).search(query()))
    assert outcome.provider == "first"
    assert [h.location for h in outcome.hits] == ["x"]
    assert (empty.searched, first.searched, later.searched) == (1, 1, 0)


def test_a_provider_whose_window_is_empty_falls_through() -> None:
    def ranked_empty(q, batch):
        out = rank(q, batch)
        if batch.candidates and batch.candidates[0].source == "filtered":
            out.hits = []
        return out

    filtered = Fake("filtered", 0, search=lambda: SearchBatch([candidate("filtered", "x", 1)]))
    other = Fake("other", 1, search=lambda: SearchBatch([candidate("other", "y", 1)]))
    outcome = run(ProviderChain([filtered, other], ranked_empty).search(query()))
    assert outcome.provider == "other"


def test_a_low_confidence_answer_waits_for_a_confident_one() -> None:
    def hesitant_rank(q, batch):
        out = rank(q, batch)
        if batch.candidates and batch.candidates[0].source == "unsure":
            out.abstained, out.abstain_reason = True, "low_confidence"
        return out

    unsure = Fake("unsure", 0, search=lambda: SearchBatch([candidate("unsure", "x", 5)]))
    sure = Fake("sure", 1, search=lambda: SearchBatch([candidate("sure", "y", 1)]))
    outcome = run(ProviderChain([unsure, sure], hesitant_rank).search(query()))
    assert (outcome.provider, outcome.abstained) == ("sure", False)
    alone = Fake("empty", 1)
    outcome = run(ProviderChain([unsure, alone], hesitant_rank).search(query()))
    assert (outcome.provider, outcome.abstain_reason) == ("unsure", "low_confidence")
    assert [h.location for h in outcome.hits] == ["x"]


def test_a_raising_provider_is_logged_without_the_query_and_skipped(caplog) -> None:
    broken = Fake("broken", 0, search=boom)
    good = Fake("good", 1, search=lambda: SearchBatch([candidate("good", "y", 1)]))
    with caplog.at_level(logging.WARNING, logger="scriptorium.retrieval.providers"):
        outcome = run(ProviderChain([broken, good], rank).search(query()))
    assert outcome.provider == "good"
    assert ("broken", "search failed: RuntimeError") in outcome.failed_sources
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "broken" in logged and f"query_chars={len(SECRET_QUERY)}" in logged
    assert "term_count=6" in logged
    assert "sk-live" not in logged and "settings" not in logged


def test_failures_reported_by_providers_travel_with_the_answer() -> None:
    partial = Fake(
        "docs", 0, search=SearchBatch(failures=[("docs", "site 'x' unavailable: HTTP 404")])
    )
    good = Fake("good", 1, search=lambda: SearchBatch([candidate("good", "y", 1)]))
    outcome = run(ProviderChain([partial, good], rank).search(query()))
    assert outcome.failed_sources == [("docs", "site 'x' unavailable: HTTP 404")]


def test_nothing_anywhere_is_an_abstention_from_provider_none() -> None:
    outcome = run(ProviderChain([Fake("a", 0), Fake("b", 0, search=boom)], rank).search(query()))
    assert outcome.provider == "none"
    assert outcome.hits == []
    assert outcome.abstained and outcome.abstain_reason == "no_candidates"
    assert outcome.failed_sources == [("b", "search failed: RuntimeError")]


def test_the_callers_cancellation_propagates() -> None:
    never = asyncio.Event()
    slow = Fake("slow", 0, hold=never.wait)
    later = Fake("later", 1, search=lambda: SearchBatch([candidate("later", "y", 1)]))

    async def scenario():
        task = asyncio.create_task(ProviderChain([slow, later], rank).search(query()))
        while not slow.searched:  # the chain is waiting on the first provider
            await asyncio.sleep(0)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        run(scenario())
    assert later.searched == 0


def test_a_provider_raising_cancelled_error_is_not_swallowed() -> None:
    def cancelled():
        raise asyncio.CancelledError

    later = Fake("later", 1, search=lambda: SearchBatch([candidate("later", "y", 1)]))
    with pytest.raises(asyncio.CancelledError):
        run(ProviderChain([Fake("c", 0, search=cancelled), later], rank).search(query()))


def test_fuse_pools_every_provider_scaled_to_its_own_best() -> None:
    local = Fake(
        "local",
        100,
        search=lambda: SearchBatch([candidate("en", "a", 40.0), candidate("en", "b", 10.0)]),
    )
    remote = Fake(
        "docs",
        200,
        search=lambda: SearchBatch([candidate("docs", "c", 3.0), candidate("docs", "d", 2.7)]),
    )
    quiet = Fake("quiet", 300)
    outcome = run(ProviderChain([local, remote, quiet], rank, mode="fuse").search(query()))
    assert [h.location for h in outcome.hits] == ["a", "c", "d", "b"]
    assert [round(h.score, 3) for h in outcome.hits] == [1.0, 1.0, 0.9, 0.25]
    assert outcome.provider == "local+docs"
    assert all(any(r.name == "provider-scale" for r in h.reasons) for h in outcome.hits)
    assert (local.searched, remote.searched, quiet.searched) == (1, 1, 1)


def test_fuse_runs_providers_concurrently_and_skips_failures() -> None:
    # Each of the two answers only once both have been asked: asked one after the other,
    # the first would wait for ever (and the test time out).
    both_asked = asyncio.Event()

    async def together() -> None:
        if slow_a.searched and slow_b.searched:
            both_asked.set()
        await both_asked.wait()

    slow_a = Fake("a", 0, hold=together, search=lambda: SearchBatch([candidate("a", "x", 1)]))
    slow_b = Fake("b", 1, hold=together, search=lambda: SearchBatch([candidate("b", "y", 1)]))
    broken = Fake("c", 2, search=boom)

    async def fused():
        chain = ProviderChain([slow_a, slow_b, broken], rank, mode="fuse")
        return await asyncio.wait_for(chain.search(query()), 60)

    outcome = run(fused())
    assert {h.location for h in outcome.hits} == {"x", "y"}
    assert ("c", "search failed: RuntimeError") in outcome.failed_sources


def test_fuse_interleaves_listings() -> None:
    one = Fake(
        "one", 0, search=lambda: SearchBatch([candidate("one", p, 1) for p in "abc"], listing=True)
    )
    two = Fake(
        "two", 1, search=lambda: SearchBatch([candidate("two", p, 1) for p in "xy"], listing=True)
    )
    outcome = run(ProviderChain([one, two], rank, mode="fuse").search(query("*")))
    assert [h.location for h in outcome.hits] == ["a", "x", "b", "y", "c"]


def test_unknown_chain_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="provider_chain"):
        ProviderChain([], rank, mode="best")
    assert chain_mode(SimpleNamespace(provider_chain="")) == "first"
    assert chain_mode(SimpleNamespace(provider_chain="fuse")) == "fuse"
    with pytest.raises(ValueError):
        chain_mode(SimpleNamespace(provider_chain="sometimes"))


# -- fetch ------------------------------------------------------------------------------------


def miss(reason: str, detail: str = "") -> FetchMiss:
    return FetchMiss(Resolution(reason, detail=detail))


def test_fetch_takes_the_first_provider_that_resolves() -> None:
    a = Fake("a", 0, fetch=miss("not_found"))
    b = Fake("b", 1, fetch=lambda: content("b"))
    c = Fake("c", 2, fetch=lambda: content("c"))
    out = run(ProviderChain([a, b, c], rank).fetch(FetchRequest(location="page")))
    assert (out.source, out.provider) == ("b", "b")
    assert out.trace_id
    assert c.fetched == 0


def test_a_leaf_guess_yields_to_a_later_whole_path_match() -> None:
    guessed = content("a")
    guessed.resolution = Resolution("resolved", "canonical-leaf")
    exact = Fake("b", 1, fetch=lambda: content("b"))
    chain = ProviderChain([Fake("a", 0, fetch=guessed), exact], rank)
    assert run(chain.fetch(FetchRequest(location="x/page"))).provider == "b"
    missing = Fake("b", 1, fetch=miss("not_found"))
    out = run(ProviderChain([Fake("a", 0, fetch=guessed), missing], rank).fetch(FetchRequest("p")))
    assert (out.provider, out.resolution.rule) == ("a", "canonical-leaf")
    twins = FetchMiss(Resolution("ambiguous", "exact", ["s/p", "t/p"]))
    with pytest.raises(FailedPrecondition):
        run(
            ProviderChain([Fake("a", 0, fetch=guessed), Fake("b", 1, fetch=twins)], rank).fetch(
                FetchRequest("p")
            )
        )


def test_ambiguity_is_definitive() -> None:
    ambiguous = FetchMiss(Resolution("ambiguous", "exact", ["x/page", "y/page"], "two sites"))
    later = Fake("later", 1, fetch=lambda: content("later"))
    chain = ProviderChain([Fake("a", 0, fetch=ambiguous), later], rank)
    with pytest.raises(FailedPrecondition) as err:
        run(chain.fetch(FetchRequest(location="page")))
    assert err.value.resolution.candidates == ["x/page", "y/page"]
    assert err.value.resolution.requested_location == "page"
    assert later.fetched == 0


@pytest.mark.parametrize(
    ("reasons", "expected", "error"),
    [
        (["not_found", "site_unavailable"], "site_unavailable", Unavailable),
        (["site_unavailable", "not_found"], "site_unavailable", Unavailable),
        (["unknown_site", "not_found"], "not_found", NotFound),
        (["unknown_site", "unknown_site"], "unknown_site", NotFound),
        (["not_found", "fetch_failed", "site_unavailable"], "fetch_failed", Unavailable),
    ],
)
def test_when_everyone_misses_the_most_informative_reason_wins(reasons, expected, error) -> None:
    providers = [Fake(f"p{i}", i, fetch=miss(r, f"why {i}")) for i, r in enumerate(reasons)]
    with pytest.raises(error) as err:
        run(ProviderChain(providers, rank).fetch(FetchRequest(location="a/page")))
    resolution = err.value.resolution
    assert resolution.reason == expected
    assert resolution.requested_location == "a/page"
    for i, reason in enumerate(reasons):
        assert f"p{i}: {reason}" in resolution.detail


def test_a_raising_fetch_counts_as_an_outage_and_the_chain_goes_on() -> None:
    later = Fake("later", 1, fetch=lambda: content("later"))
    out = run(ProviderChain([Fake("a", 0, fetch=boom), later], rank).fetch(FetchRequest("p")))
    assert out.provider == "later"
    with pytest.raises(Unavailable) as err:
        run(
            ProviderChain(
                [Fake("a", 0, fetch=boom), Fake("b", 1, fetch=miss("not_found"))], rank
            ).fetch(FetchRequest("p"))
        )
    assert err.value.resolution.reason == "site_unavailable"


def test_malformed_locations_are_refused_before_any_provider() -> None:
    provider = Fake("a", 0, fetch=lambda: content("a"))
    for bad in ("../../etc/passwd", "%2e%2e/x", "", "C:/Windows"):
        with pytest.raises(InvalidArgument):
            run(ProviderChain([provider], rank).fetch(FetchRequest(location=bad)))
    assert provider.fetched == 0


def test_fetch_cancellation_propagates() -> None:
    def cancelled():
        raise asyncio.CancelledError

    later = Fake("later", 1, fetch=lambda: content("later"))
    with pytest.raises(asyncio.CancelledError):
        run(ProviderChain([Fake("a", 0, fetch=cancelled), later], rank).fetch(FetchRequest("p")))
    assert later.fetched == 0


def test_best_miss_and_status_mapping() -> None:
    res = best_miss([("a", Resolution("not_found", detail="no page"))], "x")
    assert (res.reason, res.detail, res.requested_location) == ("not_found", "no page", "x")
    assert isinstance(miss_error(Resolution("unknown_site")), NotFound)
    assert isinstance(miss_error(Resolution("fetch_failed")), Unavailable)
    assert isinstance(miss_error(Resolution("ambiguous")), FailedPrecondition)


def test_among_plain_misses_the_one_naming_shared_leaf_candidates_is_reported() -> None:
    shared = Resolution("not_found", candidates=["advanced/x", "tutorial/x"], detail="leaf")
    res = best_miss([("site", Resolution("not_found", detail="no page")), ("local", shared)], "x")
    assert res.candidates == ["advanced/x", "tutorial/x"]
    assert res.detail == "leaf (site: not_found; local: not_found)"
    outage = Resolution("site_unavailable", detail="down")
    assert best_miss([("local", shared), ("site", outage)], "x").reason == "site_unavailable"


# -- building the chain -------------------------------------------------------------------------


def source(name: str, **options):
    return SimpleNamespace(name=name, config=SimpleNamespace(name=name, options=options))


def test_local_order_defaults_to_100_and_takes_the_smallest_configured() -> None:
    assert local_order([source("en"), source("code")]) == 100
    assert local_order([source("en", order=300), source("code", order=150)]) == 150
    with pytest.raises(ValueError, match="order must be a number"):
        local_order([source("en", order="first")])


def test_build_chain_places_local_where_its_first_source_is_configured() -> None:
    remote_a = Fake("peer", 100)
    remote_b = Fake("docs", 100)
    local = [source("en"), source("code")]
    catalog = SimpleNamespace(
        local=local,
        by_name={s.name: s for s in local},
        remote=[remote_a, remote_b],
        remote_by_name={"peer": remote_a, "docs": remote_b},
    )
    settings = SimpleNamespace(
        sources=[source("peer"), source("en"), source("docs"), source("code")],
        provider_chain="first",
    )
    provider = LocalProvider(lambda q: SearchBatch(), lambda r: miss("not_found"))
    chain = build_chain(catalog, settings, provider, rank)
    assert chain.names == ["peer", "local", "docs"]
    assert chain.providers[1] is provider and not chain.sole and chain.can_list
    catalog.remote, catalog.remote_by_name = [], {}
    alone = build_chain(catalog, settings, provider, rank)
    assert alone.providers == [provider] and alone.sole and not alone.can_list


def test_a_sole_local_provider_answers_as_ranked_and_its_errors_reach_the_caller() -> None:
    """Without remote sources the local ranked outcome is the answer, empty window included."""
    ranked = SearchOutcome(hits=[], abstained=True, abstain_reason="no_candidates")
    chain = ProviderChain(
        [LocalProvider(lambda q: SearchBatch([]), lambda r: miss("not_found"))],
        lambda query, batch: ranked,
        sole=True,
    )
    assert run(chain.search(query("anything"))) is ranked

    def loading(_query):
        raise Unavailable("sources are still loading")

    failing = ProviderChain([LocalProvider(loading, lambda r: miss("not_found"))], rank, sole=True)
    with pytest.raises(Unavailable):
        run(failing.search(query("anything")))
