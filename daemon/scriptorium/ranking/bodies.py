"""What the ranking reads of a candidate's body, and where it reads it from.

The priors, document evidence and near-duplicate detection need a few facts about each
candidate's body (``text/features.py``). A candidate from the local index carries the
features its block was indexed with, read from tantivy's document store; any other (a remote
page, a block found by another route) has its body read, through the text cache, and the same
rules applied to it, remembered per body.
"""

from __future__ import annotations

import functools

from scriptorium.domain.model import Candidate
from scriptorium.text.features import (
    WordSet,
    cjk_head,
    coverage_tokens,
    has_directive,
    marked_deprecated,
    word_set,
    word_set_of,
)


@functools.lru_cache(maxsize=65_536)
def renders_from_code(body: str) -> bool:
    """Whether a documentation block pulls its content from code (remembered per body)."""
    return has_directive(body)


def matched_terms(cand: Candidate, terms: frozenset[str], options: tuple) -> frozenset[str]:
    """The query ``terms`` among the tokens document evidence and coverage look for
    (``options``: the index's token options, which the stored tokens were made with)."""
    features = cand.features
    if features is not None and features.available:
        return features.matched(terms)
    block = cand.block
    return terms & block_tokens(block.body, block.section_path, cand.document.path, options)


def directive_in(cand: Candidate) -> bool:
    features = cand.features
    if features is not None and features.available:
        return features.directive
    return renders_from_code(cand.block.body)


def deprecated_in(cand: Candidate) -> bool:
    """Whether the candidate's block defines a name marked deprecated where it is declared."""
    features = cand.features
    if features is not None and features.available:
        return features.deprecated
    return marked_deprecated(cand.block.body)


def cjk_head_of(cand: Candidate) -> bool:
    features = cand.features
    if features is not None and features.available:
        return features.cjk_head
    return cjk_head(cand.block.body)


def words_of(cand: Candidate) -> WordSet:
    """The words near-duplicate detection compares, with their signature."""
    features = cand.features
    if features is not None and features.available:
        return features.word_set
    return _word_set(cand.block.body)


@functools.lru_cache(maxsize=4096)
def _word_set(body: str) -> WordSet:
    """A block's words, remembered per body (see ``text.features.word_set``)."""
    return word_set_of(word_set(body))


@functools.lru_cache(maxsize=1024)
def block_tokens(
    body: str, section_path: tuple[str, ...], path: str, options: tuple = ()
) -> frozenset[str]:
    """The tokens coverage and document evidence look for in a body read whole; a block's
    best result is asked about again and again."""
    return coverage_tokens(body, section_path, path, options)
