"""Deterministic scaled copies of the FastAPI corpus for benchmarks.

Copy ``i`` (for i in 1..scale-1) of every Markdown and Python file is written under a
``copy-<i>`` directory next to the original, with a deterministic mutation so copies are not
byte-identical: every identifier-like word of 5+ letters gets a suffix ``<i>`` in one out of
every three occurrences (chosen by position), and headings keep their text but gain the copy
number. The vocabulary, lengths and structure stay realistic while the term statistics grow
like a real, larger corpus.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

_WORD = re.compile(r"\b([A-Za-z_][A-Za-z_]{4,})\b")


def _mutate(text: str, copy: int) -> str:
    counter = 0

    def replace(match: re.Match) -> str:
        nonlocal counter
        counter += 1
        word = match.group(1)
        return f"{word}{copy}" if counter % 3 == 0 else word

    return _WORD.sub(replace, text)


def make_scaled_corpus(source: Path, target: Path, scale: int) -> Path:
    """A corpus ``scale`` times the size of ``source`` (the original plus scale-1 mutated copies)."""
    if target.exists():
        return target
    shutil.copytree(source, target)
    roots = [
        Path("docs/en/docs"),
        Path("docs/ja/docs"),
        Path("docs/zh/docs"),
        Path("fastapi"),
        Path("docs_src"),
    ]
    for copy in range(1, scale):
        for root in roots:
            for path in sorted((source / root).rglob("*")):
                if not path.is_file() or path.suffix not in (".md", ".py"):
                    continue
                rel = path.relative_to(source / root)
                dest = target / root / f"copy-{copy}" / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(_mutate(path.read_text("utf-8"), copy), encoding="utf-8")
    return target
