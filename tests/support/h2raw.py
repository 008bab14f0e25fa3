"""One gRPC call over a raw HTTP/2 connection, with headers no gRPC client would send.

grpcio's client checks its own deadline before sending, so a ``grpc-timeout`` of a nanosecond
never reaches the daemon through it; this speaks the frames directly (literal HPACK fields,
no Huffman) and reports which frames came back on the call's stream, which is enough to tell
an answer (a DATA frame carrying a message) from a refusal (trailers alone or a reset).
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
INITIAL_WINDOW_SIZE = 0x4
STREAM = 1


def _int(value: int, prefix_bits: int = 7) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([value])
    out, value = bytearray([limit]), value - limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _literal(name: str, value: str) -> bytes:
    """A header as "literal without indexing, new name", neither string Huffman-coded."""
    raw_name, raw_value = name.encode(), value.encode()
    return b"\x00" + _int(len(raw_name)) + raw_name + _int(len(raw_value)) + raw_value


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    head = struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream)
    return head + payload


@dataclass
class Reply:
    """The frame types the call's stream received, and the bytes of its DATA frames."""

    kinds: list[int] = field(default_factory=list)
    data: bytes = b""

    @property
    def answered(self) -> bool:
        return len(self.data) > 5  # a gRPC message: flag, length, then the message itself


def _request(port: int, method: str, message: bytes, headers: dict[str, str]) -> bytes:
    """The HEADERS and DATA frames of one unary call on stream 1."""
    fields = [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", method),
        (":authority", f"127.0.0.1:{port}"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
        *headers.items(),
    ]
    block = b"".join(_literal(k, v) for k, v in fields)
    body = b"\x00" + struct.pack(">I", len(message)) + message
    return _frame(HEADERS, END_HEADERS, STREAM, block) + _frame(DATA, END_STREAM, STREAM, body)


def call(port: int, method: str, message: bytes, headers: dict[str, str], timeout: float) -> Reply:
    """POST ``message`` to ``method`` on 127.0.0.1:``port``; the frames until the stream ends."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(
            PREFACE + _frame(SETTINGS, 0, 0, b"") + _request(port, method, message, headers)
        )
        return _read(sock)


def leave_unread(port: int, method: str, message: bytes, headers: dict[str, str], timeout: float):
    """Call with a receive window of zero, and leave once the answer's headers arrive: the
    daemon is then sending a message its client will never read."""
    no_window = struct.pack(">HI", INITIAL_WINDOW_SIZE, 0)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(
            PREFACE + _frame(SETTINGS, 0, 0, no_window) + _request(port, method, message, headers)
        )
        _read(sock, until=HEADERS)


def _read(sock: socket.socket, until: int | None = None) -> Reply:
    reply = Reply()
    buffer = b""
    while True:
        while len(buffer) < 9 or len(buffer) < 9 + int.from_bytes(buffer[:3], "big"):
            chunk = sock.recv(65536)
            if not chunk:
                return reply
            buffer += chunk
        size = int.from_bytes(buffer[:3], "big")
        kind, flags = buffer[3], buffer[4]
        stream = int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF
        payload, buffer = buffer[9 : 9 + size], buffer[9 + size :]
        if kind == SETTINGS and not flags & ACK:
            sock.sendall(_frame(SETTINGS, ACK, 0, b""))
        elif kind == PING and not flags & ACK:
            sock.sendall(_frame(PING, ACK, 0, payload))
        if stream != STREAM:
            if kind == GOAWAY:
                return reply
            continue
        reply.kinds.append(kind)
        if kind == until:
            return reply
        if kind == DATA:
            reply.data += payload
        if kind == RST_STREAM or flags & END_STREAM:
            return reply
