"""What the cluster holds: one ``block`` document per block, one ``page`` document per file.

Blocks carry our own tokens, already analysed (body, heading and path, as the local index has
them), searched with the whitespace analyser so the cluster scores exactly our terms; beside
them the raw text, the path, headings, kind and versions. A page carries what it takes to rebuild
the document the blocks came from (its text, meta and every block), so fetches cut it exactly
as a local fetch would and a hit's ref, location and version are those of a local hit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from scriptorium.plugin import Block, Corpus, DocMeta, RefKind, SourceDocument, doc_version
from scriptorium.plugin.unstable import block_tokens

BLOCK = "block"
PAGE = "page"
# The pre-analysed fields a search scores (their boosts are the daemon's field weights).
TOKEN_FIELDS = ("body_tokens", "heading_tokens", "path_tokens")

MAPPING: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "type": {"type": "keyword"},
        "source": {"type": "keyword"},
        "path": {"type": "keyword"},
        "page": {"type": "keyword"},
        "corpus": {"type": "keyword"},
        "kind": {"type": "keyword"},
        "position": {"type": "integer"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "title": {"type": "text"},
        "section_path": {"type": "keyword"},
        "anchor": {"type": "keyword"},
        "symbol": {"type": "keyword"},
        "body": {"type": "text"},
        "body_tokens": {"type": "text", "analyzer": "whitespace"},
        "heading_tokens": {"type": "text", "analyzer": "whitespace"},
        "path_tokens": {"type": "text", "analyzer": "whitespace"},
        "content_hash": {"type": "keyword"},
        "doc_version": {"type": "keyword"},
        "generation": {"type": "keyword"},
        # A page: everything needed to rebuild the document, stored but not searched.
        "document": {"type": "object", "enabled": False},
    },
}


def path_key(path: str) -> str:
    return hashlib.sha1(path.encode("utf-8", "surrogatepass")).hexdigest()


def page_id(path: str) -> str:
    return f"page:{path_key(path)}"


def block_id(path: str, position: int) -> str:
    return f"block:{path_key(path)}:{position}"


def _when(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _block_json(block: Block) -> dict[str, Any]:
    return {
        "kind": block.kind.value,
        "start_line": block.start_line,
        "end_line": block.end_line,
        "title": block.title,
        "section_path": list(block.section_path),
        "anchor": block.anchor,
        "body": block.body,
        "level": block.level,
        "symbol": block.symbol,
        "symbol_kind": block.symbol_kind,
        "aliases": list(block.aliases),
    }


def _meta_json(meta: DocMeta) -> dict[str, Any]:
    return {
        "title": meta.title,
        "boost": meta.boost,
        "superseded_by": meta.superseded_by,
        "effective_from": _when(meta.effective_from),
        "effective_to": _when(meta.effective_to),
        "moved_from": list(meta.moved_from),
        "source_class": meta.source_class,
        "canonical_key": meta.canonical_key,
        "parse_confidence": meta.parse_confidence,
    }


def actions(
    doc: SourceDocument,
    page: str,
    generation: str,
    options: dict[str, bool],
    tokens: Sequence[tuple[str, ...]] = (),
) -> list[dict[str, Any]]:
    """The bulk actions writing one document: its page and each of its blocks (``generation``
    is set again by the writer, which names the index). ``tokens`` are the blocks' tokens
    when a loading process made them already."""
    version = doc_version(doc)
    page_doc = {
        "type": PAGE,
        "source": doc.source,
        "path": doc.path,
        "page": page,
        "corpus": doc.corpus.value,
        "content_hash": doc.content_hash,
        "doc_version": version,
        "generation": generation,
        "document": {
            "text": doc.text,
            "language": doc.language,
            "front_matter_lines": doc.front_matter_lines,
            "preview_from_body": doc.preview_from_body,
            "meta": _meta_json(doc.meta),
            "blocks": [_block_json(b) for b in doc.blocks],
        },
    }
    out = [{"_id": page_id(doc.path), "_source": page_doc}]
    for position, block in enumerate(doc.blocks):
        # A loading process's tokens may carry the block's stored ranking features last.
        body, heading, path = (
            tokens[position][:3] if tokens else block_tokens(doc, block, page, options)
        )
        out.append(
            {
                "_id": block_id(doc.path, position),
                "_source": {
                    "type": BLOCK,
                    "source": doc.source,
                    "path": doc.path,
                    "page": page,
                    "corpus": doc.corpus.value,
                    "kind": block.kind.value,
                    "position": position,
                    "start_line": block.start_line,
                    "end_line": block.end_line,
                    "title": block.title,
                    "section_path": list(block.section_path),
                    "anchor": block.anchor,
                    "symbol": block.symbol,
                    "body": block.body,
                    "body_tokens": body,
                    "heading_tokens": heading,
                    "path_tokens": path,
                    "content_hash": doc.content_hash,
                    "doc_version": version,
                    "generation": generation,
                },
            }
        )
    return out


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def block_from_json(data: dict[str, Any]) -> Block:
    return Block(
        kind=RefKind(data["kind"]),
        start_line=int(data["start_line"]),
        end_line=int(data["end_line"]),
        title=data.get("title") or "",
        section_path=tuple(data.get("section_path") or ()),
        anchor=data.get("anchor") or "",
        body=data.get("body") or "",
        level=int(data.get("level") or 0),
        symbol=data.get("symbol"),
        symbol_kind=data.get("symbol_kind"),
        aliases=tuple(data.get("aliases") or ()),
    )


def meta_from_json(data: dict[str, Any]) -> DocMeta:
    return DocMeta(
        title=data.get("title"),
        boost=float(data.get("boost", 1.0)),
        superseded_by=data.get("superseded_by"),
        effective_from=_moment(data.get("effective_from")),
        effective_to=_moment(data.get("effective_to")),
        moved_from=tuple(data.get("moved_from") or ()),
        source_class=data.get("source_class"),
        canonical_key=data.get("canonical_key"),
        parse_confidence=float(data.get("parse_confidence", 1.0)),
    )


def page_parts(source: dict[str, Any]) -> tuple[dict[str, Any], tuple[Block, ...], DocMeta]:
    """A page document's stored parts: the document table, its blocks and its meta."""
    document = source["document"]
    blocks = tuple(block_from_json(b) for b in document.get("blocks") or ())
    return document, blocks, meta_from_json(document.get("meta") or {})


def corpus_of(source: dict[str, Any]) -> Corpus:
    return Corpus(source.get("corpus") or Corpus.DOCS.value)
