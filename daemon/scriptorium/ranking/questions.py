"""What kind of question a query is, for the priors that weigh code against the docs: one
in another language's words, a plain question naming no identifier, or a sentence about using
the names it gives. Each is decided once per query (remembered by text).
"""

from __future__ import annotations

import functools
import re

from scriptorium.domain.model import Query
from scriptorium.ranking.signals import CODE_SPAN, identifier_words, prose, typed_words
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import tokenize
from scriptorium.text.stopwords import STOPWORDS

# An all-capitals word of two to five letters, maybe plural (API, JSON, URLs): an acronym.
_ACRONYM = re.compile(r"[A-Z]{2,5}s?")

# Function words that mark a question typed in ASCII as written in another language than
# English: common in questions, and none of them an English word a developer types ("die",
# "come", "es" and "per" are left out for that reason).
_FOREIGN_WORDS = {
    "de": ("wie", "ich", "und", "nicht", "ist", "das", "der", "mit", "eine", "einen", "kann",
           "wird", "werden", "mein", "meine", "warum", "wo", "fuer", "ueber", "auf", "bei"),
    "fr": ("comment", "je", "les", "des", "une", "est", "pour", "avec", "dans", "pas", "mon",
           "ma", "mes", "du", "au", "aux", "pourquoi", "ou", "faire", "utiliser"),
    "es": ("como", "que", "los", "las", "una", "para", "con", "por", "mi", "puedo", "del",
           "hacer", "usar", "cuando", "donde", "porque"),
    "pt": ("como", "que", "os", "uma", "para", "com", "nao", "meu", "minha", "posso", "fazer",
           "usar", "quando", "onde", "porque", "em", "do", "da"),
    "it": ("che", "gli", "una", "per", "con", "non", "il", "posso", "fare", "usare", "quando",
           "dove", "perche", "della", "del"),
    "nl": ("hoe", "ik", "het", "een", "niet", "mijn", "kan", "voor", "met", "van", "waarom",
           "gebruik", "maken"),
}  # fmt: skip
_ENGLISH_WORDS = frozenset({
    "the", "a", "an", "how", "do", "i", "to", "is", "my", "with", "for", "in", "of", "on",
    "what", "why", "when", "where", "can", "use", "and", "not", "does", "from", "should",
})  # fmt: skip


_FOREIGN_SETS = tuple(frozenset(words) for words in _FOREIGN_WORDS.values())


@functools.lru_cache(maxsize=1024)
def foreign_question(text: str) -> bool:
    """Whether a query reads as written in another language than English though typed in
    ASCII ("wie kann ich abhaengigkeiten mit yield nutzen"): two of one language's function
    words, more than the English ones it holds."""
    words = re.findall(r"[a-z]+", text.casefold())
    english = sum(1 for word in words if word in _ENGLISH_WORDS)
    for names in _FOREIGN_SETS:
        found = sum(1 for word in words if word in names)
        if found >= 2 and found > english:
            return True
    return False


# The words of a question that ask for code rather than its documentation.
_CODE_WORDS = (
    "code", "function", "functions", "class", "classes", "method", "methods", "implementation",
    "implemented", "defined", "definition", "signature",
)  # fmt: skip
_CODE_TERMS = frozenset(tokenize(" ".join(_CODE_WORDS), stem=True, drop_stopwords=False))


@functools.lru_cache(maxsize=1024)
def plain_question(text: str, *, acronyms_prose: bool = False) -> bool:
    """Whether a question reads as prose about using something: one line (an issue's title
    and body, a pasted snippet, are not questions), naming no identifier
    (:func:`identifier_words`; with ``acronyms_prose``, an all-capitals word such as JSON or
    SSL outside a code span is not one), no word of it asking for code ("which function
    parses ...", "where is the retry implemented")."""
    if "\n" in text.strip():
        return False
    names = identifier_words(text)
    if acronyms_prose and not CODE_SPAN.search(text):
        names = [name for name in names if not _ACRONYM.fullmatch(name)]
    if names:
        return False
    return not _CODE_TERMS.intersection(tokenize(prose(text), stem=True))


# Words that make a question naming identifiers a lookup rather than one about using them:
# the keywords that open a definition ("def Depends"), a place asked for ("where is ...
# raised"), a signature asked for ("which arguments does ... accept"), and "does", whose
# subject is the named thing, not the asker ("how does FastAPI generate the operationId").
_LOOKUP_WORDS = frozenset(
    {"def", "fn", "func", "struct", "enum", "trait", "impl", "interface", "where", "does"}
    | {"argument", "arguments", "parameter", "parameters", "param", "params", "returns"}
)


# Words that ask how to use what a query names, standing for a function word: "use
# HTTPDigestAuth" and "EmailStr example" ask for the page that shows the use, as "how do I use
# HTTPDigestAuth" does.
_USAGE_WORDS = frozenset({"use", "using", "usage", "example", "examples"})


@functools.lru_cache(maxsize=1024)
def usage_question(text: str) -> bool:
    """Whether a one-line question that names identifiers still reads as a sentence about
    using them ("how do I catch HTTPStatusError", "use ConfigDict to forbid extra fields"):
    a function word ("how", "to", "with") or a word asking for a use ("use", "example"), a
    word of its own besides the names, and none
    asking for code or for a lookup (``_LOOKUP_WORDS``). A bare name ("APIRouter") or a bag
    of them ("asynccontextmanager lifespan ml_models") is a lookup, not a question."""
    if "\n" in text.strip():
        return False
    names = identifier_words(text)
    if not names:
        return False
    words = tokenize(prose(text), drop_stopwords=False)
    asks = not STOPWORDS.isdisjoint(words) or not _USAGE_WORDS.isdisjoint(typed_words(text))
    if not asks or asks_for_code(text):
        return False
    stems = set(tokenize(prose(text), stem=True))
    return bool(stems - set(tokenize(" ".join(names), stem=True)))


def task_terms(query: Query, settings: RankingSettings) -> frozenset[str]:
    """The terms a question gives besides the identifiers it names ("load", "more",
    "button" of "useInfiniteQuery load more button"), when there are at least
    ``definition_task_terms`` of them; none otherwise, and none when it asks for code or a
    lookup ("where is useQuery defined"). A word asking for a use ("use", "example") is the
    usage question's, not a task. A block defining the named name that holds none of these
    terms is the name, not the task the question asks about."""
    least = settings.definition_task_terms
    if least <= 0 or asks_for_code(query.text):
        return frozenset()
    options = settings.token_key()
    task = frozenset(query.terms) - _named_terms(query.text, options)
    return task if len(task) >= least else frozenset()


@functools.lru_cache(maxsize=1024)
def asks_for_code(text: str) -> bool:
    """Whether a question's words ask for code or a lookup: "which function", "where is",
    "def", "which arguments" (``_CODE_WORDS``, ``_LOOKUP_WORDS``)."""
    words = tokenize(prose(text), drop_stopwords=False)
    if not _LOOKUP_WORDS.isdisjoint(words):
        return True
    return bool(_CODE_TERMS.intersection(tokenize(prose(text), stem=True)))


@functools.lru_cache(maxsize=1024)
def _named_terms(text: str, options: tuple[tuple[str, bool], ...]) -> frozenset[str]:
    """The query terms ``text``'s identifier-like words and words asking for a use make, as
    its terms were made."""
    words = [*identifier_words(text), *_USAGE_WORDS]
    return frozenset(tokenize(" ".join(words), **dict(options)))


def names_beyond_acronyms(text: str) -> bool:
    """Whether a query names an identifier other than an all-capitals acronym (JSON, SSL,
    URL), or holds a code span."""
    if CODE_SPAN.search(text):
        return True
    return any(not _ACRONYM.fullmatch(name) for name in identifier_words(text))


# A name is spelled with two to this many words; a longer query is a sentence.
_SPELLED_WORDS = 4
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_SPELLED_QUERY = re.compile(r"[A-Za-z0-9 ]+")


@functools.lru_cache(maxsize=1024)
def spelled_name_forms(text: str) -> tuple[str, ...]:
    """The name a query may be, spelled as separate words ("oauth2 password bearer" for
    ``OAuth2PasswordBearer``, "jsonable encoder" for ``jsonable_encoder``): a query of two to
    four plain words, none a stopword and none an identifier already, joined as one word and
    with underscores, case-folded as the index keeps definitions' names. Whether either names
    a definition is the index's to say. Only the whole query counts: "request body" inside
    "request body pydantic model" is the words' sense, not the ``RequestBody`` class."""
    if not _SPELLED_QUERY.fullmatch(text.strip()) or identifier_words(text):
        return ()
    words = [w.casefold() for w in _WORD.findall(text)]
    if not 2 <= len(words) <= _SPELLED_WORDS or not STOPWORDS.isdisjoint(words):
        return ()
    return ("".join(words), "_".join(words))


# Two words of a sentence that may spell one name: lower-case letters, a space between.
_PHRASE = re.compile(r"(?<![\w.-])([a-z]{2,}) (?=([a-z]{2,})(?![\w-]))")
# Pairs of words read from a text, the first ones: the forms of each are looked up in the
# index, and a pasted page of prose holds hundreds (438 in 8,000 characters, 6 ms).
PHRASE_PAIRS = 128


@functools.lru_cache(maxsize=256)
def phrase_name_forms(text: str, options: tuple[tuple[str, bool], ...]) -> tuple[str, ...]:
    """The names two adjacent words of ``text``'s prose may spell ("one hot" for ``one_hot``,
    "latex printer" for ``LatexPrinter``): joined with an underscore and as one word, each as
    the index keeps a whole identifier. Neither word a stopword; the first ``PHRASE_PAIRS``
    pairs. Whether a form is a term of the index is the index's to say."""
    forms: dict[str, None] = {}
    pairs: set[tuple[str, str]] = set()
    for match in _PHRASE.finditer(prose(text)):
        first, second = match.groups()
        if first == second or first in STOPWORDS or second in STOPWORDS:
            continue
        if (first, second) in pairs:
            continue
        if len(pairs) >= PHRASE_PAIRS:
            break
        pairs.add((first, second))
        forms[f"{first}_{second}"] = None
        joined = tokenize(first + second, **dict(options))
        if joined:
            forms[joined[0]] = None
    return tuple(forms)
