"""GuideImplementation: one grounded guide from search, expansion and flow summary.

The guide never invents a source: every doc, sample and step points at indexed content, and
what the corpus does not support is said in ``assumptions``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING

from scriptorium import faults, limits
from scriptorium.cancel import cancelled, checkpoint
from scriptorium.compose.flow import summarize
from scriptorium.compose.related import expand_related, frameworks_in
from scriptorium.compose.seeds import load_seeds
from scriptorium.domain.model import Corpus, Query, RefKind
from scriptorium.domain.outcomes import GuideOutcome, InvalidArgument, SearchHit
from scriptorium.text import clip_at_whitespace, query_terms, token_set
from scriptorium.text.tokenize import CJK_CHARS

if TYPE_CHECKING:
    from scriptorium.compose.view import CorpusView

# A topic is searched by its first MAX_TOPIC_CHARS characters; past MAX_QUERY_CHARS it is refused.
MAX_TOPIC_CHARS = limits.MAX_TOPIC_CHARS
# The ranking mode built for "how do I implement X" (a first-party plugin).
GUIDE_MODE = "implementation"
CJK_RUN = re.compile(f"[{CJK_CHARS}]")
# A topic word held by at most this share of the indexed blocks is specific to the topic.
RARE_SHARE = 0.01
_EXAMPLE_DIRS = ("docs_src/", "examples/", "example/", "samples/", "sample/", "demo/")


def is_example_path(location: str) -> bool:
    """Paths that hold runnable examples rather than library code."""
    path = location.lower()
    return any(path.startswith(d) or f"/{d}" in path for d in _EXAMPLE_DIRS)


def guide_query(topic: str, framework: str, language: str) -> str:
    """The search text: the topic plus framework and language when they add a term."""
    words = topic.strip()
    have = set(query_terms(words))
    for extra in (framework, language):
        extra = extra.strip()
        if extra and not set(query_terms(extra)) <= have:
            words = f"{words} {extra}"
            have |= set(query_terms(extra))
    return words


def guide_mode(modes: Collection[str]) -> str:
    """The ranking mode a guide searches with: ``implementation`` when that plugin is loaded,
    else the default (``SCRIPTORIUM_PLUGINS`` may leave it out; the guide then says so)."""
    return GUIDE_MODE if GUIDE_MODE in modes else "default"


def guide_implementation(
    view: CorpusView,
    topic: str,
    framework: str = "",
    language: str = "",
    max_docs: int = 0,
    max_samples: int = 0,
    style: str = "",
    sources: tuple[str, ...] = (),
    mode: str = GUIDE_MODE,
) -> GuideOutcome:
    faults.pause("rpc.guide", stop=cancelled)
    checkpoint()
    received = len(topic)
    topic = _searched_topic(topic)
    max_docs = _count(max_docs, limits.GUIDE_DOCS_DEFAULT, limits.GUIDE_DOCS_MAX)
    max_samples = _count(max_samples, limits.GUIDE_SAMPLES_DEFAULT, limits.GUIDE_SAMPLES_MAX)
    text = guide_query(topic, framework, language)
    base = view.make_query_from(text, top_k=20, mode=mode, sources=sources)
    outcome = view.search_query(base)
    docs = [h for h in outcome.hits if h.kind is RefKind.DOC][:max_docs]
    # Runnable examples make better samples than library internals; both stay in score order.
    code = [h for h in outcome.hits if h.kind is not RefKind.DOC]
    samples = sorted(code, key=lambda h: (not is_example_path(h.location), -h.score))[:max_samples]
    assumptions: list[str] = []
    if mode != GUIDE_MODE:
        assumptions.append(
            f"the {GUIDE_MODE!r} ranking mode is not loaded; results are ranked by {mode!r}"
        )
    if outcome.abstained and outcome.abstain_reason == "low_confidence":
        assumptions.append("the best matches cover few of the topic's terms; treat them as leads")
    checkpoint()
    _add_related(view, base, text, (docs, max_docs), (samples, max_samples), mode, sources)
    if not docs:
        assumptions.append("no documentation in the indexed sources matches this topic")
    if not samples:
        assumptions.append("no sample code in the indexed sources matches this topic")
    for name, value in (("framework", framework), ("language", language)):
        if value.strip() and not _mentioned(view, docs + samples, value):
            assumptions.append(
                f"the {name} {value.strip()!r} does not appear in the supporting refs"
            )
    unmentioned = _unmentioned_terms(view, docs + samples, topic) if docs or samples else []
    if unmentioned:
        listed = ", ".join(repr(term) for term in unmentioned)
        assumptions.append(
            f"no supporting ref mentions {listed}: that part of the topic is not covered"
        )
    checkpoint()
    flow_refs = [h.ref_id for h in docs[:2] + samples[:2]]
    seeds_loaded, _ = load_seeds(view.snapshot, flow_refs, view.lines_of)
    steps, notes, confidence = summarize(view, seeds_loaded, style, 8)
    assumptions += notes
    # Well-structured steps can still answer another question, so how well the corpus
    # supports the topic bounds the guide's confidence: each sign of weak support (no docs or
    # no samples, the search unsure of its best match, specific words no ref mentions) caps
    # it at medium, and two of them at low.
    unsure = outcome.abstained and outcome.abstain_reason == "low_confidence"
    doubts = sum((not docs or not samples, unsure, bool(unmentioned)))
    if not (docs or samples) or doubts >= 2:
        confidence = "low"
    elif doubts:
        confidence = min(confidence, "medium", key=_rank)
    return GuideOutcome(
        query=text,
        flow=steps,
        docs=docs,
        sample_code=samples,
        assumptions=assumptions,
        confidence=confidence,
        trace_id=outcome.trace_id,
        topic_truncated=received > len(topic),
        topic_chars_used=len(topic),
    )


def _searched_topic(topic: str) -> str:
    """The topic as searched, its first MAX_TOPIC_CHARS characters; an empty one, or one past
    MAX_QUERY_CHARS, is refused."""
    if not topic.strip():
        raise InvalidArgument("topic is required")
    if len(topic) > limits.MAX_QUERY_CHARS:
        raise InvalidArgument(
            f"topic is {len(topic)} characters; at most {limits.MAX_QUERY_CHARS} are accepted"
            f" (of a long topic, the first {MAX_TOPIC_CHARS} are searched)"
        )
    return clip_at_whitespace(topic, MAX_TOPIC_CHARS)


def _count(asked: int, default: int, cap: int) -> int:
    """A requested number of refs: the default for 0 (or less), at most the cap."""
    return default if asked <= 0 else min(asked, cap)


def _add_related(
    view: CorpusView,
    base: Query,
    text: str,
    docs: tuple[list[SearchHit], int],
    samples: tuple[list[SearchHit], int],
    mode: str,
    sources: tuple[str, ...],
) -> None:
    """Fill the docs and samples (each a list and its cap) with on-topic refs related to the
    best of each, in the order ExpandRelated gives them."""
    (doc_hits, max_docs), (sample_hits, max_samples) = docs, samples
    seeds = [h.ref_id for h in (doc_hits[:1] + sample_hits[:1])]
    if not seeds:
        return
    related = expand_related(view, seeds, top_k=12, mode=mode, sources=sources)
    have = {h.location for h in doc_hits + sample_hits}
    wanted = set(query_terms(text))
    for hit in related.related:
        if hit.location in have or not _on_topic(view, hit.ref_id, wanted):
            continue
        if hit.kind is RefKind.DOC and len(doc_hits) < max_docs:
            doc_hits.append(_from_related(view, base, hit))
            have.add(hit.location)
        elif hit.kind is not RefKind.DOC and len(sample_hits) < max_samples:
            sample_hits.append(_from_related(view, base, hit))
            have.add(hit.location)


def _rank(level: str) -> int:
    return {"low": 0, "medium": 1, "high": 2}.get(level, 0)


def _on_topic(view: CorpusView, ref_id: str, wanted: set[str]) -> bool:
    """A related ref joins the guide only if it shares at least one topic term."""
    seeds, _ = load_seeds(view.snapshot, [ref_id], view.lines_of)
    if not seeds:
        return False
    return bool(wanted & token_set(seeds[0].text[:20000]))


def _mentioned(view: CorpusView, hits: list[SearchHit], value: str) -> bool:
    terms = set(query_terms(value))
    if not terms:
        return True
    wanted_frameworks = frameworks_in(value)
    for hit in hits:
        seeds, _ = load_seeds(view.snapshot, [hit.ref_id], view.lines_of)
        if not seeds:
            continue
        text = seeds[0].doc.text[:50000]
        if wanted_frameworks & frameworks_in(text) or terms & token_set(text[:5000]):
            return True
        if seeds[0].doc.language and seeds[0].doc.language.lower() in {t.lower() for t in terms}:
            return True
    return False


def _unmentioned_terms(view: CorpusView, hits: list[SearchHit], topic: str) -> list[str]:
    """The topic's specific words that none of ``hits`` contains, in topic order.

    A word is specific when at most :data:`RARE_SHARE` of the indexed blocks hold it: "cron"
    or "orm" missing from every supporting ref means that part of the topic is not covered,
    while "another" or "their" missing means nothing. Words are compared stemmed, so "jobs"
    is mentioned by a ref that says "job". CJK text is searched as character bigrams, and a
    missing bigram says nothing about a missing idea, so only words outside those scripts count.
    """
    words = [t for t in query_terms(topic) if not CJK_RUN.search(t)]
    searcher = getattr(view.snapshot, "searcher", None)
    if not words or searcher is None:
        return []
    mentioned: set[str] = set()
    for hit in hits:
        seeds, _ = load_seeds(view.snapshot, [hit.ref_id], view.lines_of)
        if seeds:
            # The location's tokens and the text's, as one text of both would give them.
            mentioned.update(token_set(hit.location, stem=True))
            mentioned.update(token_set(seeds[0].text[:20000], stem=True))
    limit = RARE_SHARE * searcher.num_docs
    missing = []
    for word in words:
        stemmed = query_terms(word, stem=True)[0]
        if stemmed in mentioned:
            continue
        if searcher.doc_freq("body", stemmed) + searcher.doc_freq("heading", stemmed) <= limit:
            missing.append(word)
    return missing


def _from_related(view: CorpusView, query: Query, hit) -> SearchHit:
    """A related ref as a search hit, so docs and samples have one shape."""
    results = view.hits_for_refs(query, [hit.ref_id])
    return results[0]


__all__ = ["GUIDE_MODE", "Corpus", "guide_implementation", "guide_mode"]
