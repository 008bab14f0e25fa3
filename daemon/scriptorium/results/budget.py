"""Fitting what a call returns into a caller's token budget, and saying what it spent.

Search counts snippets and previews; ExpandRelated the related refs' snippets; SummarizeFlow the
steps' titles and descriptions; GuideImplementation its flow and then its docs' and samples'
snippets and previews. Locations, ids, scores and reasons are never counted: they are what a
caller needs to fetch more. A budget of zero means unlimited; the spend is reported either way.
"""

from __future__ import annotations

from scriptorium.domain.outcomes import (
    FlowStep,
    GuideOutcome,
    InvalidArgument,
    RelatedHit,
    SearchHit,
)
from scriptorium.text import estimate_tokens, trim_to_tokens

# Below this many tokens a shortened text says too little to be worth keeping.
_MIN_TEXT_TOKENS = 8


def check_budget(budget: int) -> None:
    if budget < 0:
        raise InvalidArgument("token_budget must not be negative")


def _hit_cost(hit: SearchHit) -> int:
    return estimate_tokens(hit.snippet) + estimate_tokens(hit.preview)


def tokens_of(hits: list[SearchHit]) -> int:
    """What the snippets and previews of ``hits`` cost, in estimated tokens."""
    return sum(_hit_cost(h) for h in hits)


def _shorten_best(hit: SearchHit, budget: int) -> int:
    """The best hit cut to ``budget``: its preview kept when it fits, its snippet shortened."""
    preview = estimate_tokens(hit.preview)
    if preview <= budget:
        hit.snippet = trim_to_tokens(hit.snippet, budget - preview)
    else:
        hit.snippet = ""
        hit.preview = trim_to_tokens(hit.preview, budget)
    return _hit_cost(hit)


def apply_budget(hits: list[SearchHit], budget: int) -> int:
    """Fit snippets and previews into ``budget`` tokens: shorten or drop the lowest first.

    The best result is always kept, whole when it fits (else its snippet is shortened first);
    later ones lose their snippet, then get a shortened preview, then are dropped.
    """
    if not hits:
        return 0
    used = _shorten_best(hits[0], budget) if _hit_cost(hits[0]) > budget else _hit_cost(hits[0])
    kept = [hits[0]]
    for hit in hits[1:]:
        remaining = budget - used
        cost = _hit_cost(hit)
        if cost <= remaining:
            used += cost
            kept.append(hit)
            continue
        hit.snippet = ""
        cost = estimate_tokens(hit.preview)
        if cost > remaining:
            if remaining < _MIN_TEXT_TOKENS:
                continue
            hit.preview = trim_to_tokens(hit.preview, remaining)
            cost = estimate_tokens(hit.preview)
        used += cost
        kept.append(hit)
    hits[:] = kept
    return used


def fit_related(related: list[RelatedHit], budget: int) -> int:
    """Related refs' snippets within ``budget``, best first; a ref whose snippet does not fit
    keeps its place with a shortened or empty snippet (a ref without text costs nothing)."""
    used = 0
    for hit in related:
        cost = estimate_tokens(hit.snippet)
        if budget and cost > budget - used:
            remaining = budget - used
            hit.snippet = (
                trim_to_tokens(hit.snippet, remaining) if remaining >= _MIN_TEXT_TOKENS else ""
            )
            cost = estimate_tokens(hit.snippet)
        used += cost
    return used


def _step_cost(step: FlowStep) -> int:
    return estimate_tokens(step.title) + estimate_tokens(step.description)


def fit_flow(steps: list[FlowStep], budget: int) -> int:
    """Flow steps within ``budget``: the last go first; the first is shortened, never dropped."""
    if not budget:
        return sum(_step_cost(s) for s in steps)
    used = 0
    for index, step in enumerate(steps):
        remaining = budget - used
        if _step_cost(step) <= remaining:
            used += _step_cost(step)
            continue
        title = estimate_tokens(step.title)
        if index == 0 or title + _MIN_TEXT_TOKENS <= remaining:
            step.title = trim_to_tokens(step.title, remaining)
            step.description = trim_to_tokens(
                step.description, remaining - estimate_tokens(step.title)
            )
            used += _step_cost(step)
            index += 1
        del steps[index:]
        break
    return used


def fit_guide(outcome: GuideOutcome, budget: int) -> int:
    """A guide within ``budget``: the flow takes at most half, docs then samples share the rest."""
    if not budget:
        return (
            sum(_step_cost(s) for s in outcome.flow)
            + tokens_of(outcome.docs)
            + tokens_of(outcome.sample_code)
        )
    used = fit_flow(outcome.flow, budget // 2)
    used += apply_budget(outcome.docs, budget - used)
    used += apply_budget(outcome.sample_code, budget - used)
    return used
