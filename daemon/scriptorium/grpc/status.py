"""gRPC statuses for engine failures, with the Resolution attached as a rich error detail.

A failed fetch answers with a status code *and* a ``scriptorium.v1.Resolution`` packed into
``google.rpc.Status.details``, so a caller learns why it failed (not found, ambiguous with
candidates, site unavailable) without parsing the message text.
"""

from __future__ import annotations

from typing import Any, NoReturn

import grpc
from google.rpc import status_pb2
from grpc_status import rpc_status

from scriptorium.domain.outcomes import RetrievalError
from scriptorium.grpc.convert import resolution_to_pb
from scriptorium.v1 import retrieval_pb2 as pb

INTERNAL_MESSAGE = "internal error"
_DETAILS_KEY = "grpc-status-details-bin"


def status_code(error: RetrievalError) -> grpc.StatusCode:
    """The gRPC status code named by ``error.code`` (INTERNAL when it names none)."""
    return grpc.StatusCode.__members__.get(error.code, grpc.StatusCode.INTERNAL)


def to_status(error: BaseException) -> grpc.Status:
    """The status for any exception; anything but a RetrievalError becomes a generic INTERNAL.

    Unexpected exceptions may quote the request, so their text never reaches the caller.
    """
    if isinstance(error, RetrievalError):
        code = status_code(error)
        message = error.message
        resolution = error.resolution
    else:
        code, message, resolution = grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE, None
    status = status_pb2.Status(code=code.value[0], message=message)
    if resolution is not None:
        status.details.add().Pack(resolution_to_pb(resolution))
    return rpc_status.to_status(status)


async def abort_with(context: grpc.aio.ServicerContext, error: BaseException) -> NoReturn:
    """End the call with the status for ``error`` (raises, like ``context.abort``)."""
    await context.abort_with_status(to_status(error))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


def _trailing_metadata(err: Any) -> tuple[Any, ...]:
    getter = getattr(err, "trailing_metadata", None)
    if getter is None:
        return ()
    try:
        return tuple(getter() or ())
    except Exception:
        return ()


def rich_status(err: Any) -> status_pb2.Status | None:
    """The ``google.rpc.Status`` a failed call carried in its trailers, if any."""
    for key, value in _trailing_metadata(err):
        if key == _DETAILS_KEY:
            status = status_pb2.Status()
            try:
                status.ParseFromString(value)
            except Exception:
                return None
            return status
    return None


def resolution_from_error(err: grpc.RpcError) -> pb.Resolution | None:
    """The Resolution attached to a failed call (sync or asyncio), or None."""
    status = rich_status(err)
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(pb.Resolution.DESCRIPTOR):
            resolution = pb.Resolution()
            detail.Unpack(resolution)
            return resolution
    return None
