"""Search hits: one builder for local, remote and file-level candidates.

The three kinds differ in where their text comes from (the served generation, the text a remote
side already cut, a whole file) and in how they are addressed; the hit itself is assembled in
one place.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from scriptorium.domain.model import Block, Candidate, Query, Reason, RefKind, doc_version
from scriptorium.domain.outcomes import Conflict, SearchHit
from scriptorium.domain.refs import Ref
from scriptorium.index.served import ServedIndex
from scriptorium.sources.catalog import SourceCatalog
from scriptorium.sources.libraries import LibrarySource
from scriptorium.sources.remote import RemotePage
from scriptorium.text import code_snippet, doc_snippet, preview, split_lines
from scriptorium.text.markdown import without_attr_lists
from scriptorium.text.preview import PreviewText, prepare

# A preview window is ~200 characters; scanning more of a long block only costs time.
PREVIEW_SOURCE_CHARS = 4000
# Lines either side of a code result's anchor its preview is cut from (within its block).
PREVIEW_CODE_LINES = 12


class HitBuilder:
    """Locations, refs, snippets and previews for ranked candidates (memoised per generation)."""

    def __init__(self, catalog: SourceCatalog, indexer: ServedIndex) -> None:
        self.catalog = catalog
        self.indexer = indexer

    def location_of(self, cand: Candidate) -> str:
        remote = self.catalog.remote_by_name.get(cand.source)
        if remote is not None:
            return remote.location_of(cand)
        doc, block = cand.document, cand.block
        snapshot = self.indexer.current
        key = (
            "loc",
            cand.source,
            doc.path,
            doc.content_hash,
            block.start_line,
            block.end_line,
            block.anchor,
            cand.anchor_line,
            cand.file_level,
        )
        loc = snapshot.memo.get(key) if snapshot is not None else None
        if loc is None:
            source = self.catalog.by_name[cand.source]
            if cand.file_level:
                loc = source.page_location(doc.path)
            else:
                loc = source.block_location(doc, block, cand.anchor_line)
            if not source.is_default:
                loc = f"{source.name}/{loc}"
            if snapshot is not None:
                snapshot.remember(key, loc)
        return loc

    def hit(self, query: Query, cand: Candidate) -> SearchHit:
        """The hit for a located candidate, whichever kind of source it came from."""
        doc = cand.document
        if isinstance(doc, RemotePage):
            return self._remote_hit(query, cand, doc)
        hit = self._file_hit(query, cand) if cand.file_level else self._local_hit(query, cand)
        source = self.catalog.by_name[cand.source]
        if isinstance(source, LibrarySource):
            found = source.library_of(doc.path)
            if found is not None:
                hit.library, hit.library_version = found
                hit.docs_version = source.docs_version_of(doc.path)
        return hit

    def _local_hit(self, query: Query, cand: Candidate) -> SearchHit:
        doc, block = cand.document, cand.block
        source = self.catalog.by_name[cand.source]
        lines = self.indexer.lines_of(doc)
        code = block.kind is RefKind.CODE
        if code:
            anchor = cand.anchor_line or block.start_line
            snippet, _, _ = code_snippet(
                lines, block.start_line, block.end_line, anchor, query.snippet_lines
            )
            # The lines around the anchor, never past the block's own: a preview showing the
            # neighbouring definition's code would describe another result than the location.
            lo = max(block.start_line - 1, anchor - PREVIEW_CODE_LINES)
            hi = min(block.end_line, len(lines), anchor + PREVIEW_CODE_LINES)
            shown = self._preview_text(doc, lines, lo, hi)
        else:
            anchor = block.start_line
            snippet, _, _ = doc_snippet(
                lines, block.start_line, block.end_line, query.snippet_lines
            )
            # A section's own text is found once per generation, not on every search.
            if doc.preview_from_body:
                shown = self._prepared((doc.content_hash, "body", anchor), lambda: block.body)
            else:
                key = (doc.content_hash, "section", anchor)
                shown = self._prepared(key, lambda: _section_source(block, lines))
        ref_id, url = self._address(cand, source, anchor)
        return _assemble(
            cand,
            ref_id=ref_id,
            url=url,
            snippet=snippet,
            preview=preview(shown, query.text),
            doc_version=doc_version(doc),
            source_class=source.source_class,
            anchor_line=anchor if code else 0,
        )

    def _file_hit(self, query: Query, cand: Candidate) -> SearchHit:
        """A whole-file result anchored at line 1 (the file's path matched, no line did)."""
        doc = cand.document
        source = self.catalog.by_name[cand.source]
        lines = self.indexer.lines_of(doc)
        ref = Ref(cand.source, RefKind.FILE, doc.path, "", 1, doc.content_hash)
        snippet, _, _ = doc_snippet(lines, 1, len(lines), query.snippet_lines)
        hit = _assemble(
            cand,
            ref_id=ref.encode(),
            url=source.url_for(doc.path),
            snippet=snippet,
            preview=preview(self._preview_text(doc, lines, 0, 40), query.text),
            doc_version=doc_version(doc),
            source_class=source.source_class,
            anchor_line=1,
            dated=False,
        )
        hit.kind, hit.title, hit.section_path = RefKind.FILE, doc.path, [doc.path]
        hit.start_line, hit.end_line = 1, len(lines)
        hit.reasons = [*cand.reasons, Reason("file-level", 1.0, "the path matched, no line did")]
        return hit

    def _remote_hit(self, query: Query, cand: Candidate, doc: RemotePage) -> SearchHit:
        """A hit for a remote candidate: text the remote side cut is kept, not cut again."""
        block = cand.block
        source = self.catalog.remote_by_name[cand.source]
        lines = split_lines(doc.text)
        anchor = cand.anchor_line or block.start_line
        snippet = doc.snippet
        if not snippet:
            snippet, _, _ = doc_snippet(
                lines, block.start_line, block.end_line, query.snippet_lines
            )
        shown = doc.preview
        if not shown:
            source_text = "\n".join(
                lines[block.start_line - 1 : min(block.end_line, block.start_line + 150)]
            )
            shown = preview(source_text[:PREVIEW_SOURCE_CHARS], query.text)
        version = doc.version or doc_version(doc)
        code = block.kind is RefKind.CODE
        ref = Ref(
            cand.source,
            block.kind,
            doc.path,
            block.anchor,
            anchor if code else block.start_line,
            version,
        )
        url_anchor = f"L{anchor}" if code else block.anchor
        hit = _assemble(
            cand,
            ref_id=ref.encode(),
            url=f"{doc.url}#{url_anchor}" if doc.url and url_anchor else doc.url,
            snippet=snippet,
            preview=shown,
            doc_version=version[:16],
            source_class=source.source_class,
            anchor_line=anchor if code else 0,
        )
        hit.source_revision = doc.revision
        return hit

    def _address(self, cand: Candidate, source, anchor: int) -> tuple[str, str]:
        """The ref id and URL of a local hit anchored at ``anchor`` (kept per generation)."""
        doc, block = cand.document, cand.block
        snapshot = self.indexer.current
        key = ("addr", cand.source, doc.path, doc.content_hash, block.kind, block.anchor, anchor)
        found = snapshot.memo.get(key) if snapshot is not None else None
        if found is None:
            ref = Ref(cand.source, block.kind, doc.path, block.anchor, anchor, doc.content_hash)
            url_anchor = f"L{anchor}" if block.kind is RefKind.CODE else block.anchor
            found = (ref.encode(), source.url_for(doc.path, url_anchor))
            if snapshot is not None:
                snapshot.remember(key, found)
        return found

    def _preview_text(self, doc, lines: list[str], lo: int, hi: int) -> PreviewText:
        """Lines ``lo:hi`` of ``doc`` prepared for previews (kept per generation)."""
        return self._prepared((doc.content_hash, lo, hi), lambda: "\n".join(lines[lo:hi]))

    def _prepared(self, key: tuple, source: Callable[[], str]) -> PreviewText:
        """``source()`` prepared for previews, kept per generation under ``key`` (the text is
        made only when the generation has not prepared it yet)."""
        snapshot = self.indexer.current
        found = snapshot.texts.get(key) if snapshot is not None else None
        if found is None:
            found = prepare(source()[:PREVIEW_SOURCE_CHARS])
            if snapshot is not None:
                snapshot.remember_text(key, found)
        return found


def _assemble(
    cand: Candidate,
    *,
    ref_id: str,
    url: str,
    snippet: str,
    preview: str,
    doc_version: str,
    source_class: str,
    anchor_line: int,
    dated: bool = True,
) -> SearchHit:
    """The hit every kind shares: the block's place and titles, scores, the document's meta.

    ``dated`` carries the meta's supersession and effective dates (a file-level hit has none).
    """
    doc, block = cand.document, cand.block
    meta = doc.meta
    return SearchHit(
        ref_id=ref_id,
        kind=block.kind,
        location=cand.location,
        url=url,
        title=block.title or meta.title or doc.path,
        section_path=list(block.section_path),
        start_line=block.start_line,
        end_line=block.end_line,
        snippet=snippet,
        preview=preview,
        score=round(cand.score, 6),
        scores=cand.scores,
        reasons=cand.reasons,
        source=cand.source,
        doc_version=doc_version,
        source_class=meta.source_class or source_class,
        superseded_by=(meta.superseded_by or "") if dated else "",
        effective_from=meta.effective_from if dated else None,
        effective_to=meta.effective_to if dated else None,
        parse_confidence=meta.parse_confidence,
        language=doc.language or "",
        anchor_line=anchor_line,
    )


def conflicts_in(window: list[Candidate]) -> list[Conflict]:
    """Currently effective documents that declare one canonical key with different content."""
    now = datetime.now(UTC)
    by_key: dict[str, dict[str, Candidate]] = {}
    for cand in window:
        meta = cand.document.meta
        if not meta.canonical_key or meta.superseded_by:
            continue
        if meta.effective_to and meta.effective_to <= now:
            continue
        by_key.setdefault(meta.canonical_key, {})[cand.document.content_hash] = cand
    conflicts = []
    for key, versions in sorted(by_key.items()):
        if len(versions) > 1:
            cands = sorted(versions.values(), key=lambda c: c.location)
            conflicts.append(
                Conflict(
                    key=key,
                    ref_ids=[candidate_ref(c) for c in cands],
                    locations=[c.location for c in cands],
                    note="effective documents declare this key with different content",
                )
            )
    return conflicts


def candidate_ref(cand: Candidate) -> str:
    """The ref of a candidate as ranked (before any hit was built for it)."""
    block = cand.block
    line = cand.anchor_line or block.start_line
    return Ref(
        cand.source,
        block.kind,
        cand.document.path,
        block.anchor,
        line,
        cand.document.content_hash,
    ).encode()


def _section_source(block: Block, lines: list[str]) -> str:
    """The text a documentation block's preview is cut from: its own lines (at most 150 past
    its heading), its headings' attribute lists left out."""
    lo = block.start_line - 1
    hi = _own_end(block, lines, min(block.end_line, block.start_line + 150))
    return "\n".join(without_attr_lists(lines[lo:hi]))


def _own_end(block: Block, lines: list[str], end: int) -> int:
    """Where a documentation block's own text ends, at most ``end`` (1-based, inclusive).

    A section's range runs on over its subsections, which are results of their own: a
    Markdown block's body is its lines from the heading to the first subsection's. A section
    with no text of its own under its heading keeps its range (what it holds is its
    subsections), and so does a block whose source lines past the body's count do not end as
    the body ends (a notebook's cell without its fence, an extractor that rewrites its text).
    """
    body = block.body.rstrip("\n")
    own_end = block.start_line - 1 + body.count("\n") + 1
    if own_end >= end or own_end > len(lines) or not _text_under_heading(body):
        return end
    last = body[body.rfind("\n") + 1 :]
    return own_end if lines[own_end - 1].rstrip() == last.rstrip() else end


def _text_under_heading(body: str) -> bool:
    """Whether a block's body holds text besides its heading line (and a setext underline)."""
    rest = body.partition("\n")[2].lstrip("\n")
    first, _, after = rest.partition("\n")
    if first.strip() and not first.strip().strip("=-"):
        rest = after
    return bool(rest.strip())
