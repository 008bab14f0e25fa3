#!/usr/bin/env python3
"""Renew the generated lever table of docs/ranking.md in place (between its marker lines).

The table is ``scriptorium settings --format levers``; tests/unit/test_ranking_levers.py fails
when the committed page holds another.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scriptorium.cli.reference import LEVERS_BEGIN, LEVERS_END, LEVERS_PAGE, render_levers

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    page = REPO / LEVERS_PAGE
    text = page.read_text(encoding="utf-8")
    if LEVERS_BEGIN not in text or LEVERS_END not in text:
        print(f"{LEVERS_PAGE}: no lever table markers to fill", file=sys.stderr)
        return 1
    head, rest = text.split(LEVERS_BEGIN, 1)
    tail = rest.split(LEVERS_END, 1)[1].removeprefix("\n")
    page.write_text(head + render_levers() + tail, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
