"""What the ranking reads of a block's body, computed once when the block is indexed.

The priors, the document-evidence stage and near-duplicate detection look at every
candidate's body, but only through a few facts: the tokens coverage counts, whether the body
holds an API reference directive, whether its opening has CJK text, and its set of words.
The index stores these per block (``index/schema.py``, the ``features`` stored field), so a
search reads them from tantivy's document store instead of reading and decoding each
candidate's blob; the rules live here once, for the indexer and the ranking alike.

Encoded form: one flags byte, then three space-joined lists separated by newlines (neither
tokens nor words hold white space): the coverage tokens that are words too, the other tokens,
the other words. Most tokens are words, so each is stored once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from scriptorium.text.tokenize import compiled_tokenizer, readable, tokenize

# A mkdocstrings directive (``::: fastapi.security.OAuth2PasswordBearer``): the site renders
# the API reference from the code's docstrings at build time.
DIRECTIVE = re.compile(r"^:::[ \t]*[A-Za-z_][\w.]*", re.M)
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
WORDS = re.compile(r"\w+")
# The language prior looks for CJK text in this much of a body.
CJK_HEAD = 400

_DIRECTIVE_FLAG = 1
_CJK_FLAG = 2
_DEPRECATED_FLAG = 4

# A definition marked deprecated where it is declared is read in its first lines: its
# decorators or annotations, its signature, its doc comment or docstring, and the first
# statements of its body.
DEPRECATION_HEAD_LINES = 40
# A marker on a line of its own: a decorator or annotation (@deprecated, @deprecate,
# @typing_extensions.deprecated(...), Java's @Deprecated), a doc comment's tag (JSDoc's and
# Javadoc's @deprecated, Go's "Deprecated:" paragraph), Rust's #[deprecated] and C#'s
# [Obsolete]. ``@deprecate_kwarg`` deprecates an argument, not the definition: the name must
# end there.
_MARKER = re.compile(
    r"^[ \t]*(?:/\*\*|\*|//+|#)?[ \t]*@(?:\w+\.)*_?deprecated?\b"
    r"|^[ \t]*#\[deprecated\b"
    r"|^[ \t]*\[Obsolete\b"
    r"|^[ \t]*//[ \t]*Deprecated:",
    re.M | re.I,
)
# A docstring that opens by saying so ("""Deprecated: use ...), or a Sphinx directive.
_DOCSTRING_OPENING = re.compile(r"^[ \t]*[rRuU]?(?:\"\"\"|\'\'\')\s*deprecated\b", re.M | re.I)
_DIRECTIVE_DEPRECATED = re.compile(r"^[ \t]*\.\. deprecated::", re.M)
# Where a docstring starts describing the parameters: a directive after it deprecates one of
# them, not the definition.
_PARAMETER_SECTION = re.compile(
    r"^[ \t]*(?:(?:Parameters|Other Parameters|Arguments|Args|Keyword Arguments|Attributes)"
    r"[ \t]*:?[ \t]*$|:param\b)",
    re.M,
)
# A deprecation warning raised by the body itself (warnings.warn(..., DeprecationWarning),
# sympy_deprecation_warning(...), warn_deprecated(...)): counted only at the body's own
# indentation, unconditionally, since one inside an ``if`` deprecates an argument. A call
# that only names the category (warnings.filterwarnings(..., DeprecationWarning)) is not one.
_WARNING_CALL = re.compile(r"^([ \t]*)(?:[\w.]*\.)?(?:warn|warning|\w*deprecat\w*)\(", re.M | re.I)
# The lines a warning's call is read in for the word (its message and category).
_WARNING_LINES = 4
_DEPRECATION_WORD = re.compile(r"deprecat", re.I)
_DEF_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]", re.M)


def has_directive(body: str) -> bool:
    """Whether a documentation block pulls its content from code."""
    return ":::" in body and DIRECTIVE.search(body) is not None


def cjk_head(body: str) -> bool:
    """Whether the opening of ``body`` has CJK text."""
    return CJK.search(body[:CJK_HEAD]) is not None


def marked_deprecated(body: str) -> bool:
    """Whether the definition ``body`` opens is marked deprecated where it is declared (see
    the patterns above): a decorator or annotation, a doc comment's tag, a docstring's
    opening word or ``.. deprecated::`` directive (before its parameters), or a deprecation
    warning its body raises unconditionally. A parameter named ``deprecated`` marks nothing."""
    if "eprecat" not in body and "EPRECAT" not in body and "Obsolete" not in body:
        return False
    head = "\n".join(body.split("\n", DEPRECATION_HEAD_LINES)[:DEPRECATION_HEAD_LINES])
    if _MARKER.search(head) or _DOCSTRING_OPENING.search(head):
        return True
    directive = _DIRECTIVE_DEPRECATED.search(head)
    if directive is not None:
        section = _PARAMETER_SECTION.search(head)
        if section is None or directive.start() < section.start():
            return True
    return _warns_unconditionally(head)


def _warns_unconditionally(head: str) -> bool:
    """A deprecation warning among a Python definition's first statements, at its body's own
    indentation (the least of the lines after its ``def``)."""
    definition = _DEF_LINE.search(head)
    if definition is None:
        return False
    own = len(definition.group(1))
    lines = head[definition.end() :].split("\n")[1:]
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    indents = [i for i in indents if i > own]
    if not indents:
        return False
    body_indent = min(indents)
    for call in _WARNING_CALL.finditer(head, definition.end()):
        if len(call.group(1)) != body_indent:
            continue
        statement = "\n".join(head[call.start() :].split("\n", _WARNING_LINES)[:_WARNING_LINES])
        if _DEPRECATION_WORD.search(statement):
            return True
    return False


def _flags(body: str) -> int:
    """The flags byte of ``body``'s stored features."""
    return (
        (_DIRECTIVE_FLAG if has_directive(body) else 0)
        | (_CJK_FLAG if cjk_head(body) else 0)
        | (_DEPRECATED_FLAG if marked_deprecated(body) else 0)
    )


def coverage_tokens(
    body: str, section_path: tuple[str, ...], path: str, options: tuple = ()
) -> frozenset[str]:
    """The tokens coverage and document evidence look for in a block."""
    return frozenset(tokenize(f"{body}\n{' '.join(section_path)}\n{path}", **dict(options)))


def word_set(body: str) -> frozenset[str]:
    """A block's words (runs of word characters, case-folded): enough to tell a copy from a
    different text, and blind to the punctuation that tells ``x: int`` from
    ``x: Annotated[int, ...]``. A data URI's payload has none, as it has no tokens."""
    return frozenset(WORDS.findall(readable(body).casefold()))


# Bits of a word set's signature: at a few hundred words a block, few words share a bit.
SIGNATURE_BITS = 1024
_SIGNATURE_MASK = SIGNATURE_BITS - 1


class WordSet:
    """A block's words, their count and their signature: one bit per word (its ``hash`` mod
    :data:`SIGNATURE_BITS`), made once per block and compared only within this process, so
    near-duplicate detection can rule most pairs out without intersecting them.

    The words may be given later, by ``make``, when a pair's bounds cannot rule it out: a
    block's stored features keep only the count and the signature between searches (the set
    itself was 7 KB a block, most of what they held), and a word set made for one search
    keeps its words for that search."""

    __slots__ = ("_make", "_words", "bits", "size")

    def __init__(
        self,
        words: frozenset[str] | None,
        size: int,
        bits: int,
        make: Callable[[], frozenset[str]] | None = None,
    ) -> None:
        self._words, self.size, self.bits, self._make = words, size, bits, make

    @property
    def words(self) -> frozenset[str]:
        words = self._words
        if words is None:
            assert self._make is not None, "a word set without words or a way to make them"
            words = self._words = self._make()
        return words

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WordSet):
            return NotImplemented
        return (self.size, self.bits, self.words) == (other.size, other.bits, other.words)

    __hash__ = None  # type: ignore[assignment]  (compared, never a key)

    def __repr__(self) -> str:
        return f"WordSet(size={self.size}, bits={self.bits:#x})"


def word_set_of(words: frozenset[str]) -> WordSet:
    bits = 0
    for word in words:
        bits |= 1 << (hash(word) & _SIGNATURE_MASK)
    return WordSet(words, len(words), bits)


def encode_features(
    body: str,
    section_path: tuple[str, ...],
    path: str,
    options: tuple,
    body_tokens: Iterable[str] | None = None,
    rest_tokens: Iterable[str] | None = None,
) -> bytes:
    """The stored form of what the ranking reads of a block (``options``: sorted items of the
    token options the index is built with, which are the ranking's).

    ``body_tokens``, the body's tokens when the indexer has them already, saves tokenizing
    the body twice: a newline ends every token, so the tokens of ``body`` + newline + the
    rest are those of the body and those of the rest. ``rest_tokens``, those of the section
    path and path when known (shared by a document's sibling blocks), saves that too.
    """
    flags = _flags(body)
    if body_tokens is None:
        tokens = coverage_tokens(body, section_path, path, options)
    else:
        rest = rest_tokens
        if rest is None:
            rest = tokenize(f"{' '.join(section_path)}\n{path}", **dict(options))
        tokens = frozenset(body_tokens).union(rest)
    words = word_set(body)
    both, tokens_only, words_only = tokens & words, tokens - words, words - tokens
    lists = "\n".join(" ".join(sorted(part)) for part in (both, tokens_only, words_only))
    return bytes((flags,)) + lists.encode()


def block_features(
    body: str,
    section_path: tuple[str, ...],
    path: str,
    options: tuple,
    joined_body_tokens: str,
    rest_tokens: list[str],
) -> bytes:
    """:func:`encode_features` for a build, given the body's tokens as the index stores them
    (space-joined) and those of the section path and path: by the compiled tokenizer when it
    runs (the same bytes; ``tests/unit/test_compiled_tokenizer.py``)."""
    native = compiled_tokenizer()
    if native is not None:
        body = readable(body)
        # Python's Unicode rules reach the extension one code point at a time: what
        # ``str.casefold`` makes of it here, what ``\w`` matches in the tokenizer.
        found = native.features(body, joined_body_tokens, rest_tokens, str.casefold)
        if found is not None:
            # The extension finds the other flags; this one is Python's (few bodies pass
            # its first test).
            return with_deprecated_flag(found, body)
        # A body it cannot read (a lone surrogate) or a memo another thread holds: Python
        # finds the flags and the words, the extension does the sets, sorting and joining.
        return native.encode(
            _flags(body), joined_body_tokens, rest_tokens, WORDS.findall(body.casefold())
        )
    tokens = joined_body_tokens.split(" ") if joined_body_tokens else ()
    return encode_features(body, section_path, path, options, tokens, rest_tokens)


def with_deprecated_flag(encoded: bytes, body: str) -> bytes:
    """``encoded`` with the deprecation flag set when ``body`` is marked deprecated."""
    if not marked_deprecated(body):
        return encoded
    return bytes((encoded[0] | _DEPRECATED_FLAG,)) + encoded[1:]


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split(" ")) if text else frozenset()


class BlockFeatures:
    """A block's stored features, read from the index the first time one is asked for.

    ``load`` returns the encoded form, or None when the index holds none (the caller then
    reads the body, as it would without this). Whichever is asked first reads them; with
    none, ``available`` is False and the others say nothing (no flag, no token).
    """

    __slots__ = (
        "_both",
        "_flags",
        "_load",
        "_matched",
        "_signature",
        "_text",
        "_tokens",
        "_words_only",
    )

    def __init__(self, load: Callable[[], bytes | None] | None) -> None:
        self._load = load
        self._flags = -1
        self._text = ""  # " both tokens_only ": a term is a token when " term " is in it
        self._both = ""
        self._words_only = ""
        self._tokens: frozenset[str] | None = None
        self._signature: tuple[int, int] | None = None  # the word set's count and bits
        self._matched: tuple[frozenset[str], frozenset[str]] | None = None

    def _read(self) -> bool:
        # Safe to share between request threads: the flags are set last, and ``_load`` is
        # dropped only after them (two threads may both read it, never see half of it).
        if self._flags >= 0:
            return True
        load = self._load
        if load is None:
            return False
        data = load()
        if data:
            self._both, tokens_only, self._words_only = data[1:].decode().split("\n")
            self._text = f" {self._both} {tokens_only} "
            self._flags = data[0]
        self._load = None
        return self._flags >= 0

    @property
    def available(self) -> bool:
        return self._read()

    @property
    def directive(self) -> bool:
        return self._read() and bool(self._flags & _DIRECTIVE_FLAG)

    @property
    def cjk_head(self) -> bool:
        return self._read() and bool(self._flags & _CJK_FLAG)

    @property
    def deprecated(self) -> bool:
        return self._read() and bool(self._flags & _DEPRECATED_FLAG)

    def matched(self, terms: frozenset[str]) -> frozenset[str]:
        """The ``terms`` among the block's coverage tokens (a few substring tests: cheaper
        than making the token set for every candidate of every search). The last answer is
        kept with its terms: a search's priors ask it of each candidate two or three times."""
        last = self._matched
        if last is not None and (last[0] is terms or last[0] == terms):
            return last[1]
        self._read()
        text = self._text
        found = frozenset([t for t, spaced in _spaced(terms) if spaced in text])
        self._matched = (terms, found)
        return found

    @property
    def tokens(self) -> frozenset[str]:
        if self._tokens is None:
            self._read()
            self._tokens = _split(self._text.strip().replace("  ", " "))
        return self._tokens

    @property
    def words(self) -> frozenset[str]:
        """The block's words (made each time: only their count and signature are kept)."""
        self._read()
        return _split(f"{self._both} {self._words_only}".strip())

    @property
    def word_set(self) -> WordSet:
        """:attr:`words` with their count and signature, for one search. The count and the
        signature are kept from the first time; the words are made when a comparison needs
        them, for that search only. Kept, they were 7 KB a block, most of what the features
        held; keeping them once needed was 2 % faster at 10× for 26 MB more (journal
        2026-12-06, §2)."""
        signature = self._signature
        if signature is None:
            found = word_set_of(self.words)
            self._signature = (found.size, found.bits)
            return found
        return WordSet(None, signature[0], signature[1], lambda: self.words)


@functools.lru_cache(maxsize=64)
def _spaced(terms: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """Each term with the spaces that make it a whole token of a features text: made once per
    search's terms, not once per candidate."""
    return tuple((t, f" {t} ") for t in terms)
