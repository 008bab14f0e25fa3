"""``GET /v1/search?q=…`` and ``GET /v1/content?location=…``: a request message from a URL.

Parameters are the request's fields (``top_k`` or ``topK``), ``q`` stands for ``query``;
lists take commas or repeated parameters, enums their short names (``kinds=docs,code``,
``mode=full``), booleans ``true``/``false``/``1``/``0``, and a timestamp a date or an RFC 3339
time. The message is then built by ``json_format``, so every check a POST gets applies.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from scriptorium.http.calls import Rpc, parse_dict
from scriptorium.http.errors import invalid
from scriptorium.text.quoting import clipped

ALIASES = {"q": "query"}
_TRUE = {"", "1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_INTEGERS = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SINT64,
}


def _fields(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    out: dict[str, FieldDescriptor] = {}
    for field in descriptor.fields:
        out[field.name] = field
        out[field.json_name] = field
    return out


def request_from_query(rpc: Rpc, params: Iterable[tuple[str, str]]) -> Message:
    """The ``rpc`` request the query parameters describe; INVALID_ARGUMENT for any other."""
    fields = _fields(rpc.request.DESCRIPTOR)
    values: dict[str, list[str]] = {}
    for key, value in params:
        name = ALIASES.get(key, key)
        field = fields.get(name)
        if field is None:
            known = sorted({f.name for f in fields.values()} | set(ALIASES))
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise invalid(f"unknown parameter {clipped(key)}; {hint}known: {', '.join(known)}")
        values.setdefault(field.name, []).append(value)
    data: dict[str, Any] = {}
    for name, given in values.items():
        field = rpc.request.DESCRIPTOR.fields_by_name[name]
        data[field.json_name] = _value(field, given)
    return parse_dict(rpc, data)


def _value(field: FieldDescriptor, given: list[str]) -> Any:
    if field.is_repeated:
        items = [part.strip() for value in given for part in value.split(",") if part.strip()]
        return [_scalar(field, item) for item in items]
    if len(given) > 1:
        raise invalid(f"parameter {field.name!r} is given {len(given)} times; it takes one value")
    return _scalar(field, given[0])


def _scalar(field: FieldDescriptor, text: str) -> Any:
    if field.type == FieldDescriptor.TYPE_BOOL:
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise invalid(f"parameter {field.name!r} must be true or false, got {text[:40]!r}")
    if field.type in _INTEGERS:
        try:
            return int(text.strip())
        except ValueError:
            raise invalid(f"parameter {field.name!r} must be an integer") from None
    if field.type == FieldDescriptor.TYPE_ENUM:
        return _enum(field, text)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.full_name == "google.protobuf.Timestamp":
            text = text.strip()
            return f"{text}T00:00:00Z" if len(text) == 10 else text
        raise invalid(f"parameter {field.name!r} cannot be given in a URL; POST the request")
    return text


def _enum(field: FieldDescriptor, text: str) -> str | int:
    """``docs`` for ``CORPUS_DOCS``: the value's name without the enum's prefix, any case."""
    enum = field.enum_type
    names: Mapping[str, Any] = enum.values_by_name
    wanted = text.strip().upper()
    if wanted in names:
        return wanted
    prefix = next(iter(names)).rsplit("_", 1)[0] + "_"  # CORPUS_UNSPECIFIED -> CORPUS_
    for name in names:
        if name.startswith(prefix) and name[len(prefix) :] == wanted:
            return name
    short = [n[len(prefix) :].lower() for n in names if not n.endswith("_UNSPECIFIED")]
    raise invalid(f"parameter {field.name!r} must be one of {', '.join(short)}, got {text[:40]!r}")
