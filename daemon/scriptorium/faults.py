"""Pause points that let a test hold the daemon at a named stage, deterministically.

A test that must act *while* something happens (kill a build mid-write, let a deadline expire
mid-call) cannot rely on the machine being slow enough. Instead it names a stage and a file in
``SCRIPTORIUM_FAULT_PAUSE``::

    SCRIPTORIUM_FAULT_PAUSE="build.write=/tmp/t/release,rpc.guide=/tmp/t/go"

When the code reaches ``pause("build.write")``, it adds a line to ``/tmp/t/release.reached`` (so
the test knows the stage is under way, and how many times it was reached) and waits until
``/tmp/t/release`` exists. The variable is
read once at import; without it ``pause`` is one dictionary lookup, so production pays nothing.
A pause can be given a ``stop`` callable (a cancellation flag): it then returns early when that
says true, so a paused stage still honours cancellation.

Stages: ``build.write`` (a generation's files are read and its blocks written, before its commit),
``build.helper`` (a build helper process, before it loads a chunk of files), ``build.files.N``
(a write has indexed its N-th document; a stop there keeps what a full listing applied),
``start.catch_up``
(a daemon serves the generation it opened, before its start-up reconcile),
``start.verify`` (a daemon serves the generation it opened, before its large files are hashed),
``vectors.encode`` (a generation serves, before the semantic retriever makes its vectors),
``semantic.query`` (a query's vector is about to be encoded),
``rpc.search``, ``rpc.get_content``, ``rpc.guide`` (inside the handler's worker thread, before
the work starts), ``repair.start`` (damage was found while serving, before the repair that
re-reads it from the roots runs).

``SCRIPTORIUM_FAULT_PANIC`` names stages that raise instead, the way a Rust panic reaches
Python through pyo3 (a ``BaseException``, not an ``Exception``), while a file exists::

    SCRIPTORIUM_FAULT_PANIC="index.search=/tmp/t/panic"

``panic("index.search")`` (every call into the served tantivy searcher) then raises
:class:`InjectedPanic` for as long as ``/tmp/t/panic`` exists, and adds a line to
``/tmp/t/panic.reached`` each time it does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

ENV = "SCRIPTORIUM_FAULT_PAUSE"
PANIC_ENV = "SCRIPTORIUM_FAULT_PANIC"
_POLL_SECONDS = 0.01


def _parse(spec: str) -> dict[str, Path]:
    points: dict[str, Path] = {}
    for item in spec.split(","):
        stage, sep, path = item.strip().partition("=")
        if sep and stage.strip() and path.strip():
            points[stage.strip()] = Path(path.strip())
    return points


_POINTS: dict[str, Path] = _parse(os.environ.get(ENV, ""))
_PANICS: dict[str, Path] = _parse(os.environ.get(PANIC_ENV, ""))


class InjectedPanic(BaseException):
    """What ``panic`` raises: like pyo3's ``PanicException``, not an ``Exception``."""


def reached_marker(release: Path) -> Path:
    """The file a pause adds a line to each time its stage is reached."""
    return release.with_name(release.name + ".reached")


def times_reached(release: Path) -> int:
    """How many times the stage released by ``release`` was reached (0 before the first)."""
    try:
        return reached_marker(release).read_text(encoding="utf-8").count("\n")
    except FileNotFoundError:
        return 0


def armed(stage: str) -> bool:
    """Whether a test asked to hold ``stage`` (so a caller can skip setting up a pause)."""
    return stage in _POINTS


def pause(stage: str, stop: Callable[[], bool] | None = None) -> None:
    """Hold here until the test's release file exists (only when ``stage`` is configured)."""
    release = _POINTS.get(stage)
    if release is None:
        return
    with reached_marker(release).open("a", encoding="utf-8") as marker:
        marker.write(f"{stage}\n")
    waiter = threading.Event()
    while not release.exists():
        if stop is not None and stop():
            return
        waiter.wait(_POLL_SECONDS)


# Stages held after a count (``build.files.3``: after the third document a write indexed).
_COUNTED = {stage.rpartition(".")[0] for stage in _POINTS if stage.rpartition(".")[2].isdigit()}


def pause_counted(stage: str, count: int, stop: Callable[[], bool] | None = None) -> None:
    """``pause(f"{stage}.{count}")``, costing one set lookup when no count of it is held."""
    if stage in _COUNTED:
        pause(f"{stage}.{count}", stop)


def panic(stage: str) -> None:
    """Raise :class:`InjectedPanic` while the test's file for ``stage`` exists."""
    armed_by = _PANICS.get(stage)
    if armed_by is None or not armed_by.exists():
        return
    with reached_marker(armed_by).open("a", encoding="utf-8") as marker:
        marker.write(f"{stage}\n")
    raise InjectedPanic(f"injected panic at {stage}")
