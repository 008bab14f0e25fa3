"""The one tokenizer for documents and queries.

Documents and queries must produce identical tokens for identical text, or lexical search
silently misses; so both go through :func:`tokenize` and nothing else.

Rules, applied after NFKC (case is kept until identifiers have been split):

* **CJK** runs (Han, Hiragana, Katakana incl. the prolonged sound mark, Hangul) have no spaces
  between words, so they become overlapping character bigrams (``検索エンジン`` → ``検索 索エ
  エン ンジ ジン``); a single-character run yields that character.
* **Words** are runs of letters and digits. Runs joined by ``_``, ``.``, ``-``, ``::`` or ``/``
  (between word characters) form one *compound*, which is emitted whole and then in parts, so an
  identifier matches both when quoted exactly and when described in words:

  - the whole compound (``app.include_router``);
  - each segment between ``. - :: /`` when it splits further (``include_router``);
  - the parts of each segment, split at ``_`` and at camelCase boundaries;
  - for a part mixing letters and digits, its letter runs of two or more letters
    (``oauth2`` → ``oauth``), so ``OAuth`` and ``OAuth2`` still meet. Digit runs are not
    emitted on their own: bare numbers such as ``2`` would match almost everything.

  A token is emitted only when it differs from the one it was split from, so ``get_user_name``
  gives ``get_user_name get user name`` and ``OAuth2`` gives ``oauth2 oauth``.
* **camelCase** splits on the original casing: before an upper-case letter that follows a
  lower-case letter or a digit (``getUser``, ``Oauth2Password``), and before the last capital of
  an acronym of two or more capitals that is followed by a lower-case letter (``HTTPException``
  → ``HTTP Exception``). A single leading capital is not an acronym, so ``OAuth2``, ``IPv4``,
  ``Base64`` and ``utf8`` each stay one part. Non-ASCII words use the same rule through
  ``str.isupper``/``str.islower``.
* Tokens longer than :data:`MAX_TOKEN_CHARS` are dropped (their parts survive); punctuation
  never forms a token.
* **Stopwords** are dropped only when a word stands alone: a stopword inside an identifier
  (``is_active``, ``a.b.c``) is part of something written on purpose and is kept.
* **Stemming** (optional) applies the Snowball English stemmer to ASCII alphabetic tokens.
* **Inlined data** is not words: the base64 payload of a data URI (``data:image/png;base64,…``,
  an image inlined in a page) gives no tokens (:func:`readable`); ``data``, ``image/png`` and
  ``base64`` before it still do.

Per-compound results are memoised in bounded module-level tables, because natural text and code
repeat the same words heavily; that keeps tokenizing a whole corpus to a few C-level passes.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from itertools import chain

from scriptorium.text import compiled
from scriptorium.text.normalize import kept_by_nfkc, nfkc
from scriptorium.text.stopwords import STOPWORDS

__all__ = [
    "CJK_CHARS",
    "MAX_QUERY_TERMS",
    "MAX_TOKEN_CHARS",
    "TOKENIZER_VERSION",
    "compiled_tokenizer",
    "counted_query_terms",
    "implementation",
    "joined_tokens",
    "python_tokenize",
    "query_terms",
    "readable",
    "token_set",
    "tokenize",
]

# Indexes store this; any change to the rules above must bump it so stale indexes are rebuilt.
TOKENIZER_VERSION = "2"
MAX_TOKEN_CHARS = 64
MAX_QUERY_TERMS = 64

# Character-class ranges (for use inside [...]) of the scripts indexed as bigrams.
CJK_CHARS = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2eff"  # CJK radicals supplement
    "\u3005-\u3007"  # iteration mark, closing mark, ideographic zero
    "\u3041-\u3096\u3099-\u309f"  # Hiragana
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana with the prolonged sound mark, without the middle dot
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo extended B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U0001b000-\U0001b16f"  # Kana supplement and extended A
    "\U00020000-\U0003134f"  # CJK extensions B..G
)

_WORD = f"[^\\W_{CJK_CHARS}]"
_CONNECTOR = r"(?:_*+(?:[./-]|::)_*+|_++)"
# Words come first: the two alternatives never match at the same place, and most runs are words.
_RUN_RE = re.compile(f"{_WORD}++(?:{_CONNECTOR}{_WORD}++)*+|[{CJK_CHARS}]++")
# The same runs for pure-ASCII text, where the Unicode classes cost twice as much to test.
_ASCII_RUN_RE = re.compile(r"[A-Za-z0-9]++(?:(?:_*+(?:[./-]|::)_*+|_++)[A-Za-z0-9]++)*+")
_CJK_START_RE = re.compile(f"[{CJK_CHARS}]")
_SEGMENT_SPLIT_RE = re.compile(r"_*(?:[./-]|::)_*")
_CAMEL_SPLIT_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z]{2})(?=[A-Z][a-z])")
_LETTER_RUN_RE = re.compile(r"[^\W\d_]{2,}")
# A data URI's base64 payload. On a page that inlines images it is most of the bytes (90 of the
# 138 MB of DevDocs' pages), and every piece of it a new one-off "word" that nobody searches
# for: tokenizing it cost most of a build's time there, and its length weighed in BM25.
_DATA_MARK = ";base64,"
_DATA_PAYLOAD_RE = re.compile(r"(?<=;base64,)[A-Za-z0-9+/=]+")

# Memo tables, a pair per option combination: compound -> its tokens. New entries go to the
# first (young) table; when it is full it becomes the second (old) table and the previous old
# one is dropped, and entries found in the old table move back into the young one. So words in
# use survive a turnover while memory stays bounded, and a corpus whose vocabulary outgrows one
# table (a large one, or many languages) does not start from nothing at every turnover. Tables
# are replaced, never cleared, so a concurrent caller still holding one stays correct.
# Token strings are pooled so that the many entries sharing a token ("get", a common bigram)
# hold one string object between them.
_CACHE_LIMIT = 65_536
_CACHEABLE_CHARS = 128
_caches: dict[tuple[bool, ...], tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]]
_caches = {}
_pool: dict[str, str] = {}


def _suffix_stem(word: str) -> str:
    """A minimal English suffix stripper, used only when snowballstemmer is not installed."""
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + replacement
    return word


def _make_stemmer() -> Callable[[str], str]:
    """The Snowball English stemmer behind a lock and a memo.

    ``snowballstemmer`` uses the PyStemmer C extension when it is installed (it is a
    dependency), and falls back to its pure-Python implementation otherwise. PyStemmer is
    asked for first, directly: importing ``snowballstemmer`` loads all of its 32 pure-Python
    stemmers (about 0.1 CPU seconds in every build helper) only to hand back PyStemmer's.
    """
    try:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
    except ImportError:
        try:
            import snowballstemmer
        except ImportError:
            return _suffix_stem
        stemmer = snowballstemmer.stemmer("english")
    lock = threading.Lock()  # Snowball stemmer objects keep per-call state
    memo: dict[str, str] = {}

    def stem(word: str) -> str:
        found = memo.get(word)
        if found is None:
            with lock:
                found = stemmer.stemWord(word)
            if len(memo) >= _CACHE_LIMIT:
                memo.clear()
            memo[word] = found
        return found

    return stem


_stem_word = _make_stemmer()


def _camel_parts(piece: str) -> list[str]:
    """Split one ``_``-free piece at camelCase boundaries (see the module docstring)."""
    if piece.islower() or piece.isdigit() or len(piece) < 2:
        return [piece]
    if piece.isascii():
        return _CAMEL_SPLIT_RE.split(piece)
    shape = "".join("A" if c.isupper() else "0" if c.isdigit() else "a" for c in piece)
    parts: list[str] = []
    start = 0
    for shaped in _CAMEL_SPLIT_RE.split(shape):
        parts.append(piece[start : start + len(shaped)])
        start += len(shaped)
    return parts


def _word_tokens(raw: str) -> list[str]:
    """All tokens of one compound, normalised, before stopword and length filtering."""
    if raw.isalnum():
        # No connector and no underscore: one segment of one piece, split only at camelCase.
        parts = _camel_parts(raw)
        if len(parts) == 1:
            if raw.isalpha() or raw.isdigit():
                return [raw.casefold()]
            return [raw.casefold(), *(run.casefold() for run in _LETTER_RUN_RE.findall(raw))]
        tokens = [raw.casefold()]
        for part in parts:
            tokens.append(part.casefold())
            if not part.isalpha() and not part.isdigit():
                tokens.extend(run.casefold() for run in _LETTER_RUN_RE.findall(part))
        return tokens
    tokens = [raw.casefold()]
    segments = _SEGMENT_SPLIT_RE.split(raw)
    compound = len(segments) > 1
    for segment in segments:
        parts: list[str] = []
        for piece in segment.split("_"):
            if piece:
                parts.extend(_camel_parts(piece))
        if compound and len(parts) > 1:
            tokens.append(segment.casefold())
        emit_parts = compound or len(parts) > 1
        for part in parts:
            if emit_parts:
                tokens.append(part.casefold())
            if not part.isalpha() and not part.isdigit():
                tokens.extend(run.casefold() for run in _LETTER_RUN_RE.findall(part))
    return tokens


def _analyse(
    raw: str, drop_stopwords: bool, stem: bool, split: bool = True, bigrams: bool = True
) -> tuple[str, ...]:
    """The final tokens of one run: a CJK run or a compound word."""
    if not raw.isascii() and _CJK_START_RE.match(raw):
        if len(raw) == 1 or not bigrams:
            return tuple(raw)
        return tuple(map(str.__add__, raw, raw[1:]))  # the bigrams raw[i : i + 2], in C
    if not split or (
        raw.isalpha() and (raw.islower() or (raw.isascii() and (raw.istitle() or raw.isupper())))
    ):
        # A plain word (lower case; in ASCII also capitalised or all capitals) has nothing to
        # split, so its only token is itself. Most runs are such words. Outside ASCII only
        # lower case qualifies: uncased letters count as lower case for camelCase splits.
        tokens = [raw.casefold()]
    elif raw.isalnum() and raw.islower():
        # Lower-case letters and digits ("oauth2"): the word, then its letter runs.
        tokens = [raw.casefold(), *(run.casefold() for run in _LETTER_RUN_RE.findall(raw))]
    else:
        tokens = _word_tokens(raw)
    if len(tokens) == 1:  # most runs: the same filters without building lists
        token = tokens[0]
        if (drop_stopwords and token in STOPWORDS) or len(token) > MAX_TOKEN_CHARS:
            return ()
        if stem and token.isascii() and token.isalpha():
            token = _stem_word(token)
        return (token,)
    kept = [t for t in tokens if len(t) <= MAX_TOKEN_CHARS]
    if stem:
        kept = [_stem_word(t) if t.isascii() and t.isalpha() else t for t in kept]
    return tuple(kept)


def readable(text: str) -> str:
    """``text`` with each data URI's base64 payload replaced by a space: what the tokenizer
    and a block's stored words read (the block's text itself is kept as it is)."""
    if _DATA_MARK not in text:
        return text
    return _DATA_PAYLOAD_RE.sub(" ", text)


def tokenize(
    text: str,
    *,
    drop_stopwords: bool = True,
    stem: bool = False,
    split_identifiers: bool = True,
    cjk_bigrams: bool = True,
) -> list[str]:
    """Index tokens of ``text`` in order, with repetition (term frequency matters).

    ``split_identifiers=False`` keeps compounds whole and ``cjk_bigrams=False`` cuts CJK runs
    into single characters; both exist so the evaluation can measure what they are worth.
    """
    if not text:
        return []
    text = readable(text)
    native = _native[0] if _native else _load_native()
    if native is not None:
        ascii_text = text.isascii()
        found = native.tokenize(
            text if ascii_text else _native_nfkc(native, text),
            drop_stopwords,
            split_identifiers,
            cjk_bigrams,
            _fallbacks[drop_stopwords, stem, split_identifiers, cjk_bigrams],
            _stem_word if stem else None,
        )
        if found is not None:  # None: another thread holds its memo
            return found
    return python_tokenize(text, drop_stopwords, stem, split_identifiers, cjk_bigrams)


def joined_tokens(
    text: str,
    *,
    drop_stopwords: bool = True,
    stem: bool = False,
    split_identifiers: bool = True,
    cjk_bigrams: bool = True,
) -> str:
    """``" ".join(tokenize(text, ...))``, the form the index stores, made in one call by the
    compiled tokenizer when it runs."""
    text = readable(text)
    native = _native[0] if _native else _load_native()
    if native is not None and text:
        found = native.joined(
            text if text.isascii() else _native_nfkc(native, text),
            drop_stopwords,
            split_identifiers,
            cjk_bigrams,
            _fallbacks[drop_stopwords, stem, split_identifiers, cjk_bigrams],
            _stem_word if stem else None,
        )
        if found is not None:
            return found
    return " ".join(
        tokenize(
            text,
            drop_stopwords=drop_stopwords,
            stem=stem,
            split_identifiers=split_identifiers,
            cjk_bigrams=cjk_bigrams,
        )
    )


def compiled_tokenizer():
    """The compiled tokenizer object, or None when the Python one runs."""
    return _native[0] if _native else _load_native()


def python_tokenize(
    text: str, drop_stopwords: bool, stem: bool, split_identifiers: bool, cjk_bigrams: bool
) -> list[str]:
    """:func:`tokenize` in Python alone: the reference the compiled path is tested against,
    and what runs without it."""
    if not text:
        return []
    text = readable(text)
    runs = _ASCII_RUN_RE.findall(text) if text.isascii() else _RUN_RE.findall(nfkc(text))
    if not runs:
        return []
    slot = (drop_stopwords, stem, split_identifiers, cjk_bigrams)
    tables = _caches.get(slot) or _caches.setdefault(slot, ({}, {}))
    cache, old = tables
    try:
        return list(chain.from_iterable(map(cache.__getitem__, runs)))
    except KeyError:
        pass
    missing = set(runs).difference(cache)
    global _pool
    if len(cache) + len(missing) > _CACHE_LIMIT:
        old, cache = cache, {}
        _caches[slot] = (cache, old)
        missing = set(runs)
    pool = _pool
    if len(pool) > 4 * _CACHE_LIMIT:
        pool = _pool = {}
    share = pool.setdefault
    uncached: dict[str, tuple[str, ...]] = {}
    for raw in missing:
        kept = old.get(raw)
        if kept is not None:
            cache[raw] = kept
            continue
        tokens = _analyse(raw, drop_stopwords, stem, split_identifiers, cjk_bigrams)
        if len(raw) <= _CACHEABLE_CHARS:
            if len(tokens) == 1:  # most words: no loop for a single token
                token = tokens[0]
                cache[raw] = (share(token, token),)
            else:
                cache[raw] = tuple(map(share, tokens, tokens))
        else:
            uncached[raw] = tokens
    if not uncached:
        return list(chain.from_iterable(map(cache.__getitem__, runs)))
    return list(chain.from_iterable(uncached.get(r) or cache.get(r, ()) for r in runs))


# The compiled tokenizer (``text/compiled.py``), loaded on first use; and the analyser it hands
# the runs it does not analyse itself, per option combination.
_native: list = []
_fallbacks = {
    (drop, stem, split, bigrams): functools.partial(
        _analyse, drop_stopwords=drop, stem=stem, split=split, bigrams=bigrams
    )
    for drop in (False, True)
    for stem in (False, True)
    for split in (False, True)
    for bigrams in (False, True)
}


def _native_nfkc(native, text: str) -> str:
    """:func:`nfkc` of ``text`` by the compiled tokenizer: only the runs of characters NFKC
    may change (with the one before each) go through Python's NFKC, so a page with a
    full-width colon is not normalised whole. An older build without it, or a lone
    surrogate: Python's NFKC of the whole text."""
    fold = getattr(native, "nfkc", None)
    made = fold(text, kept_by_nfkc, nfkc) if fold is not None else None
    return nfkc(text) if made is None else made


def _load_native():
    if not _native:
        # [the tokenizer or None, why]; one list, filled once, so readers see both or neither
        _native[:] = compiled.load(TOKENIZER_VERSION, STOPWORDS, MAX_TOKEN_CHARS, CJK_CHARS)
    return _native[0]


def implementation() -> tuple[bool, str]:
    """Whether the compiled tokenizer runs, and a sentence saying which and why (the daemon
    logs it at start: a missing or failed build must be visible, never an error)."""
    return _load_native() is not None, _native[1]


def query_terms(text: str, *, stem: bool = False, **options: bool) -> list[str]:
    """Distinct query tokens in first-seen order, capped at :data:`MAX_QUERY_TERMS`.

    Stopwords are removed unless that leaves nothing, so a query made only of stopwords (say
    "how to") still searches for something.
    """
    return [term for term, _ in counted_query_terms(text, stem=stem, **options)]


def counted_query_terms(
    text: str,
    *,
    stem: bool = False,
    limit: int = MAX_QUERY_TERMS,
    frequent_first: bool = False,
    **options: bool,
) -> list[tuple[str, int]]:
    """Distinct query tokens with how often the query says each, at most ``limit`` of them,
    in first-seen order.

    When there are more than ``limit``, the first ones are kept, or with ``frequent_first``
    the ones said most often (ties by first appearance): in a pasted issue text the name it is
    about recurs, the prose around it does not. Stopwords as :func:`query_terms`.
    """
    drop = options.pop("drop_stopwords", True)
    tokens = tokenize(text, drop_stopwords=drop, stem=stem, **options) or tokenize(
        text, drop_stopwords=False, stem=stem, **options
    )
    counts: dict[str, int] = {}
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1
    return capped_terms(list(counts.items()), limit, frequent_first=frequent_first)


def capped_terms(
    counted: list[tuple[str, int]], limit: int, *, frequent_first: bool = False
) -> list[tuple[str, int]]:
    """At most ``limit`` of the counted terms (first-seen order): the first ones, or with
    ``frequent_first`` the ones said most often (ties by first appearance)."""
    if len(counted) <= limit or not frequent_first:
        return counted[:limit]
    order = {term: index for index, (term, _) in enumerate(counted)}
    counts = dict(counted)
    kept = sorted(counts, key=lambda term: (-counts[term], order[term]))[:limit]
    return [(term, counts[term]) for term in sorted(kept, key=order.__getitem__)]


@functools.lru_cache(maxsize=512)
def token_set(text: str, *, stem: bool = False) -> frozenset[str]:
    """The distinct tokens of ``text`` (stopwords dropped), remembered for the texts asked about
    again and again: the blocks and pages that composing calls check for a term, call after
    call. (Callers pass block bodies, which a generation holds anyway, or texts of at most
    20,000 characters, which bounds what this keeps alive.)"""
    return frozenset(tokenize(text, stem=stem))
