"""Pydantic models derived from protobuf message descriptors, and one conversion into them.

The MCP tools that mirror an RPC publish the proto's own field names (snake_case) with enums as
short lower-case words. Deriving their models from the descriptors keeps the published schemas
in step with the contract instead of with a hand-typed copy of it; what a tool deliberately
shows differently (fewer fields, extra ones, rounding, descriptions) is spelled out where the
model is derived.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC
from functools import cache, partial
from typing import Annotated, Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import AfterValidator, BaseModel, Field, create_model

from scriptorium.client._wire import enum_word

TIMESTAMP = Timestamp.DESCRIPTOR.full_name

_SCALARS: dict[int, type] = {
    FieldDescriptor.TYPE_DOUBLE: float,
    FieldDescriptor.TYPE_FLOAT: float,
    FieldDescriptor.TYPE_BOOL: bool,
    FieldDescriptor.TYPE_STRING: str,
    FieldDescriptor.TYPE_BYTES: bytes,
    **{
        kind: int
        for kind in (
            FieldDescriptor.TYPE_INT32,
            FieldDescriptor.TYPE_INT64,
            FieldDescriptor.TYPE_UINT32,
            FieldDescriptor.TYPE_UINT64,
            FieldDescriptor.TYPE_SINT32,
            FieldDescriptor.TYPE_SINT64,
            FieldDescriptor.TYPE_FIXED32,
            FieldDescriptor.TYPE_FIXED64,
            FieldDescriptor.TYPE_SFIXED32,
            FieldDescriptor.TYPE_SFIXED64,
        )
    },
}


def _rounded(kind: Any, digits: int | None) -> Any:
    if digits is None:
        return kind
    return Annotated[kind, AfterValidator(partial(round, ndigits=digits))]


def _field_type(field: FieldDescriptor, nested: type[BaseModel] | None) -> Any:
    """The Python type a field is published as (one element of it, when repeated)."""
    if field.enum_type is not None:
        return str
    if field.message_type is None:
        return _SCALARS[field.type]
    if field.message_type.full_name == TIMESTAMP:
        return str | None
    return nested or default_model(field.message_type)


def model_for(
    descriptor: Descriptor,
    *,
    name: str | None = None,
    doc: str | None = None,
    include: Sequence[str] | None = None,
    extra: Mapping[str, tuple[Any, Any]] | None = None,
    descriptions: Mapping[str, str] | None = None,
    nested: Mapping[str, type[BaseModel]] | None = None,
    digits: Mapping[str, int] | None = None,
    optional: bool = False,
) -> type[BaseModel]:
    """A pydantic model of ``descriptor``'s fields, named ``name`` (default ``<Message>Out``).

    ``include`` names the published fields in their published order (default: all, in proto
    order); a name in it may be one of ``extra`` (``name -> (type, default)``, taken as given).
    ``nested`` gives the model of a message field (default: derived with all its fields),
    ``digits`` rounds a float field, and ``optional`` makes every proto field ``T | None``
    defaulting to ``None``, for answers that carry only some of them.
    """
    extra = extra or {}
    descriptions = descriptions or {}
    nested = nested or {}
    digits = digits or {}
    by_name = descriptor.fields_by_name
    names = list(include) if include is not None else [f.name for f in descriptor.fields]
    unknown = [n for n in names if n not in by_name and n not in extra]
    unknown += [n for n in (*descriptions, *nested, *digits) if n not in by_name and n not in extra]
    if unknown:
        raise ValueError(f"{descriptor.full_name} has no field {', '.join(sorted(set(unknown)))}")
    fields: dict[str, Any] = {}
    for field_name in names:
        if field_name in extra:
            fields[field_name] = extra[field_name]
            continue
        field = by_name[field_name]
        kind = _rounded(_field_type(field, nested.get(field_name)), digits.get(field_name))
        if field.is_repeated:
            kind = list[kind]
        described = {"description": descriptions[field_name]} if field_name in descriptions else {}
        if optional:
            fields[field_name] = (kind | None, Field(None, **described))
        else:
            fields[field_name] = (kind, Field(**described))
    return create_model(name or f"{descriptor.name}Out", __doc__=doc, **fields)


@cache
def default_model(descriptor: Descriptor) -> type[BaseModel]:
    """The model of a nested message nobody described: all its fields, derived once."""
    return model_for(descriptor)


def shape(message: Message, model: type[BaseModel], **given: Any) -> BaseModel:
    """``message`` as ``model``: its fields by name, enums as words, Timestamps in ISO 8601.

    ``given`` supplies fields computed elsewhere (extras, or a field the tool merges itself);
    an extra not given keeps its default. Nested messages are converted whole and the nested
    model keeps the fields it publishes.
    """
    fields = message.DESCRIPTOR.fields_by_name
    values = {name: given[name] for name in model.model_fields if name in given}
    for name in model.model_fields:
        if name not in values and name in fields:
            values[name] = _value(message, fields[name])
    return model(**values)


def as_plain(message: Message) -> dict[str, Any]:
    """Every field of ``message`` as plain Python values."""
    return {field.name: _value(message, field) for field in message.DESCRIPTOR.fields}


def _value(message: Message, field: FieldDescriptor) -> Any:
    value = getattr(message, field.name)
    if field.is_repeated:
        return [_element(field, item) for item in value]
    if field.message_type is not None and field.message_type.full_name == TIMESTAMP:
        return _element(field, value) if message.HasField(field.name) else None
    return _element(field, value)


def _element(field: FieldDescriptor, value: Any) -> Any:
    if field.enum_type is not None:
        return enum_word(field.enum_type, value)
    if field.message_type is None:
        return value
    if field.message_type.full_name == TIMESTAMP:
        return value.ToDatetime(tzinfo=UTC).isoformat()
    return as_plain(value)
