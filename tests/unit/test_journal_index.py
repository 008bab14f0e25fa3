"""Every file of docs/journal/ is listed in its README, so a measurement is never lost there."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
JOURNAL = REPO / "docs" / "journal"


def _linked() -> set[str]:
    text = (JOURNAL / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"\]\(([^)#\s]+)\)", text))


def test_every_journal_file_is_listed_in_the_index():
    files = {p.name for p in JOURNAL.iterdir() if p.is_file() and p.name != "README.md"}
    assert {"ranking.md", "performance.md"} <= files
    missing = sorted(files - _linked())
    assert not missing, f"docs/journal/README.md does not list: {', '.join(missing)}"


def test_the_index_lists_no_file_that_is_gone():
    gone = sorted(name for name in _linked() if "/" not in name and not (JOURNAL / name).is_file())
    assert not gone, f"docs/journal/README.md lists missing files: {', '.join(gone)}"


def test_the_reference_pages_link_the_journal():
    for page in ("ranking.md", "performance.md"):
        text = (REPO / "docs" / page).read_text(encoding="utf-8")
        assert f"journal/{page}" in text, f"docs/{page} does not link journal/{page}"
