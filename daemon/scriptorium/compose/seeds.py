"""Loading refs as seeds for the composing calls (related material, flows, guides)."""

from __future__ import annotations

from dataclasses import dataclass

from scriptorium import limits
from scriptorium.content.cut import block_for_line, find_doc_block
from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument
from scriptorium.domain.outcomes import InvalidArgument, RetrievalError
from scriptorium.domain.refs import Ref, decode_ref
from scriptorium.index.catalog import Snapshot
from scriptorium.sources.paths import PathEscapeError, safe_relative_path

MAX_SEEDS = limits.MAX_SEEDS
CODE_CONTEXT_LINES = 40


@dataclass(frozen=True, slots=True)
class Seed:
    """The content behind one ref: a doc block, a code region or a whole file."""

    ref_id: str
    ref: Ref
    doc: SourceDocument
    block: Block | None
    start_line: int
    end_line: int
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines[self.start_line - 1 : self.end_line])

    @property
    def is_code(self) -> bool:
        return self.doc.corpus is Corpus.CODE

    @property
    def location_key(self) -> tuple[str, str, int, int]:
        return (self.doc.source, self.doc.path, self.start_line, self.end_line)


def load_seeds(snapshot: Snapshot, ref_ids: list[str], lines_of) -> tuple[list[Seed], list[str]]:
    """Seeds for the given refs, plus the ref ids that no longer resolve (stale refs).

    A malformed ref is the caller's error (INVALID_ARGUMENT); a ref to content that has since
    gone is reported back in the unresolved list instead of failing the whole call.
    """
    if len(ref_ids) > MAX_SEEDS:
        raise InvalidArgument(f"at most {MAX_SEEDS} refs per call")
    seeds: list[Seed] = []
    unresolved: list[str] = []
    for ref_id in ref_ids:
        ref = decode_ref(ref_id)
        try:
            path = safe_relative_path(ref.path)
        except PathEscapeError as exc:
            raise InvalidArgument(f"ref path refused: {exc}") from None
        doc = snapshot.docs.get((ref.source, path))
        if doc is None:
            unresolved.append(ref_id)
            continue
        try:
            seeds.append(_seed(ref_id, ref, doc, lines_of(doc)))
        except RetrievalError:
            unresolved.append(ref_id)
    return seeds, unresolved


def _seed(ref_id: str, ref: Ref, doc: SourceDocument, lines: list[str]) -> Seed:
    total = len(lines)
    if ref.kind is RefKind.DOC:
        block = find_doc_block(doc, ref.anchor) if ref.anchor else None
        if ref.anchor and block is None:
            raise RetrievalError("stale section")
        start, end = (block.start_line, block.end_line) if block else (1, total)
        return Seed(ref_id, ref, doc, block, start, end, lines)
    if ref.kind is RefKind.CODE:
        line = min(max(ref.line, 1), max(total, 1))
        block = block_for_line(doc, line)
        if block is not None and block.end_line - block.start_line < 4 * CODE_CONTEXT_LINES:
            return Seed(ref_id, ref, doc, block, block.start_line, block.end_line, lines)
        start = max(1, line - CODE_CONTEXT_LINES // 2)
        return Seed(ref_id, ref, doc, block, start, min(total, start + CODE_CONTEXT_LINES), lines)
    return Seed(ref_id, ref, doc, None, 1, total, lines)
