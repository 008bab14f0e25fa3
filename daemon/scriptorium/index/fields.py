"""The token strings a block is indexed under: body, heading and page fields.

One function for the daemon and for build workers, so both index a block identically; it
imports only the tokenizer, which keeps a worker's start short.
"""

from __future__ import annotations

from collections.abc import Mapping

from scriptorium.domain.model import Block, SourceDocument
from scriptorium.text.features import encode_features
from scriptorium.text.tokenize import tokenize

Tokens = tuple[str, str, str]
# What the index gets of a block: its tokens and its ranking features (``text/features.py``).
Indexed = tuple[str, str, str, bytes]


def block_tokens(
    doc: SourceDocument, block: Block, page: str, options: Mapping[str, bool]
) -> Tokens:
    """``(body, heading, path)`` tokens of ``block``; ``page`` is the document's page location."""
    body = " ".join(tokenize(block.body, **options))
    heading_text = " ".join(block.section_path)
    if block.symbol:
        heading_text += " " + block.symbol
    heading = " ".join(tokenize(heading_text, **options))
    path = " ".join(tokenize(f"{page} {doc.meta.title or ''}", **options))
    return body, heading, path


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
