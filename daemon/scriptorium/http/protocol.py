"""uvicorn's h11 protocol with deadlines for a request's headers and body, and a connection cap.

uvicorn times out only idle keep-alive connections: a client that sends its headers or its body
a byte at a time holds a connection (and a file descriptor) for as long as it likes, and enough
of them take every descriptor the process has. Here a request's headers must be complete within
``header_seconds`` of the connection (or of the first byte of the next request on it), its body
within ``body_seconds`` of the headers; past either the client gets a 408 and the connection is
closed. At most ``max_connections`` are open: a new one pushes out the connection that has
waited longest for a request (a flood of unfinished headers only pushes out its own), and is
answered 503 and closed at once only when every open one has a request under way. So the
process keeps descriptors for its index, its gRPC callers and its health.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from scriptorium.logfilters import REPEATS

log = logging.getLogger(__name__)


def _plain(status: bytes, text: bytes) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection."""
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"connection: close\r\ncontent-length: " + str(len(text)).encode() + b"\r\n\r\n" + text
    )


_TIMED_OUT = _plain(b"408 Request Timeout", b"the request came too slowly\n")
_FULL = _plain(b"503 Service Unavailable", b"too many open connections\n")
# Connections begin waiting in this order: the first to wait is the first pushed out.
_TURNS = itertools.count()


@dataclass(frozen=True, slots=True)
class DoorLimits:
    """How long a request may take to arrive, and how many connections may be open."""

    header_seconds: float
    body_seconds: float
    max_connections: int


class GuardedH11Protocol(H11Protocol):
    """One HTTP connection, closed when its request is too slow or the door is full."""

    limits = DoorLimits(header_seconds=10.0, body_seconds=30.0, max_connections=256)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._phase: str | None = None
        self._refused = False
        # When (in the order of all connections) this one began waiting for a request.
        self._waiting_turn: int | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.limits.max_connections and not self._evict_one():
            self._refused = True
            log.warning(
                "refused an HTTP connection: %d are open, the limit, all of them with a request",
                self.limits.max_connections,
            )
            transport.write(_FULL)
            transport.close()
            return
        super().connection_made(transport)
        self._follow()

    def _evict_one(self) -> bool:
        """Make room by closing the connection that has waited longest for a request.

        A flood of connections that never finish their headers then only pushes out its own
        oldest, never a client whose request is in; such connections are refused only when
        every open one has a request under way.
        """
        waiting = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol)
            and c._waiting_turn is not None
            and not c.transport.is_closing()
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c._waiting_turn or 0)
        log.warning(
            "closed the HTTP connection waiting longest for a request: %d are open, the limit",
            self.limits.max_connections,
        )
        oldest._close(_FULL)
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # Idle keep-alive is uvicorn's own timeout; the next request's first byte re-arms ours.
        if self.conn.their_state is h11.IDLE:
            self._disarm()
            self._waiting_turn = next(_TURNS)

    # -- the deadlines ---------------------------------------------------------------------------

    def _follow(self) -> None:
        """Arm the deadline of the part of the request still to come (none once it is in)."""
        state = self.conn.their_state
        waiting = state is h11.IDLE and self.conn.our_state is h11.IDLE
        if not waiting:
            self._waiting_turn = None
        elif self._waiting_turn is None:
            self._waiting_turn = next(_TURNS)
        if waiting:
            self._arm("headers", self.limits.header_seconds)
        elif state is h11.SEND_BODY:
            self._arm("body", self.limits.body_seconds)
        else:
            self._disarm()

    def _arm(self, phase: str, seconds: float) -> None:
        if self._phase == phase:
            return
        self._disarm()
        self._phase = phase
        self._timer = self.loop.call_later(seconds, self._expired, phase, seconds)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._phase = None

    def _expired(self, phase: str, seconds: float) -> None:
        self._timer = None
        if self.transport is None or self.transport.is_closing():
            return
        log.info(
            "closed a slow HTTP connection: its request's %s took over %gs",
            phase,
            seconds,
            extra={REPEATS: True},
        )
        self._close(_TIMED_OUT)

    def _close(self, answer: bytes) -> None:
        """Close, with ``answer`` first unless part of a response is already sent."""
        self._disarm()
        self._waiting_turn = None
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.write(answer)
        self.transport.close()


def guarded_protocol(limits: DoorLimits) -> type[GuardedH11Protocol]:
    """The protocol class uvicorn instantiates per connection, carrying ``limits``."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
