"""The error messages a query quotes, in the form a block's text is matched against.

An agent pastes what failed: ``ValueError: Matrix must be symmetric.``, a traceback's last
line, pytest's ``E   RuntimeError: …``. The message's fixed words are written once in the
code that raises it (or in the page that explains it), so a block whose text holds them is
the place the error comes from; words alone rank any block that says "matrix" and
"symmetric". The parts of a message that vary between runs (quoted values, numbers, paths,
reprs) are cut out, and what is left between them is matched literally, lower-cased, with
whitespace collapsed.
"""

from __future__ import annotations

import functools
import re

# An exception's line: a (dotted) class name ending the way exception classes end, a colon,
# the message. Leading noise (pytest's ``E``, a log prefix's punctuation) is skipped.
_EXCEPTION_LINE = re.compile(
    r"^(?:E\s+|[^\w\n]*)(?:[A-Za-z_][\w.]*\.)?"
    r"[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Failure|Fault)\s*:\s*(\S.*?)\s*$"
)
# What varies between two runs of one raise: quoted values, reprs, numbers, hex ids, paths.
_VARYING = re.compile(
    r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|<[^>\n]*>|\(\s*\)|\b0x[0-9a-f]+\b|\b\d[\d.,_]*\b"
    r"|\S*[/\\]\S*",
    re.I,
)
_WORD = re.compile(r"[a-z]{2,}")
# A fragment must say this much to be the message's and not any sentence's.
MIN_WORDS = 3
MIN_CHARS = 16
# The most fragments a query is searched for (the longest first).
MOST_FRAGMENTS = 3


def normalized(text: str) -> str:
    """Lower-cased, with every run of whitespace one space."""
    return " ".join(text.lower().split())


@functools.lru_cache(maxsize=1024)
def quoted_messages(text: str) -> tuple[str, ...]:
    """The fixed fragments of the error messages ``text`` quotes (normalised), longest
    first; empty when it quotes none."""
    if ":" not in text:
        return ()
    found: list[str] = []
    for line in text.splitlines():
        match = _EXCEPTION_LINE.match(line)
        if match is None:
            continue
        for part in _VARYING.split(match.group(1)):
            fragment = normalized(part).strip(" .,:;!?-=")
            if (
                len(fragment) >= MIN_CHARS
                and len(_WORD.findall(fragment)) >= MIN_WORDS
                and fragment not in found
            ):
                found.append(fragment)
    found.sort(key=lambda fragment: (-len(fragment), fragment))
    return tuple(found[:MOST_FRAGMENTS])
