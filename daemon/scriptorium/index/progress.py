"""Showing that a build is moving: a progress bar on a terminal, plain lines everywhere else.

The indexer reports the reading phase of every build (files and bytes, done and total) to the
listeners attached here; ``scriptorium index build`` and ``scriptorium serve`` attach a
:class:`ProgressRenderer` on stderr. Nothing listens by default, so the engine used as a library
(or in tests) pays one empty-list check per reported chunk.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TextIO

MB = 1_000_000
# The builder's logger: its "building: ..." lines keep the name they always had.
build_log = logging.getLogger("scriptorium.index.builder")


class BuildListener(Protocol):
    """What the indexer tells about a build; called on the building thread."""

    def started(self, files_total: int, bytes_total: int) -> None: ...

    def advanced(self, files_done: int, bytes_done: int) -> None: ...

    def filter(self, record: logging.LogRecord) -> bool:
        """Before a log line on the same stream (a ``logging`` filter): True lets it through."""
        ...

    def close(self) -> None: ...


_listeners: list[BuildListener] = []


@contextlib.contextmanager
def attach(listener: BuildListener) -> Iterator[BuildListener]:
    """Listen to every build while the block runs; the listener is closed on the way out.

    A listener that draws on the stream a logging handler writes to also filters that
    handler's records, so a log line never lands in the middle of a bar.
    """
    stream = getattr(listener, "stream", None)
    handlers = [
        h
        for h in logging.getLogger().handlers
        if stream is not None
        and getattr(h, "stream", None) is stream
        and hasattr(listener, "filter")
    ]
    for handler in handlers:
        handler.addFilter(listener)
    _listeners.append(listener)
    try:
        yield listener
    finally:
        _listeners.remove(listener)
        for handler in handlers:
            handler.removeFilter(listener)
        listener.close()


def build_started(files_total: int, bytes_total: int) -> None:
    for listener in list(_listeners):
        listener.started(files_total, bytes_total)


def build_advanced(files_done: int, bytes_done: int) -> None:
    for listener in list(_listeners):
        listener.advanced(files_done, bytes_done)


def files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def format_mb(size: int) -> str:
    return f"{size / MB:.1f} MB"


def format_duration(seconds: float) -> str:
    """``m:ss`` below an hour, ``XhYYm`` above: short enough for a bar."""
    whole = max(0, math.ceil(seconds))
    if whole >= 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 60}:{whole % 60:02d}"


class ProgressRenderer:
    """Draws a build's progress on ``stream``.

    On a terminal one line is redrawn in place, at most every ``REDRAW_S`` seconds, so a fast
    build does not spend its time painting. Elsewhere (a log file, a pipe, a CI job) a plain
    line is written each time another ``LINE_EVERY_PCT`` percent is read or ``LINE_EVERY_S``
    seconds have passed since the last line. Either way the build ends with one summary line.
    Progress is measured in bytes (files differ wildly in size), in files when no sizes are known.
    """

    REDRAW_S = 0.25
    LINE_EVERY_S = 5.0
    LINE_EVERY_PCT = 10
    BAR_WIDTH = 24

    def __init__(
        self,
        stream: TextIO,
        *,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
        label: str = "indexing",
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.tty = _is_tty(stream) if tty is None else tty
        self.label = label
        self._lock = threading.Lock()
        self._active = False
        self._files_total = self._bytes_total = 0
        self._files_done = self._bytes_done = 0
        self._started = self._last_drawn = 0.0
        self._last_step = 0

    # -- listener ------------------------------------------------------------------------------

    def started(self, files_total: int, bytes_total: int) -> None:
        with self._lock:
            self._end_line()
            if files_total <= 0:
                return  # nothing to read: the build has nothing to show
            self._active = True
            self._files_total, self._bytes_total = files_total, max(0, bytes_total)
            self._files_done = self._bytes_done = 0
            self._started = self._last_drawn = self.clock()
            self._last_step = 0
            if self.tty:
                self._draw()
            else:
                self._write(
                    f"{self.label}: {files(files_total)}, {format_mb(self._bytes_total)} to read\n"
                )

    def advanced(self, files_done: int, bytes_done: int) -> None:
        with self._lock:
            if not self._active:
                return
            self._files_done, self._bytes_done = files_done, bytes_done
            if files_done >= self._files_total:
                self._summary()
                return
            now = self.clock()
            if self.tty:
                if now - self._last_drawn >= self.REDRAW_S:
                    self._last_drawn = now
                    self._draw()
                return
            step = int(self.fraction() * 100) // self.LINE_EVERY_PCT
            if step > self._last_step or now - self._last_drawn >= self.LINE_EVERY_S:
                self._last_step = max(step, self._last_step)
                self._last_drawn = now
                self._write(self.plain_line(now) + "\n")

    def filter(self, record: logging.LogRecord) -> bool:
        """Before a log line on the same stream: wipe the bar; the next report redraws it."""
        with self._lock:
            if self._active and self.tty:
                self._write("\r\x1b[K")
                self._last_drawn = -math.inf
        return True

    def close(self) -> None:
        """A build that stopped before the end (cancelled, failed) leaves a finished line."""
        with self._lock:
            if self._active and not self.tty:
                self._write(
                    f"{self.label}: stopped after {self._files_done} of {self._files_total} files"
                    f" ({format_mb(self._bytes_done)})\n"
                )
                self._active = False
            self._end_line()

    # -- text ----------------------------------------------------------------------------------

    def fraction(self) -> float:
        if self._bytes_total > 0:
            return min(1.0, self._bytes_done / self._bytes_total)
        return min(1.0, self._files_done / self._files_total) if self._files_total else 0.0

    def _rate_and_eta(self, now: float) -> tuple[str, str]:
        elapsed = now - self._started
        if elapsed <= 0 or self._bytes_done <= 0:
            return "-- MB/s", "--:--"
        rate = self._bytes_done / elapsed
        left = max(0, self._bytes_total - self._bytes_done) / rate
        return f"{rate / MB:.1f} MB/s", format_duration(left)

    def bar_line(self, now: float) -> str:
        filled = int(self.fraction() * self.BAR_WIDTH)
        bar = "#" * filled + "." * (self.BAR_WIDTH - filled)
        rate, eta = self._rate_and_eta(now)
        return (
            f"{self.label} [{bar}] {self.fraction() * 100:3.0f}%"
            f"  {self._files_done}/{self._files_total} files"
            f"  {self._bytes_done / MB:.1f}/{format_mb(self._bytes_total)}"
            f"  {rate}  {eta} left"
        )

    def plain_line(self, now: float) -> str:
        rate, eta = self._rate_and_eta(now)
        return (
            f"{self.label}: {self._files_done} of {self._files_total} files"
            f" ({self.fraction() * 100:.0f}%), {self._bytes_done / MB:.1f} of"
            f" {format_mb(self._bytes_total)} read, {rate}, {eta} left"
        )

    def summary_line(self, now: float) -> str:
        elapsed = now - self._started
        rate = f", {self._bytes_done / elapsed / MB:.1f} MB/s" if elapsed > 0 else ""
        return (
            f"{self.label}: read {files(self._files_done)}, {format_mb(self._bytes_done)}"
            f" in {elapsed:.1f} s{rate}"
        )

    # -- output --------------------------------------------------------------------------------

    def _draw(self) -> None:
        self._write("\r\x1b[K" + self.bar_line(self.clock()))

    def _summary(self) -> None:
        now = self.clock()
        prefix = "\r\x1b[K" if self.tty else ""
        self._write(prefix + self.summary_line(now) + "\n")
        self._active = False

    def _end_line(self) -> None:
        if self._active and self.tty:
            self._write("\n")
        self._active = False

    def _write(self, text: str) -> None:
        # Progress must never break the build it reports on (a closed or broken stderr).
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(text)
            self.stream.flush()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class BuildProgress:
    """Counts a build's files and bytes as they are read, per source, and reports them.

    The counters live in each source's state (read by ListSources from another thread: plain
    integer stores); the totals go to :mod:`scriptorium.progress` listeners (a terminal's bar),
    and long builds are logged now and then. The log names counts only, never paths.
    """

    LOG_EVERY_S = 10.0

    def __init__(
        self,
        states: Mapping[str, Any],
        wanted: list[tuple[str, str]],
        sizes: Mapping[tuple[str, str], int] | None = None,
    ) -> None:
        self._states = states
        self._sizes = sizes or {}
        self._total = len(wanted)
        self._done = self._bytes_done = 0
        self._started = self._logged = time.monotonic()
        total_bytes = 0
        for item in wanted:
            size = self._sizes.get(item, 0)
            states[item[0]].build_files_total += 1
            states[item[0]].build_bytes_total += size
            total_bytes += size
        build_started(self._total, total_bytes)

    def advance(self, items: Iterable[tuple[str, str]]) -> None:
        for item in items:
            size = self._sizes.get(item, 0)
            state = self._states[item[0]]
            state.build_files_done += 1
            state.build_bytes_done += size
            self._done += 1
            self._bytes_done += size
        build_advanced(self._done, self._bytes_done)
        now = time.monotonic()
        if now - self._logged >= self.LOG_EVERY_S and self._done < self._total:
            self._logged = now
            build_log.info(
                "building: %d of %d files read (%.0f%%) in %.0fs",
                self._done,
                self._total,
                100 * self._done / self._total,
                now - self._started,
            )


@dataclass(slots=True)
class SourceState:
    state: str = "loading"
    last_error: str = ""
    indexed_at: float | None = None
    last_scan_ok: float | None = None
    # The build under way: files of this source it has to read, and has read (for ListSources).
    build_files_total: int = 0
    build_files_done: int = 0
    # And their sizes in bytes, as listed (for a progress bar's MB and rate).
    build_bytes_total: int = 0
    build_bytes_done: int = 0


@dataclass(slots=True)
class BuildSummary:
    generation: int
    documents: int
    blocks: int
    bytes: int
    changed: int
    removed: int
    seconds: float
    files: dict[str, int] = field(default_factory=dict)
    # Files an interrupted build had read, continued from (``index/resume.py``).
    resumed: int = 0
