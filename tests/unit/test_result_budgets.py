"""Token budgets of the composing calls and of Search (scriptorium.results.budget)."""

from __future__ import annotations

import pytest

from scriptorium.domain.model import RefKind, Scores
from scriptorium.domain.outcomes import FlowStep, InvalidArgument, RelatedHit, SearchHit
from scriptorium.results.budget import apply_budget, check_budget, fit_flow, fit_related
from scriptorium.text import estimate_tokens

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa " * 8


def step(index: int) -> FlowStep:
    return FlowStep(index, f"Step {index} title", WORDS, [], [], "numbered")


def related(n: int) -> RelatedHit:
    return RelatedHit(f"r{n}", RefKind.DOC, f"p{n}", f"T{n}", 1.0 / n, [], "s", 1, 2, WORDS, "")


def hit(n: int) -> SearchHit:
    return SearchHit(
        f"r{n}", RefKind.DOC, f"p{n}", "", "T", [], 1, 2, WORDS, WORDS, 1.0, Scores(), [], "s", "v"
    )


@pytest.mark.parametrize("budget", [1, 10, 50, 200, 1000])
def test_flow_fits_dropping_the_last_steps_and_shortening_the_first(budget: int) -> None:
    steps = [step(i) for i in range(1, 8)]
    used = fit_flow(steps, budget)
    assert used == sum(estimate_tokens(s.title) + estimate_tokens(s.description) for s in steps)
    assert used <= budget and steps and steps[0].index == 1
    assert [s.index for s in steps] == list(range(1, len(steps) + 1))


@pytest.mark.parametrize("budget", [5, 60, 400])
def test_related_refs_keep_their_places_with_shorter_snippets(budget: int) -> None:
    hits = [related(n) for n in range(1, 6)]
    used = fit_related(hits, budget)
    assert len(hits) == 5 and used == sum(estimate_tokens(h.snippet) for h in hits) <= budget


def test_search_shortens_the_best_result_rather_than_overspending() -> None:
    hits = [hit(n) for n in range(1, 4)]
    used = apply_budget(hits, 30)
    assert hits[0].ref_id == "r1" and used <= 30
    assert used == sum(estimate_tokens(h.snippet) + estimate_tokens(h.preview) for h in hits)


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="token_budget"):
        check_budget(-1)
