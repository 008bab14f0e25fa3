"""What the client needs of the wire beyond the generated stubs.

The short words callers may use for enum values (``"docs"``, ``"full"``, ``"compact"``),
timestamps from datetimes, and the ``Resolution`` a failed call carries in its trailers. Only
the stubs, gRPC and protobuf are imported here: the client loads nothing of the server.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import grpc
from google.protobuf.descriptor import EnumDescriptor
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import status_pb2

from scriptorium.v1 import retrieval_pb2 as pb

_DETAILS_KEY = "grpc-status-details-bin"


def enum_prefix(enum: EnumDescriptor) -> str:
    """The prefix every value of ``enum`` carries (buf style): ``RefKind`` -> ``REF_KIND_``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"


def enum_word(enum: EnumDescriptor, number: int) -> str:
    """``REF_KIND_DOC`` -> ``doc``; the zero (unspecified) value -> ``""``."""
    if number == 0:
        return ""
    value = enum.values_by_number.get(number)
    if value is None:
        raise ValueError(f"{number} is not a value of {enum.full_name}")
    return value.name.removeprefix(enum_prefix(enum)).lower()


def enum_words(enum: Any) -> list[str]:
    """``pb.Corpus`` -> ``["docs", "code"]``: every value but the zero one, as a short word."""
    descriptor = enum.DESCRIPTOR
    return [enum_word(descriptor, v.number) for v in descriptor.values[1:]]


def enum_value(enum: Any, word: str, what: str) -> int:
    """The value a short word names (any case, ``-`` for ``_``); an unknown one is refused
    with a ValueError that names the accepted words."""
    words = enum_words(enum)
    wanted = word.strip().lower().replace("-", "_")
    if wanted not in words:
        accepted = ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
        raise ValueError(f"unknown {what} {word!r}; use {accepted}")
    return enum.DESCRIPTOR.values[words.index(wanted) + 1].number


def fill_timestamp(value: datetime, target: Timestamp) -> None:
    """Fill ``target`` from ``value``; a naive datetime is taken as UTC."""
    target.FromDatetime(value if value.tzinfo is not None else value.replace(tzinfo=UTC))


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
