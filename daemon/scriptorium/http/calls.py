"""Every RPC of RetrievalService, called through the gRPC servicer from JSON.

The servicer's methods take a request message and a context whose ``abort_with_status`` ends
the call; :class:`_CallContext` is that context for HTTP, turning the abort into an
:class:`RpcFailure` with the same code, message and Resolution a gRPC caller would get. The
JSON mapping in both directions is protobuf's own ``json_format`` (the canonical proto3 JSON).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc
from google.protobuf import json_format
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

from scriptorium.http.errors import RpcFailure, invalid
from scriptorium.v1 import retrieval_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["RetrievalService"]


@dataclass(frozen=True, slots=True)
class Rpc:
    """One unary RPC: its name and its request and response classes."""

    name: str
    request: type[Message]
    response: type[Message]


def _message_class(descriptor: Any) -> type[Message]:
    return getattr(pb, descriptor.name)


def _rpc(method: MethodDescriptor) -> Rpc:
    return Rpc(method.name, _message_class(method.input_type), _message_class(method.output_type))


RPCS: dict[str, Rpc] = {m.name: _rpc(m) for m in SERVICE.methods}


class _CallContext:
    """The part of ``grpc.aio.ServicerContext`` the servicer uses to fail a call."""

    async def abort_with_status(self, status: grpc.Status) -> NoReturn:
        raise RpcFailure.from_status(status)

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()
    ) -> NoReturn:
        raise RpcFailure.from_status(_Status(code, details, trailing_metadata))


@dataclass(frozen=True, slots=True)
class _Status:
    code: grpc.StatusCode
    details: str
    trailing_metadata: Any


def parse_request(rpc: Rpc, body: bytes) -> Message:
    """The request message from a JSON body; an empty body is the empty message."""
    request = rpc.request()
    if not body.strip():
        return request
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid("the request body is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise invalid(f"the request body is not JSON (a {rpc.request.__name__} object)") from None
    if not isinstance(data, dict):
        raise invalid(f"the request body must be a JSON object (a {rpc.request.__name__})")
    return parse_dict(rpc, data)


def parse_dict(rpc: Rpc, data: dict[str, Any]) -> Message:
    request = rpc.request()
    try:
        json_format.ParseDict(data, request)
    except json_format.ParseError as exc:
        raise invalid(f"not a valid {rpc.request.__name__}: {_short(str(exc))}") from None
    except (RecursionError, ValueError, TypeError, OverflowError):
        raise invalid(f"not a valid {rpc.request.__name__}") from None
    return request


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def to_json(message: Message) -> dict[str, Any]:
    """The canonical JSON of a response, with every field present (zeros and empty lists
    included) so a caller need not know proto3's defaults."""
    return json_format.MessageToDict(message, always_print_fields_with_no_presence=True)


def bind(servicer: Any, rpc: Rpc) -> Callable[[Message], Awaitable[Message]]:
    """The servicer's method for ``rpc``, callable with a request alone."""
    method = getattr(servicer, rpc.name)
    context = _CallContext()

    async def call(request: Message) -> Message:
        return await method(request, context)

    return call
