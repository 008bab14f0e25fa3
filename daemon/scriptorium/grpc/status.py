"""gRPC statuses for engine failures, with the Resolution attached as a rich error detail.

A failed fetch answers with a status code *and* a ``scriptorium.v1.Resolution`` packed into
``google.rpc.Status.details``, so a caller learns why it failed (not found, ambiguous with
candidates, site unavailable) without parsing the message text.
"""

from __future__ import annotations

from typing import NoReturn

import grpc
from google.rpc import status_pb2
from grpc_status import rpc_status

from scriptorium.client._wire import resolution_from_error, rich_status
from scriptorium.domain.outcomes import RetrievalError
from scriptorium.grpc.convert import resolution_to_pb

INTERNAL_MESSAGE = "internal error"
# Decoding the detail is the caller's side of the same contract (the client, a peer source).
__all__ = ["abort_with", "resolution_from_error", "rich_status", "status_code", "to_status"]


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
