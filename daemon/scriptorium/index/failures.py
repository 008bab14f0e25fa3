"""Why an index generation cannot be used or written, said as one sentence for a person."""

from __future__ import annotations

import errno
import os
import re


class CorruptGenerationError(RuntimeError):
    """A generation failed verification and must not be served."""


class GenerationWriteError(RuntimeError):
    """A generation could not be written (a full disk, a read-only state directory).

    The message is one sentence for a person: which sources, where, and why (for a full disk,
    how much the new text needs against the space that is free). Nothing of the attempt is
    left behind, and ``sources`` names the sources whose update it carried.
    """

    def __init__(self, message: str, sources: tuple[str, ...]) -> None:
        super().__init__(message)
        self.sources = sources


_DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# How tantivy passes an OS error on: a ValueError ("An IO error occurred: ...", "Internal
# error: ...") whose text ends with the OS message and "(os error N)".
_TANTIVY_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def write_failure(exc: BaseException) -> tuple[str, bool] | None:
    """Why a generation's write failed when it is the file system's doing, and whether the
    disk is full; None for anything else (a bug, a cancellation)."""
    if isinstance(exc, OSError):
        code, why = exc.errno, exc.strerror or str(exc)
    elif isinstance(exc, ValueError) and (found := _TANTIVY_OS_ERROR.search(str(exc))):
        code = int(found.group(1))
        why = os.strerror(code)
    elif isinstance(exc, ValueError) and os.strerror(errno.ENOSPC) in str(exc):
        code, why = errno.ENOSPC, os.strerror(errno.ENOSPC)
    else:
        return None
    return why[:1].lower() + why[1:], code in _DISK_FULL_ERRNOS


def megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"
