"""Remote sources: content the daemon does not index itself but asks for at request time.

A remote source (a published MkDocs site, a peer daemon) answers searches with candidates that
join the ranking pipeline like locally indexed ones, and answers fetches with content it gets
over the network. This module holds the base class and the small types remote sources return,
so the provider chain can treat every source of content alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scriptorium.domain.model import Candidate, Corpus, Query, SourceDocument
from scriptorium.domain.outcomes import ContentOutcome, Resolution, SourceReport, StageDrop
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import Source, SourceConfig, SourceContext

if TYPE_CHECKING:
    from scriptorium.domain.refs import Ref

DEFAULT_REMOTE_ORDER = 200
DEFAULT_COOLDOWN_SECONDS = 300.0
# A query of exactly this lists pages instead of scoring them.
LISTING_QUERY = "*"


def is_listing(query: Query) -> bool:
    return query.text.strip() == LISTING_QUERY


@dataclass(frozen=True, slots=True)
class RemotePage(SourceDocument):
    """A document that lives elsewhere, with what a hit needs that a local file would give.

    ``location`` is the qualified page location handed back to callers and ``url`` the
    published page. ``version`` overrides the content-hash doc_version when the remote side
    owns the version (a peer daemon); ``snippet`` and ``preview`` keep text the remote side
    already cut, so it is not cut again from a partial copy.
    """

    url: str = ""
    location: str = ""
    revision: str = ""
    version: str = ""
    snippet: str = ""
    preview: str = ""


@dataclass(slots=True)
class SearchBatch:
    """What one provider offers a search: candidates and the sources that could not answer.

    ``listing`` marks an already ordered page listing (the ``*`` query) that must be kept in
    its order instead of being ranked.
    """

    candidates: list[Candidate] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    listing: bool = False
    # A provider that judged its own answer (a peer daemon sees whole documents, not just the
    # snippets it sends) says so here; None leaves the judgement to the pipeline.
    confident: bool | None = None
    # What the provider left out before the ranking, each with why (listed for explain only).
    held_back: list[StageDrop] = field(default_factory=list)


@dataclass(slots=True)
class FetchRequest:
    """A fetch as a provider sees it: a raw location, or a decoded ref owned by the provider."""

    location: str = ""
    ref: Ref | None = None
    mode: str = "snippet"
    max_lines: int = 0
    seen_doc_version: str = ""


@dataclass(slots=True)
class FetchMiss:
    """A provider could not serve a fetch; the resolution says why (fixed vocabulary)."""

    resolution: Resolution

    @property
    def reason(self) -> str:
        return self.resolution.reason


FetchResult = ContentOutcome | FetchMiss


@dataclass(frozen=True, slots=True)
class RemoteContext:
    """What the engine hands remote sources once it is built."""

    ranking: RankingSettings
    state_dir: Path


class Cooldown:
    """Remembers a failure for a while, so later calls skip a known-bad target quickly."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = max(0.0, float(seconds))
        self._clock = clock
        self._until = 0.0
        self.last_error = ""
        self.failed_at: float | None = None

    def fail(self, error: str) -> None:
        now = self._clock()
        self.last_error = error
        self.failed_at = now
        self._until = now + self.seconds

    def succeed(self) -> None:
        self.last_error = ""
        self.failed_at = None
        self._until = 0.0

    @property
    def blocked(self) -> bool:
        return self._clock() < self._until

    @property
    def remaining(self) -> float:
        return max(0.0, self._until - self._clock())


def option_number(
    config: SourceConfig, key: str, default: float, *, minimum: float | None = None
) -> float:
    """A numeric source option; a wrong type names the source and the key."""
    value = config.options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"source {config.name!r}: {key} must be a number")
    if minimum is not None and value < minimum:
        raise ValueError(f"source {config.name!r}: {key} must be at least {minimum}")
    return float(value)


def round_robin(queues: list[list[Candidate]]) -> list[Candidate]:
    """Interleave already ordered lists one item at a time, so no list fills the front."""
    out: list[Candidate] = []
    position = 0
    while any(position < len(q) for q in queues):
        out.extend(q[position] for q in queues if position < len(q))
        position += 1
    return out


def skew(seen: str, accepted: tuple[str, ...]) -> bool:
    """Whether a caller's seen version names none of the versions this fetch stands for."""
    if not seen:
        return False
    return not any(v and (v.startswith(seen) or seen.startswith(v)) for v in accepted)


class RemoteSource(Source):
    """Base for sources answered over the network at request time.

    Subclasses implement ``search``, ``fetch`` and ``report``; ``order`` places the source in
    the provider chain (lower first).
    """

    corpus = Corpus.DOCS
    default_order = DEFAULT_REMOTE_ORDER

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        super().__init__(config, context)
        self.order = int(option_number(config, "order", self.default_order))
        self.remote: RemoteContext | None = None

    def bind(self, context: RemoteContext) -> None:
        """Receive the engine's ranking settings and state directory (before first use)."""
        self.remote = context

    @property
    def ranking(self) -> RankingSettings:
        return self.remote.ranking if self.remote else RankingSettings()

    def covers(self, query: Query) -> bool:
        """Whether a query's source and corpus filters leave anything for this source."""
        if query.sources and self.name not in query.sources:
            return False
        return self.corpus in query.corpora

    def location_of(self, cand: Candidate) -> str:
        """The qualified location of a candidate: its page plus the block anchor."""
        doc = cand.document
        page = doc.location if isinstance(doc, RemotePage) and doc.location else doc.path
        anchor = cand.block.anchor
        return f"{page}#{anchor}" if anchor else page

    def url_for(self, path: str, anchor: str = "") -> str:
        return ""

    def term_stats(self, cand: Candidate) -> tuple[Callable[[str], int] | None, int]:
        """(document frequency of a term, document count) behind a candidate, when known."""
        return None, 0

    async def search(self, query: Query) -> SearchBatch:
        raise NotImplementedError

    async def fetch(self, request: FetchRequest) -> FetchResult:
        raise NotImplementedError

    def report(self) -> SourceReport:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release network clients."""
        return None
