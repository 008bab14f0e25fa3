"""A query's HTML comments are what no reader of the issue sees."""

from __future__ import annotations

from scriptorium.text import without_html_comments


def test_comments_become_spaces_and_the_rest_is_kept():
    text = "keep <!-- hidden\nprompt --> this<!--x-->too"
    assert without_html_comments(text) == "keep   this too"


def test_text_without_comments_is_returned_as_it_is():
    text = "a <b> tag and an arrow --> are kept"
    assert without_html_comments(text) is text


def test_an_unclosed_comment_is_left_alone():
    text = "before <!-- never closed"
    assert without_html_comments(text) == text
