"""The ranking-mode seam: plugins that re-weigh candidates for a kind of question."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from scriptorium.domain.model import Candidate, Query


@runtime_checkable
class RankingMode(Protocol):
    """Re-weighs candidates after fusion. Registered via ``scriptorium_register_ranking_modes``.

    ``rerank`` changes ``candidate.score`` only through ``candidate.adjust`` (or by appending a
    ``Reason`` for any other change) so every boost is visible under ``explain``.
    """

    name: str
    description: str
    # When true the pipeline keeps at least one doc and one code result in the window whenever
    # both corpora produced useful candidates.
    prefer_mixed_corpora: bool

    def rerank(self, query: Query, candidates: list[Candidate]) -> None:
        """Adjust candidate scores in place."""
        ...


class DefaultMode:
    """Plain relevance: no re-weighing beyond the shared pipeline."""

    name = "default"
    description = "Relevance ranking over docs and code with the measured default levers."
    prefer_mixed_corpora = False

    def rerank(self, query: Query, candidates: list[Candidate]) -> None:
        return None
