"""gRPC statuses as HTTP answers: the status name, its message and the Resolution detail.

The HTTP codes follow the mapping gRPC gateways use, so a caller that knows one knows both.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import json_format
from google.rpc import status_pb2

from scriptorium.v1 import retrieval_pb2 as pb

DETAILS_KEY = "grpc-status-details-bin"
HTTP_STATUS: dict[str, int] = {
    "OK": 200,
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INVALID_ARGUMENT": 400,
    "DEADLINE_EXCEEDED": 504,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "PERMISSION_DENIED": 403,
    "UNAUTHENTICATED": 401,
    "RESOURCE_EXHAUSTED": 429,
    "FAILED_PRECONDITION": 400,
    "ABORTED": 409,
    "OUT_OF_RANGE": 400,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
    "DATA_LOSS": 500,
}


class RpcFailure(Exception):
    """A call that ended with a gRPC status other than OK, as the servicer aborted it."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        resolution: pb.Resolution | None = None,
        *,
        http_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.resolution = resolution
        self.http_status = http_status or HTTP_STATUS.get(code.name, 500)

    @classmethod
    def from_status(cls, status: grpc.Status) -> RpcFailure:
        """From what ``abort_with_status`` is given: the Resolution rides in the trailers."""
        return cls(status.code, status.details or "", _resolution(status.trailing_metadata))

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.code.name,
            "code": self.code.value[0],
            "message": self.message,
        }
        if self.resolution is not None:
            out["resolution"] = json_format.MessageToDict(self.resolution)
        return out


def invalid(message: str) -> RpcFailure:
    return RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, message)


def _resolution(trailers: Any) -> pb.Resolution | None:
    for key, value in trailers or ():
        if key != DETAILS_KEY:
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            resolution = pb.Resolution()
            if detail.Unpack(resolution):
                return resolution
    return None
