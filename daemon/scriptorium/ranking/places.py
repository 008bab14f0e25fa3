"""The places a query points at: a traceback's frames (``File "pkg/mod.py", line 120``) and
places as compilers, linters and test runners print them (``pkg/mod.py:120:8``).

A frame names the file and the line the code ran; the definition holding that line is what
the writer is looking at, whatever words it holds. Paths are lower-cased with forward
slashes; matching them to served files is the retrieval's (``retrieval/local.py``).
"""

from __future__ import annotations

import functools
import re

_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')
_PRINTED = re.compile(r"(?<![\w/.\\-])((?:[\w.-]+[/\\])*[\w.-]*\w\.[A-Za-z]\w{0,5}):(\d+)(?::\d+)?")
# The most places a query is read for: the last ones (a traceback's innermost frames).
MOST_PLACES = 5


@functools.lru_cache(maxsize=1024)
def placed_lines(text: str) -> tuple[tuple[str, int], ...]:
    """The (path, line) places ``text`` points at, the last :data:`MOST_PLACES` of them in
    the order written, each once."""
    if ":" not in text and "line" not in text:
        return ()
    found: list[tuple[int, str, int]] = []
    for pattern in (_FRAME, _PRINTED):
        for match in pattern.finditer(text):
            line = int(match.group(2))
            if line > 0:
                path = match.group(1).replace("\\", "/").lower()
                found.append((match.start(), path, line))
    found.sort()
    places: list[tuple[str, int]] = []
    for _, path, line in found:
        if (path, line) not in places:
            places.append((path, line))
    return tuple(places[-MOST_PLACES:])
