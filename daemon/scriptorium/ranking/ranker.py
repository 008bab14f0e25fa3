"""The order of the ranking stages, and the names explain and tracing give each of them.

``Ranker.run`` takes one request's candidates through fuse → priors → the mode's rerank →
the configured reranker plugin (when there is one) → order, de-duplicate and diversify, and
returns the window with the stage reports ``explain`` shows. Turning the window into hits is
the search service's job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from scriptorium import telemetry
from scriptorium.domain.model import Candidate, Query
from scriptorium.domain.outcomes import StageDrop, StageReport
from scriptorium.ranking.modes import RankingMode
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.ranking.rerank import Reranker


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage: the name its explain report carries and the span that times it."""

    report: str  # "" for a stage that reports nothing of its own
    span: str


# In order. The mode's report is named after the mode ("mode:default"), the reranker's after
# its plugin ("rerank:<name>", only when one is configured); dedupe and diversify are two
# reports of one pass, timed by one span.
RETRIEVE = Stage("retrieve", telemetry.RETRIEVE)
FUSE = Stage("", telemetry.FUSE)
PRIORS = Stage("priors", telemetry.PRIORS)
MODE = Stage("mode:", telemetry.RERANK)
DEDUPE = Stage("dedupe", telemetry.DIVERSIFY)
DIVERSIFY = Stage("diversify", telemetry.DIVERSIFY)
LIST = Stage("list", "")  # a listing is kept in its order, not ranked
STAGES = (RETRIEVE, FUSE, PRIORS, MODE, DEDUPE, DIVERSIFY)

# How many drops a stage report lists.
SHOWN_DROPS = 20


@dataclass(slots=True)
class Ranked:
    """A ranked window and the reports of the stages that made it (retrieval's first)."""

    window: list[Candidate]
    stages: list[StageReport]


class ModeLookup(Protocol):
    """Where a query's ranking mode is found (the plugin ``Registry``); an unknown name raises
    ``PluginError``."""

    def mode(self, name: str) -> RankingMode: ...


class Ranker:
    """Runs the ranking stages in their order over one request's candidates."""

    def __init__(
        self,
        pipeline: Pipeline,
        registry: ModeLookup,
        source_class: Callable[[str], str],
        location_of: Callable[[Candidate], str],
        reranker: Reranker | None = None,
        translations: frozenset[str] = frozenset(),
    ) -> None:
        self.pipeline = pipeline
        self.translations = translations
        self.reranker = reranker
        self.registry = registry
        self.source_class = source_class
        self.location_of = location_of

    def run(
        self, query: Query, candidates: list[Candidate], held_back: Sequence[StageDrop] = ()
    ) -> Ranked:
        """Rank ``candidates``; ``held_back`` is what the provider left out before (the
        retrieve stage's drops)."""
        pipeline = self.pipeline
        stages = [
            StageReport(
                RETRIEVE.report, len(candidates), len(held_back), list(held_back[:SHOWN_DROPS])
            )
        ]
        pipeline.fuse(candidates)
        drops = pipeline.priors(query, candidates, self.source_class, self.translations)
        stages.append(StageReport(PRIORS.report, len(candidates), len(drops), drops[:SHOWN_DROPS]))
        mode = self.registry.mode(query.mode)
        pipeline.rerank(mode, query, candidates)
        stages.append(StageReport(f"{MODE.report}{mode.name}", len(candidates), 0))
        if self.reranker is not None:
            stages.append(self.reranker.apply(query, candidates))
        window, dedup_drops, diversity_drops = pipeline.order(
            candidates,
            query.top_k,
            self.location_of,
            getattr(mode, "prefer_mixed_corpora", False),
            query,
        )
        stages.append(
            StageReport(
                DEDUPE.report,
                len(candidates) - len(dedup_drops),
                len(dedup_drops),
                dedup_drops[:SHOWN_DROPS],
            )
        )
        stages.append(
            StageReport(
                DIVERSIFY.report, len(window), len(diversity_drops), diversity_drops[:SHOWN_DROPS]
            )
        )
        return Ranked(window, stages)

    def listing(self, query: Query, candidates: list[Candidate]) -> Ranked:
        """A listing's first ``top_k`` pages, located, in the order they came."""
        window = candidates[: query.top_k]
        for cand in window:
            cand.location = self.location_of(cand)
        return Ranked(
            window, [StageReport(LIST.report, len(window), len(candidates) - len(window))]
        )
