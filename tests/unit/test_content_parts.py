"""Parts of a long answer and their cursors (scriptorium.content.parts), without a daemon."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from scriptorium.content.parts import decode_cursor, encode_cursor, fit, partition
from scriptorium.domain.model import RefKind
from scriptorium.domain.outcomes import (
    ContentOutcome,
    FailedPrecondition,
    InvalidArgument,
    RangeMark,
    Resolution,
)

PAGE = "\n".join(
    ["# Title", "", "Intro line."]
    + [
        line
        for n in range(1, 40)
        for line in (f"## Section {n}", "", f"Body of section {n}. " * 6, "")
    ]
)


def outcome(content: str, start_line: int = 1) -> ContentOutcome:
    lines = content.count("\n") + 1
    return ContentOutcome(
        location="page",
        requested_location="page",
        url="",
        source="docs",
        content=content,
        ranges=[RangeMark(start_line, start_line + lines - 1, "all")],
        truncated=False,
        total_lines=lines,
        doc_version="v1",
        resolution=Resolution("resolved"),
        ref_id="",
        kind=RefKind.DOC,
        title="Title",
        start_line=start_line,
        end_line=start_line + lines - 1,
        provider="local",
    )


@pytest.mark.parametrize("max_chars", [200, 333, 1000, 5000])
def test_parts_are_exact_slices_within_the_cap_ending_on_lines(max_chars: int) -> None:
    parts = partition(PAGE, max_chars)
    assert "".join(PAGE[s:e] for s, e in parts) == PAGE
    assert all(0 < e - s <= max_chars for s, e in parts)
    assert all(PAGE[e - 1] == "\n" for _, e in parts[:-1])


def test_a_part_ends_before_a_heading_in_the_last_fifth_of_its_window() -> None:
    for start, _ in partition(PAGE, 1000)[1:]:
        assert PAGE[start:].startswith("## Section")


def test_only_a_line_longer_than_the_cap_is_cut_mid_line() -> None:
    text = "short\n" + "word " * 100 + "\nend"
    parts = partition(text, 200)
    assert "".join(text[s:e] for s, e in parts) == text
    assert all(e - s <= 200 for s, e in parts)
    assert text[parts[1][1] - 1] == " "  # cut after a space, not inside a word


def test_fit_walks_the_parts_with_cursors_and_clips_ranges() -> None:
    parts, cursor = [], ""
    while True:
        out = fit(outcome(PAGE, start_line=10), 400, cursor)
        parts.append(out)
        cursor = out.next_cursor
        if not cursor:
            break
    assert "".join(p.content for p in parts) == PAGE
    assert [p.part.number for p in parts] == list(range(1, len(parts) + 1))
    assert {p.total_chars for p in parts} == {len(PAGE)}
    assert parts[0].start_line == 10 and parts[-1].end_line == 10 + PAGE.count("\n")
    for previous, part in itertools.pairwise(parts):
        assert part.start_line == previous.end_line + 1
    for part in parts:
        [mark] = part.ranges
        assert (mark.start_line, mark.end_line) == (part.start_line, part.end_line)


def test_an_unparted_answer_keeps_its_content_and_reports_its_size() -> None:
    out = fit(outcome(PAGE), 0, "")
    assert out.content == PAGE and out.total_chars == len(PAGE) and out.part is None


def test_cursors_are_refused_when_malformed_or_from_another_answer_or_version() -> None:
    cursor = fit(outcome(PAGE), 400, "").next_cursor
    assert decode_cursor(cursor).start_char > 0
    for bad in ("", "x", cursor[:-1], cursor + "A", "é" * 10, "A" * 200):
        with pytest.raises(InvalidArgument):
            decode_cursor(bad)
    with pytest.raises(InvalidArgument):
        fit(outcome(PAGE), 0, cursor)  # a cursor needs max_chars
    other = outcome(PAGE)
    other.doc_version = "v2"
    with pytest.raises(FailedPrecondition, match="doc_version"):
        fit(other, 400, cursor)
    with pytest.raises(FailedPrecondition, match="another answer"):
        fit(outcome(PAGE + "\nmore"), 400, cursor)
    past = encode_cursor("v1", PAGE, len(PAGE) + 5)
    with pytest.raises(FailedPrecondition):
        fit(outcome(PAGE), 400, past)


def test_parts_of_a_definition_after_its_class_line_number_the_definition_lines() -> None:
    """DEFINITION's content opens with the enclosing signature (line 3) before the method's own
    lines (40..): a part's lines are the document's, and only the part that holds the signature
    keeps it in context."""
    body = [f"        value_{n} = compute_something_long({n}, argument={n})" for n in range(30)]
    method = ["    def method(self) -> None:", *body]
    whole = outcome("\n".join(["class Owner:", *method]), start_line=40)
    whole.end_line = 40 + len(method) - 1
    whole.ranges = []
    whole.context = [RangeMark(3, 3, "Owner")]
    parts = [fit(replace(whole), 500, "")]
    while parts[-1].next_cursor:
        parts.append(fit(replace(whole), 500, parts[-1].next_cursor))
    assert len(parts) > 2 and "".join(p.content for p in parts) == whole.content
    assert parts[0].start_line == 40 and [(m.start_line, m.reason) for m in parts[0].context] == [
        (3, "Owner")
    ]
    assert all(not p.context for p in parts[1:])
    for part in parts:
        own = part.content.splitlines()[1:] if part.context else part.content.splitlines()
        first = method.index(own[0]) if own[0] in method else None
        if first is not None:  # the part starts on a whole line
            assert part.start_line == 40 + first
        assert part.end_line == 40 + method.index(part.content.rstrip("\n").split("\n")[-1])
        assert part.part.whole_lines == len(method) + 1
    assert parts[-1].end_line == whole.end_line
