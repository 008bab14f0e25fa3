"""Input quoted in an error message, up to a bound.

An error that names what the caller sent helps the caller, but it must not grow with the
request: a hundred thousand unknown names would make a message larger than a client accepts
(gRPC's metadata limit), turning INVALID_ARGUMENT into RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

from collections.abc import Sequence

SHOWN_NAMES = 5
SHOWN_CHARS = 60


def clipped(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` as a message quotes it: repr'd, at most ``limit`` characters of it."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def some_of(names: Sequence[str], shown: int = SHOWN_NAMES) -> str:
    """The first ``shown`` names, quoted and clipped, and how many more there are."""
    head = ", ".join(clipped(n) for n in names[:shown])
    rest = len(names) - shown
    return f"{head} and {rest} more" if rest > 0 else head
