"""Why an index generation cannot be used or written, said as one sentence for a person."""

from __future__ import annotations

import errno
import os
import re
import shutil
from pathlib import Path


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


# How tantivy says its writer's thread died, on the next call after the failure: the error
# itself (most likely a write the disk refused) is not passed on.
_TANTIVY_WRITER_KILLED = "index writer was killed"
# A writer that died with less than this free where it writes died of a full disk.
_NEARLY_FULL_BYTES = 64 * 1024 * 1024


def _nearly_full(path: Path) -> bool:
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return False
    return usage.free < min(_NEARLY_FULL_BYTES, usage.total // 10 or 1) or usage.free == 0


def write_failure(exc: BaseException, where: Path | None = None) -> tuple[str, bool] | None:
    """Why a generation's write failed when it is the file system's doing, and whether the
    disk is full; None for anything else (a bug, a cancellation).

    ``where`` is the directory being written, looked at before the partial write is removed:
    when tantivy only says its writer's thread died, a disk with next to nothing free there
    says why.
    """
    if isinstance(exc, ValueError) and _TANTIVY_WRITER_KILLED in str(exc):
        if where is not None and _nearly_full(where):
            return os.strerror(errno.ENOSPC).lower(), True
        return "the index writer stopped on an I/O error", False
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
