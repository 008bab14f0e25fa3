"""Pure scoring: ranks, hits, reciprocal rank, fetch outcomes and aggregates.

Nothing here talks to a daemon or the file system, so the same functions serve the harness, its
self-test, the unit tests and any lever measurement that re-scores recorded results.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Cut-offs reported for every case. "k" (the requested top_k) is added alongside them; 5 and 8
# are the windows levers are reported at.
CUTOFFS: tuple[int, ...] = (1, 3, 5, 8)

FETCH_OUTCOMES = ("resolved", "not_found", "ambiguous")


def normalize_location(location: str) -> str:
    """Trim whitespace and slashes and fold case; ``.md`` and ``/index`` are kept on purpose.

    Whether those variant shapes resolve is part of what is measured, so they must not silently
    compare equal to the canonical location.
    """
    return location.strip().strip("/").lower()


def split_fragment(location: str) -> tuple[str, str]:
    """Split ``path#fragment`` into its path and fragment ("" when there is none)."""
    path, _, fragment = location.partition("#")
    return path, fragment


def doc_key(location: str) -> str:
    """Page-level key: the fragment (heading slug or ``#L`` line anchor) is dropped.

    For code this is the file-level comparison: ``fastapi/x.py#L12`` and ``fastapi/x.py`` agree.
    """
    return normalize_location(split_fragment(location)[0])


def section_key(location: str) -> str:
    """Section-level key: the page key plus the normalised fragment, when there is one."""
    path, fragment = split_fragment(location)
    fragment = fragment.strip().lower()
    page = normalize_location(path)
    return f"{page}#{fragment}" if fragment else page


def first_hit_rank(
    returned: Sequence[str], acceptable: Iterable[str], *, section: bool = False
) -> int | None:
    """1-based rank of the first returned location that matches an acceptable one, else None."""
    key = section_key if section else doc_key
    wanted = {key(loc) for loc in acceptable if loc.strip()}
    if not wanted:
        return None
    for rank, location in enumerate(returned, start=1):
        if key(location) in wanted:
            return rank
    return None


def hits_for_rank(rank: int | None, top_k: int) -> dict[str, bool | None]:
    """hit@n for every cut-off plus hit@k; a cut-off deeper than top_k is None (not measured)."""
    hits: dict[str, bool | None] = {}
    for cutoff in CUTOFFS:
        hits[str(cutoff)] = None if cutoff > top_k else rank is not None and rank <= cutoff
    hits["k"] = rank is not None and rank <= top_k
    return hits


def reciprocal_rank(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / rank


@dataclass(frozen=True, slots=True)
class SearchScore:
    """How one search result list scored against a case's expectations."""

    rank: int | None
    hits: dict[str, bool | None]
    rr: float
    section_rank: int | None
    section_hits: dict[str, bool | None] | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "hits": self.hits,
            "rr": self.rr,
            "section_rank": self.section_rank,
            "section_hits": self.section_hits,
        }


def score_search(
    returned: Sequence[str],
    acceptable: Sequence[str],
    sections: Sequence[str] = (),
    top_k: int = 10,
) -> SearchScore:
    """Score the first ``top_k`` returned locations at page level and, if given, section level."""
    window = list(returned[:top_k])
    rank = first_hit_rank(window, acceptable)
    section_rank: int | None = None
    section_hits: dict[str, bool | None] | None = None
    if sections:
        section_rank = first_hit_rank(window, sections, section=True)
        section_hits = hits_for_rank(section_rank, top_k)
    return SearchScore(
        rank=rank,
        hits=hits_for_rank(rank, top_k),
        rr=reciprocal_rank(rank),
        section_rank=section_rank,
        section_hits=section_hits,
    )


def fetch_succeeded(status: str, content: str) -> bool:
    """A fetch of the returned location succeeds on an OK status with non-blank content."""
    return status == "OK" and bool(content.strip())


def classify_fetch_outcome(status: str, content: str, candidates: Sequence[str]) -> str:
    """Map a GetContent status to the resolution vocabulary the eval set expects.

    ``resolved`` needs content, and ``ambiguous`` needs the candidates the caller would choose
    from; anything else is reported as ``error:<STATUS>`` (or ``empty``) so it never passes.
    """
    if status == "OK":
        return "resolved" if content.strip() else "empty"
    if status == "NOT_FOUND":
        return "not_found"
    if status == "FAILED_PRECONDITION":
        return "ambiguous" if candidates else "error:FAILED_PRECONDITION(no candidates)"
    return f"error:{status}"


def stale_location_passed(
    expect: str, outcome: str, resolved_location: str, acceptable: Sequence[str]
) -> bool:
    """Pass on the expected outcome; a resolution must also land on an acceptable page."""
    if outcome != expect:
        return False
    if expect == "resolved" and acceptable:
        return first_hit_rank([resolved_location], acceptable) == 1
    return True


# Two results whose snippets share this share of their words (Jaccard) show the agent the
# same thing twice.
REDUNDANT_SIMILARITY = 0.8


def redundant_results(snippets: Sequence[str]) -> int:
    """How many results repeat a better-ranked one: snippets sharing at least
    :data:`REDUNDANT_SIMILARITY` of their words (runs of word characters, case-folded) with
    an earlier snippet's.

    Judged on what the caller sees (the snippet), independently of how the ranking itself
    compares blocks (their whole bodies).
    """
    seen: list[frozenset[str]] = []
    repeats = 0
    for snippet in snippets:
        words = frozenset(re.findall(r"\w+", snippet.casefold()))
        if words and any(
            len(words & other) >= REDUNDANT_SIMILARITY * len(words | other) for other in seen
        ):
            repeats += 1
        seen.append(words)
    return repeats


def preview_chars(preview: str) -> int:
    """Visible length of a preview: whitespace collapsed, as the preview contract defines it."""
    return len(" ".join(preview.split()))


def preview_terms_found(terms: Sequence[str], previews: Sequence[str]) -> list[str]:
    """Expected terms that occur (case-insensitively) in any of the previews."""
    text = "\n".join(previews).lower()
    return [term for term in terms if term.lower() in text]


# --------------------------------------------------------------------------------- aggregation


def _rate(count: int, total: int) -> float | None:
    return None if total == 0 else count / total


def _hit_block(cases: Sequence[Mapping[str, Any]], field: str) -> dict[str, Any]:
    """Counts and rates of hit@n over cases whose ``field`` (hits / section_hits) is present."""
    block: dict[str, Any] = {}
    for cutoff in [*map(str, CUTOFFS), "k"]:
        measured = [
            c[field][cutoff] for c in cases if c.get(field) and c[field].get(cutoff) is not None
        ]
        count = sum(1 for hit in measured if hit)
        block[f"hit@{cutoff}_count"] = count
        block[f"hit@{cutoff}"] = _rate(count, len(measured)) if measured else None
    return block


def aggregate_cases(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Aggregate per-case records (the ``cases`` entries of a run record) into one summary.

    Search metrics cover cases that ran a search; fetch success covers searches that returned a
    location to fetch; the stale-location rate covers direct-fetch cases.
    """
    unanswerable = [c for c in cases if c.get("expect_abstain")]
    searched = [c for c in cases if c.get("query") is not None and not c.get("expect_abstain")]
    scored = [c for c in searched if c.get("hits") is not None]
    sectioned = [c for c in scored if c.get("section_hits") is not None]
    fetched = [c for c in searched if c.get("fetch_success") is not None]
    direct = [c for c in cases if c.get("stale") is not None]
    previews = [n for c in searched for n in c.get("preview_lengths", [])]

    summary: dict[str, Any] = {
        "case_count": len(cases),
        "search_case_count": len(searched),
        "search_error_count": sum(
            1 for c in searched if c.get("search", {}).get("status") == "error"
        ),
        "empty_result_count": sum(
            1 for c in searched if c.get("search", {}).get("status") == "empty"
        ),
    }
    summary.update(_hit_block(scored, "hits"))
    summary["mrr"] = (sum(c.get("rr", 0.0) for c in scored) / len(scored)) if scored else None
    summary["section_case_count"] = len(sectioned)
    section_block = _hit_block(sectioned, "section_hits")
    summary["section_hit@5"] = section_block["hit@5"]
    summary["section_hit@5_count"] = section_block["hit@5_count"]
    summary["fetch_attempted"] = len(fetched)
    summary["fetch_success_count"] = sum(1 for c in fetched if c["fetch_success"])
    summary["fetch_success_rate"] = _rate(summary["fetch_success_count"], len(fetched))
    summary["stale_case_count"] = len(direct)
    summary["stale_pass_count"] = sum(1 for c in direct if c["stale"].get("passed"))
    summary["stale_pass_rate"] = _rate(summary["stale_pass_count"], len(direct))
    # Abstention: how often unanswerable questions abstain, and how often answerable ones do.
    summary["abstain_expected_count"] = len(unanswerable)
    summary["abstain_correct_count"] = sum(1 for c in unanswerable if c.get("abstain_correct"))
    summary["abstain_recall"] = _rate(summary["abstain_correct_count"], len(unanswerable))
    abstained = [c for c in scored if c.get("search", {}).get("abstained")]
    summary["answerable_abstained_count"] = len(abstained)
    summary["answerable_abstained_hit1_count"] = sum(
        1 for c in abstained if (c.get("hits") or {}).get("hit@1")
    )
    summary["false_abstain_rate"] = _rate(len(abstained), len(scored))
    shown = sum(len(c.get("search", {}).get("returned", [])) for c in scored)
    summary["redundant_count"] = sum(c.get("redundant", 0) for c in scored)
    summary["redundant_share"] = _rate(summary["redundant_count"], shown)
    related = [c for c in cases if c.get("related_hits") is not None]
    summary["related_case_count"] = len(related)
    related_block = _hit_block(related, "related_hits")
    for cutoff in ("1", "3", "5"):
        summary[f"related_hit@{cutoff}"] = related_block[f"hit@{cutoff}"]
        summary[f"related_hit@{cutoff}_count"] = related_block[f"hit@{cutoff}_count"]
    summary["related_mrr"] = (
        sum(c.get("related_rr", 0.0) for c in related) / len(related) if related else None
    )
    summary["mean_preview_chars"] = (sum(previews) / len(previews)) if previews else None
    summary["min_preview_chars"] = min(previews) if previews else None
    return summary


def _case_tags(case: Mapping[str, Any]) -> list[str]:
    tag = case.get("tag")
    if isinstance(tag, str):
        return [tag]
    return list(tag or [])


def aggregate_run(cases: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Overall, per-tag and per-language aggregates of a run's per-case records."""
    by_tag: dict[str, list[Mapping[str, Any]]] = {}
    by_lang: dict[str, list[Mapping[str, Any]]] = {}
    for case in cases:
        for tag in _case_tags(case):
            by_tag.setdefault(tag, []).append(case)
        by_lang.setdefault(str(case.get("lang") or "en"), []).append(case)
    return {
        "overall": aggregate_cases(cases),
        "by_tag": {tag: aggregate_cases(group) for tag, group in sorted(by_tag.items())},
        "by_lang": {lang: aggregate_cases(group) for lang, group in sorted(by_lang.items())},
    }


def metric_delta(before: float | None, after: float | None) -> float | None:
    """after - before, or None when either side was not measured."""
    if before is None or after is None:
        return None
    if isinstance(before, float) and math.isnan(before):
        return None
    return after - before
