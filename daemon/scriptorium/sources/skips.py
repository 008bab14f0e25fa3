"""What a tree's walk left out, and by which rule, so ``sources`` can say it.

A bare ``serve PATH`` must not silently index nothing: when a rule keeps files out, the count
per rule shows in ListSources (``skipped``). The rules:

- ``built-in``: installed dependencies, virtualenvs and caches (``node_modules``, ``.venv``,
  ``__pycache__``, ...; VCS metadata is skipped too, and not counted);
- ``skip_dirs``: the source's configured ``skip_dirs``;
- ``gitignore``: a ``.gitignore`` rule on the way down;
- ``generated``: a directory a build wrote, told by what it holds, not by its name: a Sphinx
  output (``.buildinfo``), a built MkDocs site (``search/search_index.json``), a built static
  site (``sitemap.xml`` beside ``index.html``: Docusaurus, Hugo, MkDocs), a tagged cache
  (``CACHEDIR.TAG``).

The walk records the directories it did not enter; the files under them are counted after
the listing (in the thread that listed), once per set of skipped directories, so a poll tick
that skips the same folders counts nothing again and ListSources only adds up.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

BUILT_IN, SKIP_DIRS, GITIGNORE, GENERATED = "built-in", "skip_dirs", "gitignore", "generated"
RULES = (GITIGNORE, GENERATED, SKIP_DIRS, BUILT_IN)
# Counting stops here per rule: a huge node_modules must not make ListSources slow.
COUNT_CAP = 100_000


def generated_output(directory: str, names: set[str] | None) -> bool:
    """Whether ``directory`` (its entries' ``names`` when the caller listed them) is the output
    of a documentation or site build."""
    if names is None:
        try:
            names = set(os.listdir(directory))
        except OSError:
            return False
    if ".buildinfo" in names or "CACHEDIR.TAG" in names:
        return True
    if "sitemap.xml" in names and "index.html" in names:
        return True
    return "search" in names and os.path.isfile(
        os.path.join(directory, "search", "search_index.json")
    )


@dataclass(slots=True)
class SkipTally:
    """The directories a listing did not enter and the files it left out, by rule."""

    dirs: dict[str, list[str]] = field(default_factory=dict)
    files: Counter[str] = field(default_factory=Counter)
    _counted: dict[str, int] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def skip_dir(self, rule: str, path: str) -> None:
        self.dirs.setdefault(rule, []).append(path)

    def skip_file(self, rule: str) -> None:
        self.files[rule] += 1

    def settled(self, previous: SkipTally) -> SkipTally:
        """This tally, keeping ``previous``'s file counts when it skipped the same directories
        (a listing on every poll tick must not recount what it left out)."""
        if previous._counted is not None and previous.dirs == self.dirs:
            self._counted = previous._counted
        return self

    def counts(self, admits: Callable[[str], bool]) -> dict[str, int]:
        """Files left out per rule (only rules that left some out): the files the walk saw
        and refused, plus those under each directory it did not enter that ``admits``
        (the source's include and exclude patterns, on the path from the root)."""
        with self._lock:
            if self._counted is None:
                self._counted = {
                    rule: _count_under(paths, admits) for rule, paths in self.dirs.items()
                }
            under = self._counted
        totals = {rule: under.get(rule, 0) + self.files.get(rule, 0) for rule in RULES}
        return {rule: n for rule, n in totals.items() if n}


def _count_under(paths: list[str], admits: Callable[[str], bool]) -> int:
    count = 0
    for top in paths:
        for directory, subdirs, names in os.walk(top):
            subdirs[:] = [d for d in subdirs if not os.path.islink(os.path.join(directory, d))]
            count += sum(1 for n in names if admits(os.path.join(directory, n)))
            if count >= COUNT_CAP:
                return COUNT_CAP
    return count
