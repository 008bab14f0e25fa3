"""The tantivy schema. Text fields hold tokens we computed ourselves, joined by spaces.

Tokenization happens in Python (``scriptorium.text``) for documents and queries alike, so the
index uses tantivy's whitespace tokenizer and never needs a custom analyzer registered on open.
"""

from __future__ import annotations

import tantivy

# Bumped whenever the schema or the meaning of a field changes: forces a rebuild.
SCHEMA_VERSION = 5

BODY = "body"
HEADING = "heading"
PATH = "path"
SOURCE = "source"
CORPUS = "corpus"
DOC = "doc"
BID = "bid"
# The name a code block defines, case-folded and whole: found by exact lookup, never ranked on.
SYMBOL = "symbol"
# What the ranking reads of a block's body (``text/features.py``): stored, never searched.
FEATURES = "features"
TEXT_FIELDS = (BODY, HEADING, PATH)


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in TEXT_FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name="whitespace", index_option="freq")
    builder.add_text_field(SOURCE, stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(CORPUS, stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(DOC, stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(SYMBOL, stored=False, tokenizer_name="raw", index_option="basic")
    builder.add_unsigned_field(BID, stored=False, indexed=False, fast=True)
    builder.add_bytes_field(FEATURES, stored=True, indexed=False, fast=False)
    return builder.build()


def doc_term(source: str, path: str) -> str:
    """The raw term that identifies every block of one document (used for deletes)."""
    return f"{source}\x1f{path}"
