"""The token strings a block is indexed under: body, heading and page fields.

One function for the daemon and for build workers, so both index a block identically; it
imports only the tokenizer, which keeps a worker's start short.
"""

from __future__ import annotations

from collections.abc import Mapping

from scriptorium.domain.model import Block, SourceDocument
from scriptorium.text.features import block_features, encode_features
from scriptorium.text.tokenize import joined_tokens, tokenize

Tokens = tuple[str, str, str]
# What the index gets of a block: its tokens and its ranking features (``text/features.py``).
Indexed = tuple[str, str, str, bytes]


def _heading_text(block: Block) -> str:
    text = " ".join(block.section_path)
    if block.symbol:
        text += " " + block.symbol
    return text


def _path_text(doc: SourceDocument, page: str) -> str:
    return f"{page} {doc.meta.title or ''}"


def block_tokens(
    doc: SourceDocument, block: Block, page: str, options: Mapping[str, bool]
) -> Tokens:
    """``(body, heading, path)`` tokens of ``block``; ``page`` is the document's page location."""
    body = " ".join(tokenize(block.body, **options))
    heading = " ".join(tokenize(_heading_text(block), **options))
    path = " ".join(tokenize(_path_text(doc, page), **options))
    return body, heading, path


def document_tokens(
    doc: SourceDocument, page: str, options: Mapping[str, bool]
) -> tuple[Tokens, ...]:
    """:func:`block_tokens` of every block of ``doc``, in order, for a build.

    The page field is the same for every block and sibling blocks share heading texts, so
    each distinct text is tokenized once per document rather than once per block.
    """
    path = joined_tokens(_path_text(doc, page), **options)
    headings: dict[str, str] = {}
    out = []
    for block in doc.blocks:
        text = _heading_text(block)
        heading = headings.get(text)
        if heading is None:
            heading = headings[text] = joined_tokens(text, **options)
        out.append((joined_tokens(block.body, **options), heading, path))
    return tuple(out)


def indexed_fields(
    doc: SourceDocument, block: Block, page: str, options: Mapping[str, bool]
) -> Indexed:
    """``block_tokens`` and the block's stored ranking features, made in one place."""
    body, heading, path = block_tokens(doc, block, page, options)
    features = encode_features(
        block.body,
        block.section_path,
        doc.path,
        tuple(sorted(options.items())),
        body.split(" ") if body else (),
    )
    return body, heading, path, features


def document_fields(
    doc: SourceDocument, page: str, options: Mapping[str, bool]
) -> tuple[Indexed, ...]:
    """:func:`document_tokens` of ``doc`` with each block's stored ranking features, for a
    build (what :func:`indexed_fields` gives block by block)."""
    ordered = tuple(sorted(options.items()))
    rests: dict[tuple[str, ...], list[str]] = {}  # sibling blocks share their section path
    out = []
    for block, (body, heading, path) in zip(
        doc.blocks, document_tokens(doc, page, options), strict=True
    ):
        rest = rests.get(block.section_path)
        if rest is None:
            text = f"{' '.join(block.section_path)}\n{doc.path}"
            rest = rests[block.section_path] = tokenize(text, **options)
        features = block_features(block.body, block.section_path, doc.path, ordered, body, rest)
        out.append((body, heading, path, features))
    return tuple(out)
