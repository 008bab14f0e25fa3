"""The shared text pipeline: one normaliser and tokenizer for documents and queries, plus the
previews, snippets and token estimates that results are built from."""

from scriptorium.text.budget import estimate_tokens, trim_to_tokens
from scriptorium.text.normalize import (
    clip_at_whitespace,
    collapse_whitespace,
    normalize,
    split_lines,
    without_fence_languages,
    without_form_labels,
    without_html_comments,
    without_urls,
    without_version_lines,
)
from scriptorium.text.preview import preview
from scriptorium.text.snippets import Wanted, best_line, code_snippet, doc_snippet
from scriptorium.text.stopwords import STOPWORDS
from scriptorium.text.tokenize import (
    MAX_QUERY_TERMS,
    MAX_TOKEN_CHARS,
    TOKENIZER_VERSION,
    counted_query_terms,
    query_terms,
    token_set,
    tokenize,
)

__all__ = [
    "MAX_QUERY_TERMS",
    "MAX_TOKEN_CHARS",
    "STOPWORDS",
    "TOKENIZER_VERSION",
    "Wanted",
    "best_line",
    "clip_at_whitespace",
    "code_snippet",
    "collapse_whitespace",
    "counted_query_terms",
    "doc_snippet",
    "estimate_tokens",
    "normalize",
    "preview",
    "query_terms",
    "split_lines",
    "token_set",
    "tokenize",
    "trim_to_tokens",
    "without_fence_languages",
    "without_form_labels",
    "without_html_comments",
    "without_urls",
    "without_version_lines",
]
