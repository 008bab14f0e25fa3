"""SummarizeFlow: refs in, a deterministic list of grounded steps out.

Markdown is read in priority order (numbered steps, labelled steps such as ``Step 1:`` or
``手順1``, bullet lists, nested headings, paragraphs); code contributes route handlers,
definitions and recognisable operations. The same refs always give the same flow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptorium import limits
from scriptorium.cancel import checkpoint
from scriptorium.compose.seeds import Seed, load_seeds
from scriptorium.domain.model import RefKind
from scriptorium.domain.outcomes import FlowOutcome, FlowStep
from scriptorium.text import collapse_whitespace
from scriptorium.text.code import code_flow_candidates
from scriptorium.text.markdown import flow_candidates

MAX_STEPS_DEFAULT, MAX_STEPS_CAP = limits.FLOW_STEPS_DEFAULT, limits.FLOW_STEPS_MAX
if TYPE_CHECKING:
    from scriptorium.compose.view import CorpusView

_STRONG = {"numbered", "labelled"}
_ORIGIN_QUALITY = {
    "numbered": 3,
    "labelled": 3,
    "route": 3,
    "bullet": 2,
    "heading": 2,
    "signature": 2,
    "operation": 2,
    "paragraph": 1,
    "topic": 0,
}


def _shorten(text: str, limit: int) -> str:
    text = collapse_whitespace(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def steps_from_seed(seed: Seed, view: CorpusView) -> list[tuple[str, str, str, int]]:
    """(origin, title, description, line) candidates from one seed, in document order.

    Remembered per seed range for the generation: guides summarise the same pages call after
    call, and reading a page's structure is a Markdown parse of it."""
    doc = seed.doc
    key = ("flow-steps", doc.source, doc.path, doc.content_hash, seed.start_line, seed.end_line)
    snapshot = getattr(view, "snapshot", None)
    found = snapshot.memo.get(key) if snapshot is not None else None
    if found is None:
        found = tuple(_steps_from_seed(seed))
        if snapshot is not None:
            snapshot.remember(key, found)
    return list(found)


def _steps_from_seed(seed: Seed) -> list[tuple[str, str, str, int]]:
    lines = seed.lines[seed.start_line - 1 : seed.end_line]
    if seed.is_code:
        return [
            (origin, title, description, line + seed.start_line - 1)
            for line, origin, title, description in code_flow_candidates(lines, seed.doc.language)
        ]
    return [
        (i.origin, i.title, f"{i.description}\n\n{i.code}" if i.code else i.description, i.line_no)
        for i in flow_candidates(lines, seed.start_line)
    ]


def _describe(description: str, limit: int) -> str:
    """A step's prose on one line, cut to ``limit``; the code block its sentence introduces
    (after a blank line) is kept as written: collapsed, code would not read as code."""
    prose, blank, code = description.partition("\n\n")
    shown = _shorten(prose, limit)
    return f"{shown}\n\n{code}" if blank and code else shown


def summarize(
    view: CorpusView, seeds: list[Seed], style: str, max_steps: int
) -> tuple[list[FlowStep], list[str], str]:
    """Merge the seeds' steps in seed order; returns (steps, assumptions, confidence)."""
    limit = MAX_STEPS_DEFAULT if max_steps <= 0 else min(max_steps, MAX_STEPS_CAP)
    compact = style == "compact"
    steps: list[FlowStep] = []
    origins: list[str] = []
    seen_titles: set[str] = set()
    assumptions: list[str] = []
    # Several refs share the budget so each contributes; one ref may use all of it.
    per_seed = limit if len(seeds) == 1 else max(2, -(-limit // len(seeds)))
    for seed in seeds:
        checkpoint()
        candidates = steps_from_seed(seed, view)[:per_seed]
        if not candidates:
            assumptions.append(f"{seed.doc.path}: no step structure was found in this ref")
            continue
        source = view.by_name[seed.doc.source]
        for origin, title, description, line in candidates:
            key = collapse_whitespace(title).casefold()
            if not key or key in seen_titles:
                continue
            seen_titles.add(key)
            if seed.is_code:
                loc = f"{source.page_location(seed.doc.path)}#L{line}"
            else:
                page = source.page_location(seed.doc.path)
                anchor = seed.block.anchor if seed.block is not None else ""
                loc = f"{page}#{anchor}" if anchor else page
            location = loc if source.is_default else f"{source.name}/{loc}"
            steps.append(
                FlowStep(
                    index=len(steps) + 1,
                    title=_shorten(title, 80 if compact else 160),
                    description="" if compact else _describe(description, 400),
                    ref_ids=[seed.ref_id],
                    locations=[location],
                    origin=origin,
                )
            )
            origins.append(origin)
            if len(steps) >= limit:
                break
        if len(steps) >= limit:
            assumptions.append(f"the flow was cut at {limit} steps")
            break
    kinds = sorted(set(origins))
    if origins and not (_STRONG & set(origins)):
        assumptions.append(
            "no numbered or labelled steps were found; steps come from " + ", ".join(kinds)
        )
    return steps, assumptions, confidence_of(seeds, origins)


def confidence_of(seeds: list[Seed], origins: list[str]) -> str:
    """High for explicit steps from clean sources, medium for structure, low for fallbacks."""
    if not origins:
        return "low"
    quality = sum(_ORIGIN_QUALITY.get(o, 1) for o in origins) / len(origins)
    clean = all(s.doc.meta.parse_confidence >= 0.9 for s in seeds)
    # Merge stability: steps drawn from many refs of different kinds agree less reliably.
    kinds = {s.ref.kind for s in seeds}
    stable = len(seeds) <= 3 and not (RefKind.DOC in kinds and len(kinds) > 1 and len(seeds) > 2)
    if quality >= 2.5 and clean and len(origins) >= 2 and stable:
        return "high"
    if quality >= 1.5 and clean:
        return "medium"
    return "low"


def summarize_flow(
    view: CorpusView, ref_ids: list[str], topic: str = "", style: str = "", max_steps: int = 0
) -> FlowOutcome:
    snapshot = view.snapshot
    seeds, unresolved = load_seeds(snapshot, ref_ids, view.lines_of)
    assumptions: list[str] = []
    if unresolved:
        assumptions.append(f"{len(unresolved)} ref(s) no longer resolve and were skipped")
    if not seeds and topic.strip():
        seeds = view.topic_seeds(topic)
        assumptions.append("no usable refs were given; the flow follows a search for the topic")
    if not seeds:
        step = FlowStep(1, _shorten(topic, 160) or "No steps", "", [], [], "topic")
        assumptions.append("nothing in the indexed sources supports a flow for this request")
        return FlowOutcome(
            [step] if topic.strip() else [], assumptions, "low", unresolved_ref_ids=unresolved
        )
    steps, notes, confidence = summarize(view, seeds, style, max_steps)
    return FlowOutcome(steps, assumptions + notes, confidence, unresolved_ref_ids=unresolved)
