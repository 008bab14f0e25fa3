"""Deterministic scaled copies of the FastAPI corpus for benchmarks.

``make_scaled_corpus(source, target, scale)`` copies the corpus, then writes copy ``i`` (for i
in 1..scale-1) of every Markdown and Python file of the indexed trees under a ``copy-<i>``
directory next to the original, mutated so copies are not byte-identical: every third
identifier-like word of 5+ letters (counted by position, headings and code alike) gets the
suffix ``<i>``. Sizes, structure, languages and the mix of prose and code stay those of the real
corpus; the vocabulary grows with every copy (the suffixed words are new terms), and each page
has ``scale`` near-duplicates. Both make the scaled corpora harder than real ones of the same
size: the tokenizer's memo sees far more distinct words, and candidate lists fill with
near-duplicate blocks.
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
    """A corpus ``scale`` times the size of ``source``: the original, scale-1 mutated copies."""
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
