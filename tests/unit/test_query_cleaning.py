"""What a query says besides its topic: comparison words, fence languages, issue-form labels,
version listings, web addresses and one-letter terms, each left out by its own lever."""

from __future__ import annotations

from dataclasses import replace

from scriptorium.ranking.signals import weighted_terms
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import (
    without_fence_languages,
    without_form_labels,
    without_urls,
    without_version_lines,
)

ISSUE = (
    "Cross-references don't work in property's type annotations\n\n"
    "### Describe the bug\n\n"
    "A documented type in a property's annotation is not cross-referenced.\n\n"
    "```python\n## kept: a comment inside the fence\nclass Square:\n    x: int\n```\n\n"
    "- [X] Minimal example — the example is as focused as reasonably possible\n\n"
    "**Expected behavior**\n\n"
    "See https://github.com/someone/sphinx-issue-9585 for a project.\r\n"
    "numpy: 1.22.4\r\npandas: 1.4.2\r\nscipy: 1.8.0\r\nnetCDF4: None\r\n"
)


def _terms(text: str, **levers: object) -> tuple[str, ...]:
    settings = replace(RankingSettings(), long_query_chars=100, **levers)
    return weighted_terms(text, settings)[0]


def test_a_comparison_word_is_not_searched_when_the_question_has_other_terms():
    assert "vs" in _terms("vite vs webpack dev server speed", drop_comparison_words=False)
    kept = _terms("vite vs webpack dev server speed", drop_comparison_words=True)
    assert "vs" not in kept and {"vite", "webpack", "server"} <= set(kept)
    assert _terms("vs", drop_comparison_words=True) == ("vs",)


def test_fence_languages_are_removed_and_the_fences_kept():
    text = "a\n```python\nx = 1\n```\n  ~~~ julia {.x}\ny\n~~~\n"
    assert without_fence_languages(text) == "a\n```\nx = 1\n```\n  ~~~  {.x}\ny\n~~~\n"
    assert without_fence_languages("no fences") == "no fences"
    assert "python" not in _terms(ISSUE, drop_fence_languages=True)
    assert "python" in _terms(ISSUE)


def test_form_labels_go_and_lines_inside_fences_stay():
    cleaned = without_form_labels(ISSUE)
    assert "### Describe the bug" not in cleaned
    assert "Minimal example" not in cleaned and "**Expected behavior**" not in cleaned
    assert "## kept: a comment inside the fence" in cleaned
    assert "A documented type" in cleaned
    assert "describ" in _terms(ISSUE) and "describ" not in _terms(ISSUE, drop_form_labels=True)


def test_a_listing_of_versions_goes_with_its_absent_packages():
    cleaned = without_version_lines(ISSUE)
    assert "numpy" not in cleaned and "netCDF4" not in cleaned
    assert "Cross-references" in cleaned
    # Fewer than three version lines are no listing: "key: None" stays (an error, a header).
    lone = "TypeError: None is not a valid Unit\nAccept-Encoding: None\npython: 3.9.1\n"
    assert without_version_lines(lone).splitlines() == [
        "TypeError: None is not a valid Unit",
        "Accept-Encoding: None",
        "",
    ]


def test_web_addresses_are_not_searched():
    assert without_urls("see https://github.com/a/b-9585 (or www.x.org/y) now") == (
        "see   (or  ) now"
    )
    assert "9585" in _terms(ISSUE) and "9585" not in _terms(ISSUE, drop_urls=True)


def test_one_letter_terms_leave_room_under_the_cap_for_words():
    text = "b c d e f g h j k " * 3 + "wordy " + " ".join(f"term{i}" for i in range(70))
    plain = _terms(text, max_query_terms=8)
    assert "b" in plain and "term0" not in plain
    dropped = _terms(text, max_query_terms=8, drop_single_letters=True)
    assert len(dropped) == 8 and "b" not in dropped and dropped[:2] == ("wordi", "term0")


def test_the_levers_leave_a_short_question_alone():
    question = "### how do I use numpy: 1.2.3 with https://x.org"
    settings = replace(
        RankingSettings(),
        drop_form_labels=True,
        drop_version_lines=True,
        drop_urls=True,
        drop_single_letters=True,
    )
    assert weighted_terms(question, settings) == weighted_terms(question, RankingSettings())
