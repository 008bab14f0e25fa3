"""Which of the query's terms a candidate covers, and what that is worth.

Both levers count distinct terms, never occurrences: BM25 already rewards repetition, and a
long page that repeats one word in every section should gain nothing from these. The terms a
block holds come from its stored ranking features (``ranking/bodies.matched_terms``), so
neither lever tokenises a candidate at search time.
"""

from __future__ import annotations

from collections import defaultdict

from scriptorium.domain.model import Candidate, Corpus, Query
from scriptorium.ranking.bodies import matched_terms
from scriptorium.settings.ranking import RankingSettings


def document_evidence(settings: RankingSettings, query: Query, candidates: list[Candidate]) -> None:
    """Weigh up blocks whose document covers query terms the block itself lacks.

    The document's terms are the union over its blocks among the candidates, so a page whose
    matching words are spread over its sections can beat one section matching a few of them.
    """
    shares = {Corpus.DOCS: settings.document_evidence, Corpus.CODE: settings.document_evidence_code}
    terms = frozenset(query.terms)
    if not any(shares.values()) or len(terms) < 2:
        return
    options = settings.token_key()
    own: list[frozenset[str]] = []
    union: dict[tuple[str, str], set[str]] = defaultdict(set)
    for cand in candidates:
        matched = matched_terms(cand, terms, options)
        own.append(matched)
        union[(cand.source, cand.document.path)].update(matched)
    for cand, matched in zip(candidates, own, strict=True):
        share = shares.get(cand.document.corpus, 0.0)
        extra = len(union[(cand.source, cand.document.path)]) - len(matched)
        if share and extra:
            cand.adjust(
                "document",
                1 + share * extra / len(terms),
                f"its document also matches {extra} more query terms",
            )


def term_coverage(settings: RankingSettings, query: Query, candidates: list[Candidate]) -> None:
    """Weigh a question's blocks by the share of its distinct terms they match.

    A small section whose heading holds one query word ("build.write" for "writing a vite
    plugin") scores high in BM25 on that word alone; the factor (matched / terms) ** power
    lets a block matching every word pass it. Only queries of at most
    ``term_coverage_max_terms`` distinct terms: no block is expected to hold every word of a
    pasted paragraph, and there the title and identifiers steer instead.
    """
    power = settings.term_coverage
    terms = frozenset(query.terms)
    if not power or not 2 <= len(terms) <= settings.term_coverage_max_terms:
        return
    options = settings.token_key()
    count = len(terms)
    # The factor of each number of matched terms, made once per search (the same expression,
    # so the same floats); the sentence only for an explained candidate.
    factors = [(max(matched, 1) / count) ** power for matched in range(count)]
    for cand in candidates:
        matched = len(matched_terms(cand, terms, options))
        if matched < count:
            if cand.explained:
                cand.adjust(
                    "coverage", factors[matched], f"matches {matched} of {count} query terms"
                )
            else:
                cand.score *= factors[matched]
