"""Each language's conventions for a definition's name, kind and qualified name.

A qualified name joins a definition's enclosing scopes with the separator its language writes:
``Type::method`` in Rust and C++, ``Module::Class#method`` (``.method`` for singleton methods) in
Ruby, ``Namespace\\Class::method`` in PHP, ``Outer.inner`` everywhere else. Locations accept the
dotted form for every language too (see ``scriptorium.content.symbols``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

# Kinds whose nested functions are methods.
CONTAINER_KINDS = frozenset(
    {"class", "struct", "union", "interface", "trait", "impl", "object", "enum", "extension"}
)
_SCOPE_JOINERS = {"rust": "::", "cpp": "::", "ruby": "::", "php": "\\"}
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_GO_RECEIVER = re.compile(r"\(\s*(?:\w+\s+)?\*?\s*(\w+)")
# Declarator nodes that carry the name of a C/C++ function.
_C_NAMES = frozenset(
    {
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
        "template_function",
    }
)
_SWIFT_KINDS = frozenset({"class", "struct", "enum", "extension", "actor"})


@dataclass(slots=True)
class Naming:
    """What the language says about one definition."""

    name: str
    kind: str
    qualifier: tuple[str, ...] = ()  # scopes written into the name itself (``Type::``, receiver)
    label: str | None = None  # the definition's own segment when it differs from ``name``
    joiner: str = "."  # the separator written before this definition's segment


def text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def scope_joiner(language: str) -> str:
    """The separator a language writes between nested scopes."""
    return _SCOPE_JOINERS.get(language, ".")


def definition_name(node: Node, language: str) -> str:
    """A definition's name when the query has no ``@name`` (C/C++ functions, Swift ``init``)."""
    if node.type == "init_declaration":
        return "init"
    current: Node | None = node.child_by_field_name("declarator")
    while current is not None and current.type not in _C_NAMES:
        inner = current.child_by_field_name("declarator")
        if inner is None and current.named_children:
            inner = current.named_children[-1 if current.type != "function_declarator" else 0]
        current = inner
    return text(current)


def refine(node: Node, name: str, kind: str, parent_kind: str | None, language: str) -> Naming:
    """The name, kind, qualifier and separator the language gives this definition."""
    naming = Naming(name=name, kind=kind, joiner=scope_joiner(language))
    if kind == "function" and parent_kind in CONTAINER_KINDS:
        naming.kind = "method"
    if (
        naming.kind == "method"
        and name == "constructor"
        and language in ("javascript", "typescript", "tsx")
    ):
        naming.kind = "constructor"
    refiner = _REFINERS.get(language)
    if refiner is not None:
        refiner(node, naming, parent_kind)
    return naming


def _split(naming: Naming, separator: str) -> None:
    """``a::b::name`` written as one name: ``name`` with the scopes as its qualifier."""
    cleaned = name = naming.name
    while True:
        cleaned = _TEMPLATE_ARGS.sub("", name)
        if cleaned == name:
            break
        name = cleaned
    parts = [p.strip() for p in cleaned.split(separator) if p.strip()]
    if parts:
        naming.name = parts[-1]
        naming.qualifier = tuple(parts[:-1])


def _go(node: Node, naming: Naming, parent_kind: str | None) -> None:
    if naming.kind == "method":
        match = _GO_RECEIVER.match(text(node.child_by_field_name("receiver")))
        if match:
            naming.qualifier = (match.group(1),)
    if naming.kind == "type":
        type_node = node.child_by_field_name("type")
        kind = type_node.type if type_node is not None else ""
        naming.kind = {"struct_type": "struct", "interface_type": "interface"}.get(kind, "type")


def _rust(node: Node, naming: Naming, parent_kind: str | None) -> None:
    if naming.kind != "impl":
        return
    _split(naming, "::")
    naming.qualifier = ()  # ``impl fmt::Display for Point`` scopes its methods under Point
    trait = node.child_by_field_name("trait")
    if trait is not None:
        trait_name = _TEMPLATE_ARGS.sub("", text(trait)).rsplit("::", 1)[-1]
        naming.label = f"impl {trait_name} for {naming.name}"
    else:
        naming.label = f"impl {naming.name}"


def _c_family(node: Node, naming: Naming, parent_kind: str | None) -> None:
    _split(naming, "::")
    if naming.kind == "method" and naming.name.startswith("~"):
        naming.kind = "destructor"


def _csharp(node: Node, naming: Naming, parent_kind: str | None) -> None:
    if naming.kind == "namespace":
        _split(naming, ".")


def _ruby(node: Node, naming: Naming, parent_kind: str | None) -> None:
    if naming.kind in ("class", "module"):
        _split(naming, "::")
    elif naming.kind == "method":
        naming.joiner = "#"
    elif naming.kind == "singleton_method":
        naming.kind, naming.joiner = "method", "."


def _php(node: Node, naming: Naming, parent_kind: str | None) -> None:
    if naming.kind == "namespace":
        _split(naming, "\\")
    elif naming.kind == "method":
        naming.joiner = "::"


def _kotlin(node: Node, naming: Naming, parent_kind: str | None) -> None:
    if naming.kind != "class":
        return
    keywords = {child.type for child in node.children}
    if "interface" in keywords:
        naming.kind = "interface"
    elif any(child.type == "enum_class_body" for child in node.named_children):
        naming.kind = "enum"


def _swift(node: Node, naming: Naming, parent_kind: str | None) -> None:
    if naming.kind != "class":
        return
    keyword = next((c.type for c in node.children if c.type in _SWIFT_KINDS), "class")
    naming.kind = keyword
    if keyword == "extension":
        naming.label = f"extension {naming.name}"


_REFINERS = {
    "go": _go,
    "rust": _rust,
    "c": _c_family,
    "cpp": _c_family,
    "csharp": _csharp,
    "ruby": _ruby,
    "php": _php,
    "kotlin": _kotlin,
    "swift": _swift,
}
