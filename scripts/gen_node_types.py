#!/usr/bin/env python3
"""Generate the Node client's message types (clients/node/messages.d.ts) from the contract.

Usage: scripts/gen_node_types.py [OUT]   (default: clients/node/messages.d.ts; `make gen` runs it)

The client loads proto/ at run time with proto-loader (keepCase, enums: String, longs: Number,
defaults: true), so a message in TypeScript is the proto's message with snake_case fields, enums
as their names, 64-bit integers as numbers, and unset message fields as null. This reads the
contract with the same grpc_tools protoc the Python stubs come from (keeping the proto comments,
which become the doc comments) and writes those interfaces, so they cannot drift from proto/.
tests/unit/test_node_types_fresh.py regenerates the file and fails when the committed one is stale.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from google.protobuf import descriptor_pb2 as d
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[1]
PROTO_DIR = ROOT / "proto"
CONTRACT = "scriptorium/v1/retrieval.proto"
DEFAULT_OUT = ROOT / "clients" / "node" / "messages.d.ts"
WIDTH = 100

# Where FileDescriptorProto / DescriptorProto / EnumDescriptorProto keep their parts, for the
# source locations that carry the comments.
_MESSAGES, _ENUMS, _FIELDS, _VALUES = 4, 5, 2, 2

_F = d.FieldDescriptorProto
_NUMBER_TYPES = {
    _F.TYPE_DOUBLE,
    _F.TYPE_FLOAT,
    _F.TYPE_INT32,
    _F.TYPE_INT64,
    _F.TYPE_UINT32,
    _F.TYPE_UINT64,
    _F.TYPE_SINT32,
    _F.TYPE_SINT64,
    _F.TYPE_FIXED32,
    _F.TYPE_FIXED64,
    _F.TYPE_SFIXED32,
    _F.TYPE_SFIXED64,
}
_SCALARS = {**dict.fromkeys(_NUMBER_TYPES, "number"), _F.TYPE_BOOL: "boolean"}
_SCALARS |= {_F.TYPE_STRING: "string", _F.TYPE_BYTES: "Buffer"}

# proto3 cannot mark a field required; these are the request fields the client's callers must
# give (the daemon refuses the call without them), so they are not optional in the types.
REQUIRED = {
    "SearchRequest": {"query"},
    "ExpandRelatedRequest": {"ref_ids"},
    "GuideImplementationRequest": {"topic"},
}
# Request fields the client converts before sending (index.js: search() runs toTimestamp).
CONVERTED = {
    ("SearchRequest", "as_of"): (
        "Date | number | Timestamp",
        "Takes a Date or epoch milliseconds too; the client converts them.",
    ),
}

HEADER = """\
// Generated from proto/scriptorium/v1/retrieval.proto by scripts/gen_node_types.py (make gen).
// Do not edit: tests/unit/test_node_types_fresh.py fails when this file is stale.
//
// Messages as @scriptorium/client sends and receives them: snake_case field names, enums as
// their string names, 64-bit integers as numbers. A response carries every field (unset ones
// with their defaults, unset messages as null); a request takes any subset of its fields (the
// required ones aside), with enums as names or numbers.
"""


def load(proto_dir: Path = PROTO_DIR) -> d.FileDescriptorSet:
    """The contract and its imports, with source info (comments), as protoc parses them."""
    include = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "contract.pb"
        args = ["protoc", f"-I{proto_dir}", f"-I{include}", "--include_imports"]
        args += ["--include_source_info", f"--descriptor_set_out={out}", CONTRACT]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc could not read {proto_dir / CONTRACT}")
        return d.FileDescriptorSet.FromString(out.read_bytes())


def _comments(file: d.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    return {
        tuple(loc.path): loc.leading_comments.strip("\n")
        for loc in file.source_code_info.location
        if loc.leading_comments.strip()
    }


def _doc(text: str, indent: str = "") -> list[str]:
    """A JSDoc block for a proto comment (one line when it fits)."""
    lines = [line.removeprefix(" ").rstrip() for line in text.splitlines()]
    if not lines:
        return []
    if len(lines) == 1 and len(f"{indent}/** {lines[0]} */") <= WIDTH:
        return [f"{indent}/** {lines[0]} */"]
    body = [f"{indent} *{' ' + line if line else ''}" for line in lines]
    return [f"{indent}/**", *body, f"{indent} */"]


def _short(type_name: str) -> str:
    """``.scriptorium.v1.RefKind`` -> ``RefKind``: one namespace, clashes refused up front."""
    return type_name.rsplit(".", 1)[-1]


class Generator:
    """The TypeScript text of one contract file and the imported messages it refers to."""

    def __init__(self, files: d.FileDescriptorSet) -> None:
        by_name = {f.name: f for f in files.file}
        self.file = by_name[CONTRACT]
        self.comments = _comments(self.file)
        self.requests = {
            _short(m.input_type) for service in self.file.service for m in service.method
        }
        self.imported = [
            (f".{f.package}.{m.name}", m)
            for f in files.file
            if f.name != CONTRACT
            for m in f.message_type
        ]
        names = [m.name for m in self.file.message_type] + [e.name for e in self.file.enum_type]
        clashes = {_short(full) for full, _ in self.imported} & set(names)
        if len(set(names)) != len(names) or clashes:
            raise SystemExit(f"type names would clash in TypeScript: {sorted(clashes)}")
        fields = {(m.name, f.name) for m in self.file.message_type for f in m.field}
        named = {(m, f) for m, names in REQUIRED.items() for f in names} | set(CONVERTED)
        if named - fields:
            raise SystemExit(f"REQUIRED/CONVERTED name fields the contract lacks: {named - fields}")

    def render(self) -> str:
        blocks = [HEADER.rstrip("\n")]
        blocks += [self._enum(i, e) for i, e in enumerate(self.file.enum_type)]
        blocks += [self._words(e) for e in self.file.enum_type if e.name in self._request_enums()]
        used = {f.type_name for m in self.file.message_type for f in m.field}
        blocks += [
            self._message(message, (), request=False)
            for full, message in self.imported
            if full in used
        ]
        blocks += [
            self._message(message, (_MESSAGES, i), request=message.name in self.requests)
            for i, message in enumerate(self.file.message_type)
        ]
        return "\n\n".join(blocks) + "\n"

    def _enum(self, index: int, enum: d.EnumDescriptorProto) -> str:
        path = (_ENUMS, index)
        lines = _doc(self.comments.get(path, ""))
        values = list(self._enum_values(path, enum))
        one_line = f"export type {enum.name} = {' | '.join(v for v, _ in values)};"
        if len(one_line) <= WIDTH and not any(doc for _, doc in values):
            return "\n".join([*lines, one_line])
        lines.append(f"export type {enum.name} =")
        for value, doc in values:
            lines += [f"  // {line}".rstrip() for line in doc.splitlines()]
            lines.append(f"  | {value}")
        lines[-1] += ";"
        return "\n".join(lines)

    def _request_enums(self) -> set[str]:
        """Enums some request field takes: the client accepts their short words too."""
        return {
            _short(f.type_name)
            for m in self.file.message_type
            if m.name in self.requests
            for f in m.field
            if f.type == _F.TYPE_ENUM
        }

    def _words(self, enum: d.EnumDescriptorProto) -> str:
        """``CORPUS_DOCS`` -> ``'docs'``: the words the client maps to values (any case)."""
        prefix = enum.value[0].name.removesuffix("UNSPECIFIED")
        words = [f"'{v.name.removeprefix(prefix).lower()}'" for v in enum.value[1:]]
        doc = (
            f"// {enum.name} in a request may also be one of these words (any case, '-' for '_');"
            "\n// an unknown word rejects with a RangeError naming them, before anything is sent."
        )
        return f"{doc}\nexport type {enum.name}Word = {' | '.join(words)};"

    def _enum_values(
        self, path: tuple[int, ...], enum: d.EnumDescriptorProto
    ) -> Iterator[tuple[str, str]]:
        """Each value quoted, with its comment (one line per comment line)."""
        for j, value in enumerate(enum.value):
            doc = self.comments.get((*path, _VALUES, j), "")
            yield f"'{value.name}'", "\n".join(line.strip() for line in doc.splitlines())

    def _message(self, message: d.DescriptorProto, path: tuple[int, ...], *, request: bool) -> str:
        doc = self.comments.get(path, "") if path else f"google.protobuf.{message.name}"
        lines = _doc(doc)
        if not message.field:
            return "\n".join([*lines, f"export interface {message.name} {{}}"])
        lines.append(f"export interface {message.name} {{")
        for j, field in enumerate(message.field):
            comment = self.comments.get((*path, _FIELDS, j), "") if path else ""
            ts_type, note = self._field_type(message.name, field, request=request)
            if note:
                comment = f"{comment}\n{note}" if comment else note
            lines += _doc(comment, "  ")
            optional = request and field.name not in REQUIRED.get(message.name, set())
            lines.append(f"  {field.name}{'?' if optional else ''}: {ts_type};")
        lines.append("}")
        return "\n".join(lines)

    def _field_type(
        self, message: str, field: d.FieldDescriptorProto, *, request: bool
    ) -> tuple[str, str]:
        """The field's TypeScript type, and a note for its doc comment."""
        if request and (message, field.name) in CONVERTED:
            return CONVERTED[(message, field.name)]
        repeated = field.label == _F.LABEL_REPEATED
        if field.type == _F.TYPE_ENUM:
            name = _short(field.type_name)
            element = f"{name} | {name}Word | number" if request else name
        elif field.type == _F.TYPE_MESSAGE:
            element = _short(field.type_name)
            if not (request or repeated):
                return f"{element} | null", ""
        else:
            element = _SCALARS[field.type]
        if not repeated:
            return element, ""
        return (f"Array<{element}>" if "|" in element else f"{element}[]"), ""


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUT
    out.write_text(Generator(load()).render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
