"""Suite scoring, pure: results collapsed to files, then page/file and span metrics.

Every system hands in the same shape (an ordered list of result files, each with the definition
a code result is, if any), so the daemon and the baselines are scored by one function.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

HIT_CUTOFFS = (1, 3, 5, 10)
SPAN_CUTOFFS = (5, 10)
NDCG_CUTOFFS = (5, 10)
RECALL_CUTOFF = 10


@dataclass(frozen=True, slots=True)
class Result:
    """One result as scored: the repository file it points into and the definition it is."""

    file: str
    definition: str | None = None


def collapse(results: Sequence[Result]) -> list[str]:
    """Distinct files in order of their best-ranked result (each page counted once)."""
    return list(dict.fromkeys(r.file for r in results))


def first_rank(files: Sequence[str], gains: Mapping[str, int]) -> int | None:
    for rank, file in enumerate(files, start=1):
        if gains.get(file, 0) > 0:
            return rank
    return None


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg(files: Sequence[str], gains: Mapping[str, int], k: int) -> float:
    """nDCG@k with the grades as (linear) gains; the ideal list orders every graded page."""
    ideal = dcg(sorted((g for g in gains.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([gains.get(f, 0) for f in files[:k]]) / ideal


def recall(files: Sequence[str], gains: Mapping[str, int], k: int) -> float:
    relevant = {f for f, g in gains.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(files[:k])) / len(relevant)


def span_matches(result: Result, spans: Mapping[str, frozenset[str]]) -> bool:
    """A code result counts when its definition is an expected span, or the class of one
    (``Class`` for ``Class.method``)."""
    if result.definition is None:
        return False
    wanted = spans.get(result.file, frozenset())
    return any(s == result.definition or s.startswith(result.definition + ".") for s in wanted)


def hit_metrics(files: Sequence[str], gains: Mapping[str, int]) -> dict[str, float]:
    rank = first_rank(files, gains)
    out = {f"hit@{k}": float(rank is not None and rank <= k) for k in HIT_CUTOFFS}
    out["mrr"] = 0.0 if rank is None else 1.0 / rank
    return out


def docs_search_metrics(results: Sequence[Result], gains: Mapping[str, int]) -> dict[str, float]:
    """Hit@1/3/5, MRR, Recall@10 and nDCG@5/10 at page level."""
    files = collapse(results)
    hits = hit_metrics(files, gains)
    out = {k: hits[k] for k in ("hit@1", "hit@3", "hit@5", "mrr")}
    out[f"recall@{RECALL_CUTOFF}"] = recall(files, gains, RECALL_CUTOFF)
    for k in NDCG_CUTOFFS:
        out[f"ndcg@{k}"] = ndcg(files, gains, k)
    return out


def page_metrics(
    results: Sequence[Result], gains: Mapping[str, int], cutoffs: Sequence[int], mrr_cutoff: int
) -> dict[str, float]:
    """Hit@k for ``cutoffs`` and MRR counted within the first ``mrr_cutoff`` pages (MRR@10, as
    the project set's top-10 MRR and DS-1000's own figure are)."""
    rank = first_rank(collapse(results), gains)
    out = {f"hit@{k}": float(rank is not None and rank <= k) for k in cutoffs}
    out["mrr"] = 0.0 if rank is None or rank > mrr_cutoff else 1.0 / rank
    return out


def swebench_metrics(
    results: Sequence[Result],
    gains: Mapping[str, int],
    spans: Mapping[str, frozenset[str]],
    *,
    with_spans: bool = True,
) -> dict[str, float]:
    """File Hit@1/3/5/10 and MRR; Span-Hit@5/10 over the first results (not files)."""
    out = hit_metrics(collapse(results), gains)
    if with_spans:
        for k in SPAN_CUTOFFS:
            out[f"span@{k}"] = float(any(span_matches(r, spans) for r in results[:k]))
    return out


def fastapi_metrics(rank: int | None, section_rank: int | None, has_sections: bool) -> dict:
    """The project set's page-level rank as hit@n / MRR, plus section hit@5 when it has one."""
    out = {f"hit@{k}": float(rank is not None and rank <= k) for k in HIT_CUTOFFS}
    out["mrr"] = 0.0 if rank is None else 1.0 / rank
    if has_sections:
        out["sec@5"] = float(section_rank is not None and section_rank <= 5)
    return out


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def average(rows: Sequence[Mapping[str, float]]) -> dict[str, float | None]:
    """Per-metric mean over the rows that have the metric."""
    names = list(dict.fromkeys(name for row in rows for name in row))
    return {name: mean([row[name] for row in rows if name in row]) for name in names}
