"""Code fragments of a location: ``#L10`` / ``#L10-L20`` lines, or a definition's name.

A name resolves with the vocabulary of pages: ``exact`` (the qualified name as the extractor
wrote it, ``Class.method``), ``variant`` (the same name in another case, or its last segments
naming one definition: ``#method`` for ``Class.method``), ``ambiguous`` with candidates when
several definitions match, ``not_found`` with the closest names otherwise. Candidates are
locations to pass back: the qualified name when it is unique in the file, else its lines.

Qualified names keep their language's separators (``Type::method`` in Rust and C++,
``Module::Class#method`` in Ruby, ``Namespace\\Class::method`` in PHP); a location may write
any of them as ``.``, so ``Outer.inner`` names a definition in every language.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from scriptorium.domain.model import Block, SourceDocument, line_fragment
from scriptorium.domain.outcomes import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Resolution,
)

_LINES = re.compile(r"^L(\d+)(?:-L?(\d+))?$", re.IGNORECASE)
_SEPARATORS = re.compile(r"::|#|\\")
MAX_CANDIDATES = 8


@dataclass(frozen=True, slots=True)
class SymbolMatch:
    block: Block
    rule: str  # exact or variant


def parse_line_range(fragment: str) -> tuple[int, int] | None:
    """``L10`` -> (10, 10), ``L10-L20`` (or ``L10-20``) -> (10, 20); None when the fragment is
    not a line form. Line 0 and reversed ranges are refused: they name no line."""
    match = _LINES.match(fragment)
    if not match:
        return None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    if start < 1 or end < 1:
        raise InvalidArgument(f"line anchor {fragment!r} names line 0: lines start at 1")
    if end < start:
        raise InvalidArgument(
            f"line range {fragment!r} is reversed: the first line must not come after the last"
        )
    return start, end


def find_definition(
    doc: SourceDocument, name: str, locate: Callable[[str], str], requested: str
) -> SymbolMatch:
    """The definition ``name`` names in ``doc``; raises NotFound or FailedPrecondition (with
    candidates) when it names none or several. ``locate`` turns a fragment into a location."""
    definitions = [b for b in doc.blocks if b.symbol is not None]
    for rule, matches in _tiers(definitions, name):
        if len(matches) == 1:
            return SymbolMatch(matches[0], rule)
        if matches:
            candidates = [locate(definition_fragment(doc, b)) for b in matches[:MAX_CANDIDATES]]
            resolution = Resolution(
                reason="ambiguous",
                rule=rule,
                candidates=candidates,
                detail=f"{len(matches)} definitions in this file match; pass one of the candidates",
                requested_location=requested,
            )
            raise FailedPrecondition("ambiguous location: several definitions match", resolution)
    names = sorted({b.anchor for b in definitions})
    close = difflib.get_close_matches(name, names, n=MAX_CANDIDATES, cutoff=0.6)
    leaves = {dotted(b.anchor).rsplit(".", 1)[-1]: b.anchor for b in definitions}
    leaf_asked = dotted(name).rsplit(".", 1)[-1]
    close += [
        leaves[leaf]
        for leaf in difflib.get_close_matches(leaf_asked, list(leaves), cutoff=0.6)
        if leaves[leaf] not in close
    ]
    resolution = Resolution(
        reason="not_found",
        rule="none",
        candidates=[locate(c) for c in close[:MAX_CANDIDATES]],
        detail="no definition of that name in this file"
        + ("; the candidates are the closest names" if close else ""),
        requested_location=requested,
    )
    raise NotFound("not_found: no definition of that name in this file", resolution)


def dotted(name: str) -> str:
    """A qualified name with every language's scope separator written as ``.``."""
    return _SEPARATORS.sub(".", name)


def _tiers(definitions: list[Block], name: str):
    """The matches of each rule, strictest first."""
    yield "exact", [b for b in definitions if b.anchor == name]
    plain = dotted(name)
    named = [(dotted(b.anchor), b) for b in definitions]
    yield "exact", [b for anchor, b in named if anchor == plain]
    folded = plain.casefold()
    yield "variant", [b for anchor, b in named if anchor.casefold() == folded]
    suffix = "." + plain
    yield "variant", [b for anchor, b in named if anchor.endswith(suffix)]
    folded_suffix = suffix.casefold()
    yield "variant", [b for anchor, b in named if anchor.casefold().endswith(folded_suffix)]


def definition_fragment(doc: SourceDocument, block: Block) -> str:
    """The block's qualified name when no other definition shares it, else its lines."""
    if sum(1 for b in doc.blocks if b.symbol is not None and b.anchor == block.anchor) == 1:
        return block.anchor
    return line_fragment(block.start_line, block.end_line)
