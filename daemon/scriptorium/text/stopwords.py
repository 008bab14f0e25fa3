"""The English stopword list shared by indexing and querying.

Kept deliberately small: only words that carry no meaning in a technical search ("how do I ...",
"what is the ..."). Negations, modal verbs and anything that can be a code identifier on its own
(``not``, ``none``, ``self``) stay searchable. There are no CJK stopwords: CJK text is indexed as
character bigrams, where a stopword list would cut into real words.
"""

from __future__ import annotations

STOPWORDS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "there",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "why",
        "with",
        "you",
        "your",
    }
)


def is_stopword(token: str) -> bool:
    """Whether a normalised token is on the stopword list."""
    return token in STOPWORDS
