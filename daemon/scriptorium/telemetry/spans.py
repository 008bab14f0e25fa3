"""Spans: the operation span, leaf stage spans, and how a failure is recorded on them.

Exceptions are recorded by type and status code only, never by message (a message may quote
the request).
"""

from __future__ import annotations

import functools
import inspect
import random
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from scriptorium.telemetry import _state
from scriptorium.telemetry.names import (
    ERROR_CODE,
    RESOLUTION_CANDIDATES,
    RESOLUTION_REASON,
    RESOLUTION_RULE,
    RESOLUTION_SITE,
)

F = TypeVar("F", bound=Callable[..., Any])


def current_trace_id() -> str:
    """The active trace's id (32 hex digits), or a random id of the same shape (from the
    process's generator, as OpenTelemetry makes its ids: it names a response, it guards
    nothing, and reading the system's entropy for it cost 1 % of a short search)."""
    if _state.current.tracing:
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            return format(context.trace_id, "032x")
    return format(random.getrandbits(128), "032x")


class _NoSpan:
    """A reusable context manager that yields the non-recording span."""

    __slots__ = ()

    def __enter__(self) -> Span:
        return trace.INVALID_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


_NO_SPAN = _NoSpan()


def span(name: str):
    """A child span of the current one (the non-recording span when tracing is off).

    Exceptions are recorded by type and code only, never by message.
    """
    if not _state.current.tracing:
        return _NO_SPAN
    return _live_span(name)


@contextmanager
def _live_span(name: str) -> Iterator[Span]:
    with _state.current.tracer.start_as_current_span(
        name, record_exception=False, set_status_on_exception=False
    ) as live:
        try:
            yield live
        except BaseException as exc:
            mark_error(live, exc)
            raise


def error_code(exc: BaseException) -> str:
    """A failure's status code name (``NOT_FOUND``...) or its type name, never its message."""
    code = getattr(exc, "code", None)
    return code if isinstance(code, str) else type(exc).__name__


def mark_error(target: Span, exc: BaseException) -> None:
    """Mark ``target`` failed with the error's code; a resolution adds its reason and rule."""
    if not target.is_recording():
        return
    code = error_code(exc)
    target.set_status(Status(StatusCode.ERROR, code))
    target.set_attribute(ERROR_CODE, code)
    resolution = getattr(exc, "resolution", None)
    if resolution is not None:
        target.set_attributes(resolution_attributes(resolution))


class Describer:
    """Annotates a stage span from the stage's result and the arguments it names in ``reads``.

    Arguments are looked up by parameter name, never by position, and ``traced`` checks at
    import time that the stage has every parameter the describer reads: renaming or reordering
    a stage's parameters cannot silently break its span.
    """

    def __init__(self, fn: Callable[[Span, Any, Mapping[str, Any]], None], reads: tuple[str, ...]):
        self.fn = fn
        self.reads = reads
        functools.update_wrapper(self, fn)

    def __call__(self, target: Span, result: Any, arguments: Mapping[str, Any]) -> None:
        self.fn(target, result, arguments)


def describer(*reads: str) -> Callable[[Callable[..., None]], Describer]:
    """Declare a describer and the stage parameters it reads (``@describer("limit")``)."""
    return lambda fn: Describer(fn, reads)


def traced(name: str, describe: Describer | None = None) -> Callable[[F], F]:
    """Run a function inside leaf span ``name``; ``describe`` annotates it from named arguments.

    ``describe`` runs only for a recording span, so attributes (and binding the arguments to
    their names) cost nothing when tracing is off. The span is a child of the current one but
    is not made current itself (a stage opens no spans of its own), which saves a context
    switch per stage.
    """

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)
        if describe is not None:
            missing = [p for p in describe.reads if p not in signature.parameters]
            if missing:
                raise TypeError(f"{describe.__name__} reads {missing} that {fn.__qualname__} lacks")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            state = _state.current
            if not state.tracing:
                return fn(*args, **kwargs)
            live = state.tracer.start_span(name)
            try:
                result = fn(*args, **kwargs)
                if describe is not None and live.is_recording():
                    bound = signature.bind(*args, **kwargs)
                    bound.apply_defaults()
                    describe(live, result, bound.arguments)
                return result
            except BaseException as exc:
                mark_error(live, exc)
                raise
            finally:
                live.end()

        return wrapper  # type: ignore[return-value]

    return decorate


def resolution_attributes(resolution: Any) -> dict[str, Any]:
    """Reason, rule and site of a resolution; never the requested location (caller text)."""
    attributes: dict[str, Any] = {
        RESOLUTION_REASON: resolution.reason,
        RESOLUTION_RULE: resolution.rule,
    }
    if resolution.site:
        attributes[RESOLUTION_SITE] = resolution.site
    if resolution.candidates:
        attributes[RESOLUTION_CANDIDATES] = len(resolution.candidates)
    return attributes
