"""The provider chain: which source of content answers a search or a fetch.

Providers (the locally indexed sources as one provider named ``local``, and every remote
source) are tried in ascending ``order``. In ``first`` mode the first provider whose ranked
window is non-empty answers a search (an answer the pipeline flags as low-confidence is kept
only until a later provider answers confidently), and the first provider that resolves a
location serves a fetch (a match on the last path segment alone is kept only until a later
provider matches the whole path, or finds it ambiguous). In ``fuse`` mode every provider's
search candidates are pooled and ranked together (each provider's scores scaled to its own
best first, since their lexical scales differ).

Without remote sources the chain holds the local provider alone, and it is the answer: its
ranked outcome is returned as ranked (an empty window included), and its errors (the index is
still loading) reach the caller.

A provider that raises is logged (never with the query text) and skipped; only the caller's
cancellation propagates. A fetch that every provider misses reports the most informative miss:
an outage beats a plain miss, because a location never checked against a failed site cannot be
called missing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from scriptorium import telemetry
from scriptorium.domain.model import Query, Reason
from scriptorium.domain.outcomes import (
    ContentOutcome,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Resolution,
    RetrievalError,
    SearchOutcome,
    Unavailable,
)
from scriptorium.domain.refs import normalize_location
from scriptorium.sources.catalog import SourceCatalog
from scriptorium.sources.remote import FetchRequest, FetchResult, SearchBatch, round_robin

if TYPE_CHECKING:
    from scriptorium.settings.config import Settings

log = logging.getLogger(__name__)

LOCAL_PROVIDER = "local"
LOCAL_ORDER = 100
CHAIN_MODES = ("first", "fuse")
LOW_CONFIDENCE = "low_confidence"
# Resolutions that matched on the last path segment alone: later providers may know better.
GUESS_RULES = frozenset({"canonical-leaf"})
# Higher wins when every provider misses: a page that could not be fetched, then an outage,
# then a plain miss, then a qualifier no provider knows.
MISS_PRIORITY = {"fetch_failed": 4, "site_unavailable": 3, "not_found": 2, "unknown_site": 1}


class Provider(Protocol):
    """Anything that can answer searches and fetches for the chain."""

    name: str
    order: int

    async def search(self, query: Query) -> SearchBatch: ...

    async def fetch(self, request: FetchRequest) -> FetchResult: ...


Rank = Callable[[Query, SearchBatch], SearchOutcome]


@dataclass(slots=True)
class _Answer:
    provider: Provider
    batch: SearchBatch


def ordered(providers: Sequence[Provider]) -> list[Provider]:
    """Providers by ascending order; equal orders keep their configured sequence."""
    return [p for _, _, p in sorted((p.order, i, p) for i, p in enumerate(providers))]


class ProviderChain:
    """Runs searches and fetches over providers with first-non-empty or fuse semantics."""

    def __init__(
        self, providers: Sequence[Provider], rank: Rank, mode: str = "first", *, sole: bool = False
    ) -> None:
        if mode not in CHAIN_MODES:
            raise ValueError(f"provider_chain must be one of {', '.join(CHAIN_MODES)}")
        if sole and len(providers) != 1:
            raise ValueError("a sole-provider chain holds exactly one provider")
        self.providers = ordered(providers)
        self.rank = rank
        self.mode = mode
        # One provider whose outcome is the answer (the local sources when nothing is remote).
        self.sole = sole

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.providers]

    @property
    def can_list(self) -> bool:
        """Whether some provider answers the listing query (the local index does not)."""
        return any(not isinstance(p, LocalProvider) for p in self.providers)

    # -- search --------------------------------------------------------------------------------

    async def search(self, query: Query) -> SearchOutcome:
        if self.sole:
            return self.rank(query, await self.providers[0].search(query))
        if self.mode == "fuse":
            return await self._search_fused(query)
        failures: list[tuple[str, str]] = []
        hesitant: SearchOutcome | None = None
        for provider in self.providers:
            batch = await self._ask(provider, query, failures)
            if batch is None:
                continue
            failures += batch.failures
            if not batch.candidates:
                continue
            outcome = self.rank(query, batch)
            if not outcome.hits:
                continue
            outcome.provider = provider.name
            if outcome.abstain_reason == LOW_CONFIDENCE:
                # Keep it in case nobody does better, but let a later provider try.
                hesitant = hesitant or outcome
                continue
            outcome.failed_sources = failures
            return outcome
        if hesitant is not None:
            hesitant.failed_sources = failures
            return hesitant
        return self._empty(query, failures)

    async def _search_fused(self, query: Query) -> SearchOutcome:
        failures: list[tuple[str, str]] = []
        batches = await asyncio.gather(*(self._ask(p, query, failures) for p in self.providers))
        answers = [
            _Answer(p, b) for p, b in zip(self.providers, batches, strict=True) if b is not None
        ]
        for answer in answers:
            failures += answer.batch.failures
        answers = [a for a in answers if a.batch.candidates]
        if not answers:
            return self._empty(query, failures)
        if any(a.batch.listing for a in answers):
            listings = [a.batch.candidates for a in answers if a.batch.listing]
            pooled = SearchBatch(round_robin(listings), listing=True)
        else:
            pooled = SearchBatch(
                scale_per_provider(answers),
                held_back=[drop for a in answers for drop in a.batch.held_back],
            )
        outcome = self.rank(query, pooled)
        if not outcome.hits:
            return self._empty(query, failures)
        contributing = {h.source for h in outcome.hits}
        outcome.provider = "+".join(
            a.provider.name
            for a in answers
            if any(c.source in contributing for c in a.batch.candidates)
        )
        outcome.failed_sources = failures
        return outcome

    async def _ask(
        self, provider: Provider, query: Query, failures: list[tuple[str, str]]
    ) -> SearchBatch | None:
        try:
            return await provider.search(query)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning(
                "provider %s failed a search (%s; query_chars=%d term_count=%d)",
                provider.name,
                type(exc).__name__,
                len(query.text),
                len(query.terms),
            )
            failures.append((provider.name, f"search failed: {type(exc).__name__}"))
            return None

    def _empty(self, query: Query, failures: list[tuple[str, str]]) -> SearchOutcome:
        outcome = self.rank(query, SearchBatch())
        outcome.provider = "none"
        outcome.failed_sources = failures
        return outcome

    # -- fetch ---------------------------------------------------------------------------------

    async def fetch(self, request: FetchRequest) -> ContentOutcome:
        normalize_location(request.location)  # malformed input is refused before any provider
        misses: list[tuple[str, Resolution]] = []
        guess: ContentOutcome | None = None
        for provider in self.providers:
            try:
                result = await provider.fetch(request)
            except asyncio.CancelledError:
                raise
            except InvalidArgument:
                raise
            except Exception as exc:
                log.warning(
                    "provider %s failed a fetch (%s; location_chars=%d)",
                    provider.name,
                    type(exc).__name__,
                    len(request.location),
                )
                misses.append(
                    (
                        provider.name,
                        Resolution(
                            "site_unavailable",
                            detail=f"provider failed: {type(exc).__name__}",
                            requested_location=request.location,
                        ),
                    )
                )
                continue
            if isinstance(result, ContentOutcome):
                result.provider = provider.name
                if not result.trace_id:
                    result.trace_id = telemetry.current_trace_id()
                if result.resolution.rule not in GUESS_RULES:
                    return result
                # A guess from the leaf alone must not hide a page a later provider has.
                guess = guess or result
                continue
            result.resolution.requested_location = request.location
            if result.reason == "ambiguous":
                raise miss_error(result.resolution)
            if result.reason == "resolved":  # a provider must not claim success without content
                result.resolution.reason = "fetch_failed"
            misses.append((provider.name, result.resolution))
        if guess is not None:
            return guess
        raise miss_error(best_miss(misses, request.location))

    async def aclose(self) -> None:
        for provider in self.providers:
            closer = getattr(provider, "aclose", None)
            if closer is None:
                continue
            try:
                await closer()
            except Exception as exc:  # closing must not stop the others from closing
                log.warning("closing provider %s failed: %s", provider.name, type(exc).__name__)


def best_miss(misses: Sequence[tuple[str, Resolution]], requested: str) -> Resolution:
    """The most informative miss, with every provider's verdict in the detail."""
    if not misses:
        return Resolution("not_found", detail="no provider is configured", requested_location="")
    # Among equally bad misses, one that names candidates (a shared leaf) tells the caller more.
    _, _, _, best = max(
        (MISS_PRIORITY.get(res.reason, 0), bool(res.candidates), -i, res)
        for i, (_, res) in enumerate(misses)
    )
    if len(misses) > 1:
        summary = "; ".join(f"{name}: {res.reason}" for name, res in misses)
        detail = f"{best.detail} ({summary})" if best.detail else summary
    else:
        detail = best.detail
    return Resolution(
        reason=best.reason,
        rule=best.rule,
        candidates=list(best.candidates),
        detail=detail,
        requested_location=requested,
        site=best.site,
    )


def miss_error(resolution: Resolution) -> RetrievalError:
    """The status a miss becomes: NOT_FOUND, FAILED_PRECONDITION or UNAVAILABLE."""
    message = (
        f"{resolution.reason}: {resolution.detail}" if resolution.detail else resolution.reason
    )
    if resolution.reason == "ambiguous":
        return FailedPrecondition(f"ambiguous location: {resolution.detail}", resolution)
    if resolution.reason in ("site_unavailable", "fetch_failed"):
        return Unavailable(message, resolution)
    return NotFound(message, resolution)


def scale_per_provider(answers: Sequence[_Answer]) -> list:
    """Pool candidates, dividing each provider's scores by its own best (when several answer)."""
    pooled = []
    for answer in answers:
        cands = answer.batch.candidates
        if len(answers) > 1:
            best = max(c.score for c in cands) or 1.0
            for cand in cands:
                cand.score /= best
                cand.reasons.append(
                    Reason("provider-scale", round(1 / best, 6), answer.provider.name)
                )
        pooled.extend(cands)
    return pooled


class LocalProvider:
    """The locally indexed sources as one provider (their own resolution picks the source)."""

    def __init__(
        self,
        search: Callable[[Query], SearchBatch],
        fetch: Callable[[FetchRequest], FetchResult],
        order: int = LOCAL_ORDER,
        name: str = LOCAL_PROVIDER,
    ) -> None:
        self.name = name
        self.order = order
        self._search = search
        self._fetch = fetch

    async def search(self, query: Query) -> SearchBatch:
        return self._search(query)

    async def fetch(self, request: FetchRequest) -> FetchResult:
        return self._fetch(request)


def chain_mode(settings: Settings) -> str:
    """``[server] provider_chain``: ``first`` (default) or ``fuse``."""
    mode = settings.provider_chain or "first"
    if mode not in CHAIN_MODES:
        raise ValueError(f"provider_chain must be one of {', '.join(CHAIN_MODES)}, not {mode!r}")
    return mode


def local_order(sources: Sequence) -> int:
    """The local provider's order: the smallest ``order`` its sources give, else 100."""
    orders = []
    for source in sources:
        value = source.config.options.get("order")
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"source {source.name!r}: order must be a number")
            orders.append(int(value))
    return min(orders) if orders else LOCAL_ORDER


def build_chain(
    catalog: SourceCatalog, settings: Settings, local: LocalProvider, rank: Rank
) -> ProviderChain:
    """The chain over every configured source; the local provider alone when none is remote.

    Providers keep configuration order among equal ``order`` values; the local provider sits
    where its first source is configured.
    """
    if not catalog.remote:
        return ProviderChain([local], rank, sole=True)
    local.order = local_order(catalog.local)
    local_names = set(catalog.by_name)
    remote = catalog.remote_by_name
    providers: list[Provider] = []
    placed_local = False
    for config in settings.sources:
        if config.name in local_names and not placed_local:
            providers.append(local)
            placed_local = True
        elif config.name in remote:
            providers.append(remote[config.name])
    return ProviderChain(providers, rank, chain_mode(settings))
