"""The reranking seam: one plugin re-scores the best candidates after the scoring stages.

Selected by ``[ranking] reranker`` (a plugin's entry-point name) and ``rerank_depth``; unset,
no reranker is built and the ranker skips the stage. The plugin's scores only order the
candidates it was given: each takes the pipeline score of the rank it lands on, so a
cross-encoder's logits never meet BM25-scaled scores, and the candidates past the depth,
diversification and abstention see the scale they expect.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, Protocol

from scriptorium.domain.model import Candidate, Query, Reason, SourceDocument
from scriptorium.domain.outcomes import PluginError, StageReport
from scriptorium.settings.ranking import RankingSettings

log = logging.getLogger(__name__)

STAGE = "rerank:"


@dataclass(frozen=True, slots=True)
class Reranker:
    """The configured plugin's ``scriptorium_rerank``, and how many candidates it sees."""

    name: str
    depth: int
    call: Callable[..., Any]
    text_of: Callable[[Candidate], str]

    def apply(self, query: Query, candidates: list[Candidate]) -> StageReport:
        """Reorder the best ``depth`` candidates by the plugin's scores; the stage's report."""
        top = sorted(candidates, key=_by_score)[: self.depth]
        stage = f"{STAGE}{self.name}"
        if not top:
            return StageReport(stage, 0, 0)
        try:
            scores = _checked(self.call(query=query, candidates=top, text_of=self.text_of), top)
        except Exception as exc:  # a plugin's failure must not fail the search
            log.warning(
                "reranker %r failed (%s: %.200s); the pipeline's order stands",
                self.name,
                type(exc).__name__,
                exc,
            )
            return StageReport(f"{stage} failed ({type(exc).__name__}), order kept", len(top), 0)
        if scores is not None:
            _reorder(stage, top, scores)
        return StageReport(stage, len(top), 0)


def _by_score(cand: Candidate) -> tuple:
    return (-cand.score, cand.document.path, cand.block.start_line, cand.block.end_line)


def _checked(scores: object, top: Sequence[Candidate]) -> list[float] | None:
    """The plugin's answer as floats, or None for "no change"; raises on anything else."""
    if scores is None:
        return None
    if isinstance(scores, str | bytes) or not isinstance(scores, Sequence):
        raise TypeError(f"returned {type(scores).__name__}, not a list of scores")
    if len(scores) != len(top):
        raise ValueError(f"returned {len(scores)} scores for {len(top)} candidates")
    if not all(isinstance(s, Real) and not isinstance(s, bool) for s in scores):
        raise TypeError("returned a score that is not a number")
    values = [float(s) for s in scores]
    if not all(math.isfinite(v) for v in values):
        raise ValueError("returned a score that is not finite")
    return values


def _reorder(stage: str, top: list[Candidate], scores: list[float]) -> None:
    """Give the candidates, in the plugin's order, the pipeline scores of those ranks."""
    slots = [cand.score for cand in top]
    order = sorted(range(len(top)), key=lambda i: -scores[i])  # stable: ties keep their rank
    for new_rank, i in enumerate(order):
        cand = top[i]
        cand.score = slots[new_rank]
        if cand.explained:
            cand.reasons.append(
                Reason(stage, scores[i], f"rank {i + 1} -> {new_rank + 1} of {len(top)}")
            )


def block_text(lines_of: Callable[[SourceDocument], list[str]]) -> Callable[[Candidate], str]:
    """``text_of`` for the plugin: a candidate's lines, read when it asks for them."""

    def text_of(cand: Candidate) -> str:
        lines = lines_of(cand.document)
        return "\n".join(lines[max(0, cand.block.start_line - 1) : cand.block.end_line])

    return text_of


class RerankerPlugins(Protocol):
    """Where the configured reranker is found (the plugin ``Registry``): each plugin
    implementing ``scriptorium_rerank``, by plugin name."""

    rerankers: Mapping[str, Callable[..., Any]]


def reranker_for(
    ranking: RankingSettings,
    registry: RerankerPlugins,
    lines_of: Callable[[SourceDocument], list[str]],
) -> Reranker | None:
    """The configured reranker; None when none is configured. A name no loaded plugin
    answers to is refused at start-up, naming those that implement the hook."""
    name = ranking.reranker.strip()
    if not name:
        return None
    call = registry.rerankers.get(name)
    if call is None:
        known = ", ".join(sorted(registry.rerankers)) or "none"
        raise PluginError(
            f"[ranking] reranker {name!r}: no loaded plugin of that name implements "
            f"scriptorium_rerank (plugins that do: {known})"
        )
    if ranking.rerank_depth < 1:
        raise PluginError(f"[ranking] rerank_depth must be at least 1, not {ranking.rerank_depth}")
    return Reranker(name, ranking.rerank_depth, call, block_text(lines_of))
