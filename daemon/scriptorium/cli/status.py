"""Exit statuses of the ``scriptorium`` command and the one exception for unusable input."""

from __future__ import annotations

import grpc

EXIT_OK, EXIT_FAILED, EXIT_UNAVAILABLE = 0, 1, 2
# 128 + SIGPIPE, what a shell reports for a program whose reader closed the pipe.
EXIT_BROKEN_PIPE = 141
UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class UsageError(Exception):
    """Command-line input that cannot be used; the message says which and why."""
