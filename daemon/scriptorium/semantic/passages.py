"""What the encoder reads of a block: its place, its name in words, and the start of its text.

A definition is found by what it does, not only by its name: a code block's passage spells its
name and path out as words (``EmailStr`` → "email str", ``httpx/_client.py`` → "httpx client")
before its signature and docstring, which open its body. A documentation block's passage is
its heading trail over its text. The encoder reads a bounded number of tokens, so only the
start of a long body matters; the passage is cut well past that.
"""

from __future__ import annotations

import re

from scriptorium.domain.model import Block, RefKind

# Characters of body a passage carries: about twice what 256 tokens of English hold.
PASSAGE_CHARS = 2_000

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[_\W]+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]+$")


def name_words(name: str) -> str:
    """An identifier or path as lower-case words: ``getUserName`` → "get user name"."""
    spaced = _CAMEL.sub(" ", name)
    return " ".join(w.lower() for w in _SEPARATORS.split(spaced) if w)


def passage(path: str, block: Block) -> str:
    """The text the encoder reads for ``block`` of the document at ``path``."""
    body = block.body[:PASSAGE_CHARS]
    if block.kind is RefKind.CODE:
        where = name_words(_EXTENSION.sub("", path))
        qualified = ".".join((*block.section_path, block.symbol or block.title or ""))
        kind = block.symbol_kind or ""
        head = f"{where}: {kind} {qualified.strip('.')} ({name_words(qualified)})".strip()
        return f"{head}\n{body}"
    trail = " > ".join(p for p in block.section_path if p) or block.title
    if not trail:
        trail = name_words(_EXTENSION.sub("", path))
    return f"{trail}\n{body}"


_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_CODE_LINE = re.compile(
    r"^(?:import\s|from\s+\S+\s+import\s|def\s|class\s|return\b|print\(|>>>|\.\.\.|[#@])"
    r"|\s=\s|^\s*[\w.\[\]'\"]+\s*[+\-*/]?=\s"
)
# A data row: quoted values in a list, or columns laid out with runs of spaces.
_DATA_LINE = re.compile(r"^['\"\[{(]|(?:['\"][^'\"]*['\"]\s*,\s*){2}|\S {3,}\S")
# A pasted text's sentences are what the encoder reads when they come to at least this much.
PROSE_CHARS = 40


def prose(text: str) -> str:
    """A pasted text's sentences, without its fenced code, code lines, data rows and
    tracebacks: the encoder reads a bounded number of tokens, and a problem statement's data
    table would spend them (the text itself when too little prose is left)."""
    kept = []
    for line in _FENCED.sub(" ", text).splitlines():
        stripped = line.strip()
        visible = [c for c in stripped if not c.isspace()]
        if not visible or _CODE_LINE.search(stripped):
            continue
        if sum(c.isalpha() for c in visible) / len(visible) < 0.6 or _DATA_LINE.search(stripped):
            continue
        kept.append(stripped)
    joined = " ".join(kept)
    return joined if len(joined) >= PROSE_CHARS else text
