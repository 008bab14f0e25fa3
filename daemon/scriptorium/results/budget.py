"""Fitting a result list into a caller's token budget."""

from __future__ import annotations

from scriptorium.domain.outcomes import SearchHit
from scriptorium.text import estimate_tokens, trim_to_tokens


def tokens_of(hits: list[SearchHit]) -> int:
    """What the snippets and previews of ``hits`` cost, in estimated tokens."""
    return sum(estimate_tokens(h.snippet) + estimate_tokens(h.preview) for h in hits)


def apply_budget(hits: list[SearchHit], budget: int) -> int:
    """Fit snippets and previews into ``budget`` tokens: shorten or drop the lowest first.

    The best result is always kept whole; later ones lose their snippet, then get a shortened
    preview, then are dropped.
    """
    used = estimate_tokens(hits[0].snippet) + estimate_tokens(hits[0].preview)
    kept = [hits[0]]
    for hit in hits[1:]:
        remaining = budget - used
        cost = estimate_tokens(hit.snippet) + estimate_tokens(hit.preview)
        if cost <= remaining:
            used += cost
            kept.append(hit)
            continue
        hit.snippet = ""
        cost = estimate_tokens(hit.preview)
        if cost > remaining:
            if remaining < 8:
                continue
            hit.preview = trim_to_tokens(hit.preview, remaining)
            cost = estimate_tokens(hit.preview)
        used += cost
        kept.append(hit)
    hits[:] = kept
    return used
