"""The diversified window: which ranked candidates take a result's place, and why the others
do not.

A window of ``size`` results takes at most ``max_per_document`` blocks of one document, no
code block nested with a better one of its file (a method under its class), no translation
of a page whose original (or another language's copy) is shown above or ranks anywhere among
the candidates (for an English query), no variant of a page shown above (the same guide for
another framework, platform or version, ranking/variants.py: one of them is shown, the
first or the newest version) unless the query names its folder, and no near-duplicate
of a result above it (ranking/twins.py); what is held back overflows, and
backfills a window left short. ``Pipeline.order`` cuts the window to the results asked for,
and :func:`held_back_why` says why a held-back block is missing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from scriptorium.domain.model import Candidate, RefKind
from scriptorium.ranking.bodies import words_of
from scriptorium.ranking.paths import page_in_any_language
from scriptorium.ranking.twins import near_duplicate
from scriptorium.ranking.variants import variant_name, version_of
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text.features import WordSet

# What splits a variant folder's name into the words a query may name (``solid-query``).
_NAME_PARTS = re.compile(r"[-_.~ ]+")


@dataclass(slots=True)
class Window:
    """The diversified window before the cut, what overflowed it, and why: the near-duplicates
    held back (id -> the result each copies), the blocks nested with a better one (id -> that
    one), the translations of a page shown or ranked lower (id -> the original's candidate;
    ``above_originals``: those ranked above it) and the overflow moved up to fill it."""

    size: int
    window: list[Candidate] = field(default_factory=list)
    overflow: list[Candidate] = field(default_factory=list)
    twins: dict[int, Candidate] = field(default_factory=dict)
    nested: dict[int, Candidate] = field(default_factory=dict)
    translations: dict[int, Candidate] = field(default_factory=dict)
    above_originals: set[int] = field(default_factory=set)
    variants: dict[int, Candidate] = field(default_factory=dict)
    backfilled: set[int] = field(default_factory=set)


def diversify(
    settings: RankingSettings,
    unique: list[Candidate],
    size: int,
    said: frozenset[str] = frozenset(),
) -> Window:
    """A window of ``size`` results from ``unique`` (in rank order), as the module says;
    ``said`` holds the query's words, case-folded (a variant whose folder it names is shown).

    Ranked for ``size`` results and cut to ``top_k`` only later, so that the first results
    do not depend on how many were asked for.
    """
    shaped = Window(size)
    window, overflow = shaped.window, shaped.overflow
    limit = settings.max_per_document
    similarity = settings.near_duplicate_similarity
    nested = settings.hold_back_nested
    # Pages are compared only when the priors weighed some candidate as a translation.
    translations = settings.hold_back_translations and any(c.translated for c in unique)
    shown: list[WordSet] = []  # the words of the window's results, in order
    # The window's results of each document, in order.
    shown_of: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    # The first documentation result of each page, whatever its language (``page_in_any_language``).
    pages: dict[str, Candidate] = {}
    originals = _originals(unique) if translations else {}
    # The variant each family of variants (``Candidate.variant``) shows.
    families = _shown_variants(unique[:size]) if settings.hold_back_variants else {}
    for cand in unique:
        doc_key = (cand.source, cand.document.path)
        same_doc = shown_of[doc_key]
        if limit > 0 and len(same_doc) >= limit:
            overflow.append(cand)
            continue
        page = (
            page_in_any_language(cand.document.path)
            if translations and cand.block.kind is RefKind.DOC
            else ""
        )
        if cand.translated and page and len(window) < size:
            above = pages.get(page)
            other = above or originals.get(page)
            if other is not None and (other.source, other.document.path) != doc_key:
                shaped.translations[id(cand)] = other
                if above is None:
                    shaped.above_originals.add(id(cand))
                overflow.append(cand)
                continue
        chosen = _shown_instead(cand, families, said) if families and len(window) < size else None
        if chosen is not None:
            shaped.variants[id(cand)] = chosen
            overflow.append(cand)
            continue
        # Only the window's own results are compared: below the cut nothing is shown.
        if nested and len(window) < size and same_doc and cand.block.kind is RefKind.CODE:
            outer = nesting(cand, same_doc)
            if outer is not None:
                shaped.nested[id(cand)] = outer
                overflow.append(cand)
                continue
        if similarity and len(window) < size:
            words = words_of(cand)
            twin = near_duplicate(words, shown, similarity)
            if twin is not None:
                shaped.twins[id(cand)] = window[twin]
                overflow.append(cand)
                continue
            shown.append(words)
        same_doc.append(cand)
        window.append(cand)
        if page:
            pages.setdefault(page, cand)

    _backfill(shaped)
    return shaped


def _backfill(shaped: Window) -> None:
    """Fill a window diversification left short from the overflow: after the diversified
    results, not among them, so that what a short list holds back stays below what a longer
    one shows (the results are a prefix of any longer list's)."""
    window, overflow = shaped.window, shaped.overflow
    if len(window) < shaped.size and overflow:
        room = shaped.size - len(window)
        shaped.backfilled = {id(c) for c in overflow[:room]}
        window.extend(overflow[:room])
        shaped.overflow = overflow[room:]


def _originals(unique: list[Candidate]) -> dict[str, Candidate]:
    """The best candidate of each page not weighed as a translation, wherever it ranks: a
    translation ranked above its original gives way to it all the same."""
    originals: dict[str, Candidate] = {}
    for cand in unique:
        if not cand.translated and cand.block.kind is RefKind.DOC:
            originals.setdefault(page_in_any_language(cand.document.path), cand)
    return originals


def _shown_instead(
    cand: Candidate, families: dict[str, Candidate], said: frozenset[str]
) -> Candidate | None:
    """The variant of ``cand``'s page shown instead of it, if any: not when it is that one's
    document, nor when the query names its own folder ("vue")."""
    family = cand.variant
    chosen = families.get(family) if family else None
    if chosen is None or (chosen.source, chosen.document.path) == (
        cand.source,
        cand.document.path,
    ):
        return None
    if _names_variant(cand, chosen, said):
        return None
    return chosen


def _names_variant(cand: Candidate, chosen: Candidate, said: frozenset[str]) -> bool:
    """Whether the query names ``cand``'s variant folder ("vue"), or a word of it the shown
    one's lacks ("solid" of ``solid-query`` beside ``preact-query``)."""
    name = variant_name(cand.document.path, cand.variant).casefold()
    if name in said:
        return True
    shown = set(_NAME_PARTS.split(variant_name(chosen.document.path, chosen.variant).casefold()))
    return any(
        part in said and not part.isdigit() and part not in shown
        for part in _NAME_PARTS.split(name)
    )


def _shown_variants(ranked: list[Candidate]) -> dict[str, Candidate]:
    """Each family's variant to show: its first among ``ranked``, unless a later one's
    folder names a newer version (``pytorch~2`` after ``pytorch``)."""
    shown: dict[str, Candidate] = {}
    for cand in ranked:
        family = cand.variant
        if not family:
            continue
        held = shown.get(family)
        if held is None or _version(cand) > _version(held):
            shown[family] = cand
    return shown


def _version(cand: Candidate) -> tuple[int, ...]:
    return version_of(variant_name(cand.document.path, cand.variant))


def nesting(cand: Candidate, shown: list[Candidate]) -> Candidate | None:
    """The first code result of ``shown`` (the window's results of the same document) whose
    lines hold ``cand``'s or lie inside them. Documentation sections are left alone: a
    subsection is the more precise answer than the section it is under, not a copy of it
    (holding them back too cost the FastAPI set's section Hit@5 0.912 → 0.882)."""
    start, end = cand.block.start_line, cand.block.end_line
    for other in shown:
        if other.block.kind is not RefKind.CODE:
            continue
        other_start, other_end = other.block.start_line, other.block.end_line
        if (other_start <= start and end <= other_end) or (
            start <= other_start and other_end <= end
        ):
            return other
    return None


def held_back_why(cand: Candidate, shaped: Window, capped: str, floor: float, top_k: int) -> str:
    """Why a block held out of the window is missing from the results."""
    if cand.score < floor:
        return below_cut(top_k, cand)
    twin = shaped.twins.get(id(cand))
    if twin is not None:
        return f"near-duplicate of {twin.location or twin.document.path}"
    original = shaped.translations.get(id(cand))
    if original is not None:
        where = original.location or original.document.path
        if id(cand) in shaped.above_originals:
            return f"a translation of {where}, which ranks lower"
        return f"a translation of {where}, shown above"
    shown = shaped.variants.get(id(cand))
    if shown is not None:
        name = variant_name(cand.document.path, cand.variant)
        return f"a variant ({name}) of {shown.location or shown.document.path}, shown instead"
    outer = shaped.nested.get(id(cand))
    if outer is not None:
        inside = outer.block.start_line <= cand.block.start_line
        how = "inside" if inside and cand.block.end_line <= outer.block.end_line else "around"
        return f"lines {how} those of {outer.location or outer.document.path}"
    return capped


def below_cut(top_k: int, cand: Candidate) -> str:
    return f"ranked below the top {top_k} (score {cand.score:.4f})"
