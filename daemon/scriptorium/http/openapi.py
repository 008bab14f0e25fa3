"""The OpenAPI description of the HTTP API, built from the proto descriptors when asked.

Nothing here is written by hand per message: paths come from the service's methods, schemas
from the messages' fields under the proto3 JSON mapping (lowerCamelCase names, 64-bit integers
as strings, enums as their names, Timestamp as an RFC 3339 string), and the comments of
``retrieval.proto`` when the descriptors carry them. A field added to the proto appears here
without a change to this module.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import (
    Descriptor,
    EnumDescriptor,
    FieldDescriptor,
    FileDescriptor,
    ServiceDescriptor,
)

from scriptorium import __version__
from scriptorium.http.calls import SERVICE
from scriptorium.http.errors import HTTP_STATUS
from scriptorium.http.query import ALIASES

OPENAPI_VERSION = "3.1.0"
F = FieldDescriptor
_SCALARS: dict[int, dict[str, Any]] = {
    F.TYPE_DOUBLE: {"type": "number", "format": "double"},
    F.TYPE_FLOAT: {"type": "number", "format": "float"},
    F.TYPE_INT32: {"type": "integer", "format": "int32"},
    F.TYPE_SINT32: {"type": "integer", "format": "int32"},
    F.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    F.TYPE_UINT32: {"type": "integer", "format": "int64", "minimum": 0},
    F.TYPE_FIXED32: {"type": "integer", "format": "int64", "minimum": 0},
    # proto3 JSON writes 64-bit integers as strings (and reads either).
    F.TYPE_INT64: {"type": ["string", "integer"], "format": "int64"},
    F.TYPE_SINT64: {"type": ["string", "integer"], "format": "int64"},
    F.TYPE_SFIXED64: {"type": ["string", "integer"], "format": "int64"},
    F.TYPE_UINT64: {"type": ["string", "integer"], "format": "uint64"},
    F.TYPE_FIXED64: {"type": ["string", "integer"], "format": "uint64"},
    F.TYPE_BOOL: {"type": "boolean"},
    F.TYPE_STRING: {"type": "string"},
    F.TYPE_BYTES: {"type": "string", "contentEncoding": "base64"},
}
_WELL_KNOWN: dict[str, dict[str, Any]] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A failed call: the gRPC status name and number, its message and, when the "
    "daemon gives one, the Resolution that says why (not found, ambiguous with candidates, ...).",
    "required": ["status", "code", "message"],
    "properties": {
        "status": {"type": "string", "enum": list(HTTP_STATUS)},
        "code": {"type": "integer"},
        "message": {"type": "string"},
        "resolution": {"$ref": "#/components/schemas/scriptorium.v1.Resolution"},
    },
}
# The GET forms for people with curl: path, RPC, and what it is for.
GET_FORMS = (
    ("/v1/search", "Search", "Search with the request's fields as query parameters (q=query)."),
    ("/v1/content", "GetContent", "GetContent with the request's fields as query parameters."),
)


def _comments(
    file: FileDescriptor, proto: descriptor_pb2.FileDescriptorProto | None
) -> dict[str, str]:
    """Leading comments by descriptor path, when the file's descriptor kept its source info
    (the generated module's does not; a descriptor set compiled with it does)."""
    if proto is None:
        proto = descriptor_pb2.FileDescriptorProto.FromString(file.serialized_pb)
    out: dict[str, str] = {}
    for location in proto.source_code_info.location:
        if location.leading_comments:
            out[".".join(map(str, location.path))] = location.leading_comments.strip()
    return out


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


class _Schemas:
    """Collects the schema of every message and enum reachable from the service."""

    def __init__(self, comments: dict[str, str]) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}
        self._comments = comments

    def message(self, descriptor: Descriptor) -> dict[str, str]:
        name = descriptor.full_name
        if name in _WELL_KNOWN:
            return dict(_WELL_KNOWN[name])
        if name not in self.schemas:
            self.schemas[name] = {}  # placeholder: recursive messages stop here
            properties = {f.json_name: self._described(descriptor, f) for f in descriptor.fields}
            self.schemas[name] = {
                "type": "object",
                "additionalProperties": False,
                "properties": properties,
            }
        return _ref(name)

    def _described(self, message: Descriptor, field: FieldDescriptor) -> dict[str, Any]:
        schema = self.field(field)
        if message.containing_type is None:  # top-level messages: path 4.<message>.2.<field>
            index = list(message.file.message_types_by_name).index(message.name)
            about = self._comments.get(f"4.{index}.2.{field.index}")
            if about:
                schema = {**schema, "description": about}
        return schema

    def enum(self, descriptor: EnumDescriptor) -> dict[str, str]:
        name = descriptor.full_name
        if name not in self.schemas:
            self.schemas[name] = {
                "type": ["string", "integer"],
                "description": "The value's name; its number is accepted too.",
                "enum": [v.name for v in descriptor.values] + [v.number for v in descriptor.values],
            }
        return _ref(name)

    def field(self, field: FieldDescriptor) -> dict[str, Any]:
        if field.type == F.TYPE_MESSAGE:
            item: dict[str, Any] = self.message(field.message_type)
        elif field.type == F.TYPE_ENUM:
            item = self.enum(field.enum_type)
        else:
            item = dict(_SCALARS[field.type])
        repeated = field.is_repeated
        return {"type": "array", "items": item} if repeated else item


def _error_responses() -> dict[str, Any]:
    error = {"application/json": {"schema": _ref("Error")}}
    return {
        "400": {"description": "INVALID_ARGUMENT (or FAILED_PRECONDITION)", "content": error},
        "401": {"description": "UNAUTHENTICATED: missing or wrong bearer token", "content": error},
        "404": {"description": "NOT_FOUND, with a Resolution", "content": error},
        "413": {"description": "RESOURCE_EXHAUSTED: the body is too large", "content": error},
        "429": {"description": "RESOURCE_EXHAUSTED: at the concurrency limit", "content": error},
        "503": {"description": "UNAVAILABLE: still loading, or a site is down", "content": error},
        "default": {"description": "any other gRPC status", "content": error},
    }


def _query_parameters(descriptor: Descriptor, schemas: _Schemas) -> list[dict[str, Any]]:
    aliases = {v: k for k, v in ALIASES.items()}
    out = []
    for field in descriptor.fields:
        schema = schemas.field(field)
        if schema.get("type") == "array":
            schema = {"type": "string", "description": "comma-separated, or the parameter again"}
        out.append({"name": aliases.get(field.name, field.name), "in": "query", "schema": schema})
    return out


def openapi_document(
    service: ServiceDescriptor = SERVICE,
    source: descriptor_pb2.FileDescriptorProto | None = None,
) -> dict[str, Any]:
    """The whole description of ``service``, as ``GET /openapi.json`` serves it; ``source``
    is the service's file with source info, for descriptions from the proto's comments."""
    comments = _comments(service.file, source)
    schemas = _Schemas(comments)
    paths: dict[str, Any] = {}
    for index, method in enumerate(service.methods):
        about = comments.get(f"6.{service.index}.2.{index}", "")
        paths[f"/v1/{method.name}"] = {
            "post": {
                "operationId": method.name,
                "summary": about.splitlines()[0] if about else method.name,
                "description": about,
                "requestBody": {
                    "required": False,
                    "content": {"application/json": {"schema": schemas.message(method.input_type)}},
                },
                "responses": {
                    "200": {
                        "description": f"{method.output_type.name} in the proto3 JSON mapping",
                        "content": {
                            "application/json": {"schema": schemas.message(method.output_type)}
                        },
                    },
                    **_error_responses(),
                },
            }
        }
    for path, name, summary in GET_FORMS:
        method = service.methods_by_name[name]
        paths[path] = {
            "get": {
                "operationId": f"{name}Get",
                "summary": summary,
                "parameters": _query_parameters(method.input_type, schemas),
                "responses": {
                    "200": {
                        "description": f"{method.output_type.name} in the proto3 JSON mapping",
                        "content": {
                            "application/json": {"schema": schemas.message(method.output_type)}
                        },
                    },
                    **_error_responses(),
                },
            }
        }
    health = {"application/json": {"schema": {"type": "object"}}}
    paths["/healthz"] = {
        "get": {
            "summary": "Alive; the body says SERVING or NOT_SERVING",
            "responses": {"200": {"description": "the process answers", "content": health}},
        }
    }
    paths["/readyz"] = {
        "get": {
            "summary": "Ready to serve",
            "parameters": [
                {
                    "name": "current",
                    "in": "query",
                    "required": False,
                    "description": "present: ready only once answers are current (the start-up "
                    "catch-up with the roots has landed)",
                    "schema": {"type": "string"},
                }
            ],
            "responses": {
                "200": {"description": "SERVING", "content": health},
                "503": {"description": "NOT_SERVING: loading or draining", "content": health},
            },
        }
    }
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Scriptorium HTTP/JSON API",
            "version": __version__,
            "description": f"Every RPC of {service.full_name} as POST /v1/<Rpc>, the request and "
            "response in protobuf's canonical JSON mapping. Generated from the proto descriptors.",
        },
        "components": {
            "schemas": {**dict(sorted(schemas.schemas.items())), "Error": ERROR_SCHEMA},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
        "paths": paths,
    }
