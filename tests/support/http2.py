"""A raw HTTP/2 client over a socket, frame by frame, for what a gRPC client never does.

gRPC clients honour the server's SETTINGS (they queue streams past its limit, they read what
they are sent); a test of the server's own limits needs a peer that does not. This one writes
frames by hand (HPACK literals without Huffman coding) and reads frame headers and the few
payloads a test looks at: SETTINGS and RST_STREAM.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE = 0x3, 0x4
REFUSED_STREAM, CANCEL = 0x7, 0x8


@dataclass(frozen=True)
class Frame:
    kind: int
    flags: int
    stream: int
    payload: bytes


def _literal(name: str, value: str) -> bytes:
    """One HPACK "literal header field without indexing, new name", no Huffman coding."""

    def string(text: str) -> bytes:
        raw = text.encode("ascii")
        assert len(raw) < 127, "longer strings need a multi-byte length"
        return bytes([len(raw)]) + raw

    return b"\x00" + string(name) + string(value)


class RawHttp2:
    """One HTTP/2 connection to ``host:port``; the caller decides every frame."""

    def __init__(self, host: str, port: int, settings: dict[int, int] | None = None) -> None:
        self.sock = socket.create_connection((host, port), timeout=60)
        self.authority = f"{host}:{port}"
        self._buffer = b""
        self.server_settings: dict[int, int] = {}
        body = b"".join(struct.pack(">HI", k, v) for k, v in (settings or {}).items())
        self.sock.sendall(PREFACE + self._frame(SETTINGS, 0, 0, body))

    @staticmethod
    def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
        return (
            struct.pack(">I", len(payload))[1:]
            + bytes([kind, flags])
            + struct.pack(">I", stream)
            + payload
        )

    def send(self, kind: int, flags: int, stream: int, payload: bytes = b"") -> None:
        self.sock.sendall(self._frame(kind, flags, stream, payload))

    def read(self) -> Frame:
        """The next frame; the server's SETTINGS are recorded and acknowledged on the way."""
        header = self._exactly(9)
        length = int.from_bytes(header[:3], "big")
        frame = Frame(
            header[3],
            header[4],
            struct.unpack(">I", header[5:])[0] & 0x7FFFFFFF,
            self._exactly(length),
        )
        if frame.kind == SETTINGS and not frame.flags & ACK:
            for i in range(0, len(frame.payload), 6):
                key, value = struct.unpack(">HI", frame.payload[i : i + 6])
                self.server_settings[key] = value
            self.send(SETTINGS, ACK, 0)
        return frame

    def handshake(self) -> dict[int, int]:
        """Until the server's SETTINGS are read and acknowledged; returns them."""
        while True:
            frame = self.read()
            if frame.kind == SETTINGS and not frame.flags & ACK:
                return self.server_settings

    def call(self, stream: int, path: str, message: bytes) -> None:
        """Open ``stream`` as a unary gRPC call of ``path`` with one serialized request."""
        headers = b"".join(
            _literal(k, v)
            for k, v in (
                (":method", "POST"),
                (":scheme", "http"),
                (":path", path),
                (":authority", self.authority),
                ("content-type", "application/grpc"),
                ("te", "trailers"),
            )
        )
        self.send(HEADERS, END_HEADERS, stream, headers)
        self.send(DATA, END_STREAM, stream, b"\x00" + struct.pack(">I", len(message)) + message)

    def cancel(self, stream: int) -> None:
        self.send(RST_STREAM, 0, stream, struct.pack(">I", CANCEL))

    def _exactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self._buffer += chunk
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def close(self) -> None:
        self.sock.close()
