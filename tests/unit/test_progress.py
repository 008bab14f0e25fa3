"""The build progress renderer, with a fake clock and fake streams (a terminal and a pipe)."""

from __future__ import annotations

import io
import logging

from scriptorium.index import progress
from scriptorium.index.progress import MB, ProgressRenderer, format_duration


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_a_start_line_a_line_per_ten_percent_and_one_summary() -> None:
    clock, out = Clock(), io.StringIO()
    renderer = ProgressRenderer(out, clock=clock)
    assert renderer.tty is False
    renderer.started(100, 100 * MB)
    for done in range(1, 101):
        clock.now += 1 / 32  # 3.125 s in all: never the time-based line
        renderer.advanced(done, done * MB)
    lines = out.getvalue().splitlines()
    assert lines[0] == "indexing: 100 files, 100.0 MB to read"
    assert len(lines) == 1 + 9 + 1  # 10%, 20% ... 90%, then the summary instead of 100%
    assert lines[1] == (
        "indexing: 10 of 100 files (10%), 10.0 of 100.0 MB read, 32.0 MB/s, 0:03 left"
    )
    assert lines[9].startswith("indexing: 90 of 100 files (90%)")
    assert lines[-1] == "indexing: read 100 files, 100.0 MB in 3.1 s, 32.0 MB/s"
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_a_slow_build_on_a_pipe_still_writes_every_few_seconds() -> None:
    clock, out = Clock(), io.StringIO()
    renderer = ProgressRenderer(out, clock=clock)
    renderer.started(1000, 1000 * MB)
    for done in range(1, 50):  # under 5 %: no percentage line
        clock.now += 1.0
        renderer.advanced(done, done * MB)
    lines = out.getvalue().splitlines()[1:]
    assert len(lines) == 49 // 5
    assert lines[0].startswith("indexing: 5 of 1000 files (0%)")
    assert "1.0 MB/s" in lines[0] and "16:35 left" in lines[0]


def test_a_terminal_redraws_one_line_in_place_at_most_four_times_a_second() -> None:
    clock, out = Clock(), Terminal()
    renderer = ProgressRenderer(out, clock=clock)
    assert renderer.tty is True
    renderer.started(200, 50 * MB)
    for done in range(1, 200):
        clock.now += 1 / 16  # a file every 62.5 ms, reported 199 times
        renderer.advanced(done, done * MB // 4)
    text = out.getvalue()
    assert "\n" not in text  # still on the same line
    draws = text.split("\r\x1b[K")[1:]
    assert len(draws) == 1 + 49  # the first frame, then one every 0.25 s (4 files)
    last = draws[-1]
    assert last.startswith("indexing [")
    assert "196/200 files" in last
    assert "49.0/50.0 MB" in last
    assert "4.0 MB/s" in last and "0:01 left" in last
    clock.now += 1 / 16
    renderer.advanced(200, 50 * MB)
    assert out.getvalue().endswith(
        "\r\x1b[Kindexing: read 200 files, 50.0 MB in 12.5 s, 4.0 MB/s\n"
    )


def test_the_bar_fills_with_the_bytes_read() -> None:
    clock, out = Clock(), Terminal()
    renderer = ProgressRenderer(out, clock=clock)
    renderer.started(4, 8 * MB)
    clock.now += 1.0
    renderer.advanced(1, 6 * MB)  # one big file: 75 % of the bytes
    bar = out.getvalue().rsplit("\r\x1b[K", 1)[1]
    assert "[" + "#" * 18 + "." * 6 + "]  75%" in bar
    assert "6.0 MB/s" in bar and "0:01 left" in bar


def test_nothing_to_read_writes_nothing_and_a_stopped_build_ends_its_line() -> None:
    clock, out = Clock(), io.StringIO()
    renderer = ProgressRenderer(out, clock=clock)
    renderer.started(0, 0)
    renderer.advanced(0, 0)
    renderer.close()
    assert out.getvalue() == ""

    renderer.started(10, 10 * MB)
    renderer.advanced(3, 3 * MB)
    renderer.close()
    assert out.getvalue().splitlines()[-1] == "indexing: stopped after 3 of 10 files (3.0 MB)"

    term = Terminal()
    bar = ProgressRenderer(term, clock=clock)
    bar.started(10, 10 * MB)
    bar.close()
    assert term.getvalue().endswith("\n")


def test_attached_listeners_hear_builds_until_detached() -> None:
    clock, out = Clock(), io.StringIO()
    with progress.attach(ProgressRenderer(out, clock=clock)):
        progress.build_started(2, 2 * MB)
        clock.now += 1
        progress.build_advanced(2, 2 * MB)
    progress.build_started(5, 5 * MB)  # nobody listens any more
    assert out.getvalue().splitlines() == [
        "indexing: 2 files, 2.0 MB to read",
        "indexing: read 2 files, 2.0 MB in 1.0 s, 2.0 MB/s",
    ]


def test_a_broken_stream_does_not_break_the_build() -> None:
    out = io.StringIO()
    out.close()
    renderer = ProgressRenderer(out, clock=Clock(), tty=False)
    renderer.started(1, 1)
    renderer.advanced(1, 1)


def test_a_one_file_update_reads_as_one_file() -> None:
    clock, out = Clock(), io.StringIO()
    renderer = ProgressRenderer(out, clock=clock)
    renderer.started(1, 2_500_000)
    clock.now += 0.5
    renderer.advanced(1, 2_500_000)
    assert out.getvalue().splitlines() == [
        "indexing: 1 file, 2.5 MB to read",
        "indexing: read 1 file, 2.5 MB in 0.5 s, 5.0 MB/s",
    ]


def test_durations_are_short() -> None:
    assert format_duration(0) == "0:00"
    assert format_duration(59.2) == "1:00"
    assert format_duration(3599) == "59:59"
    assert format_duration(3600 * 2 + 125) == "2h02m"


def test_a_log_line_on_the_same_terminal_wipes_the_bar_and_the_next_report_redraws_it() -> None:
    clock, term = Clock(), Terminal()
    handler = logging.StreamHandler(term)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with progress.attach(ProgressRenderer(term, clock=clock)):
            progress.build_started(10, 10 * MB)
            logging.getLogger("scriptorium.test").warning("helpers are slow")
            progress.build_advanced(1, 1 * MB)  # no time has passed: redrawn all the same
        assert not handler.filters
    finally:
        root.removeHandler(handler)
    frames = term.getvalue().split("\r\x1b[K")
    assert frames[2] == "helpers are slow\n"
    assert frames[3].startswith("indexing [") and "1/10 files" in frames[3]
