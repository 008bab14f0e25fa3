"""Tree-sitter definition queries, one per language.

Every pattern captures the definition node as ``@definition.<kind>`` and, where the grammar has a
plain name field, its name as ``@name``; C and C++ functions name themselves through their
declarator chain (``naming.definition_name``). The extractor works out nesting, qualified names
and extents.
"""

from __future__ import annotations

_JS_DEFINITIONS = """
(function_declaration name: (_) @name) @definition.function
(generator_function_declaration name: (_) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function
"""

_TS_DEFINITIONS = (
    _JS_DEFINITIONS
    + """
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(internal_module name: (_) @name) @definition.namespace
"""
)

# Shared by C and C++: only specifiers with a body define a type (``struct s *p`` does not).
_C_DEFINITIONS = """
(function_definition) @definition.function
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.union
(enum_specifier name: (_) @name body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(preproc_function_def name: (identifier) @name) @definition.macro
"""

DEFINITION_QUERIES: dict[str, str] = {
    "python": """
(function_definition name: (identifier) @name) @definition.function
(class_definition name: (identifier) @name) @definition.class
""",
    "javascript": _JS_DEFINITIONS,
    "typescript": _TS_DEFINITIONS,
    "tsx": _TS_DEFINITIONS,
    "go": """
(function_declaration name: (identifier) @name) @definition.function
(method_declaration name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
""",
    "java": """
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
""",
    "rust": """
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(union_item name: (type_identifier) @name) @definition.union
(trait_item name: (type_identifier) @name) @definition.trait
(impl_item type: (_) @name) @definition.impl
(mod_item name: (identifier) @name body: (_)) @definition.module
(type_item name: (type_identifier) @name) @definition.type
(macro_definition name: (identifier) @name) @definition.macro
""",
    "c": _C_DEFINITIONS,
    "cpp": _C_DEFINITIONS
    + """
(class_specifier name: (_) @name body: (_)) @definition.class
(namespace_definition name: (_) @name) @definition.namespace
(alias_declaration name: (type_identifier) @name) @definition.type
(concept_definition name: (identifier) @name) @definition.type
""",
    "csharp": """
(namespace_declaration name: (_) @name) @definition.namespace
(file_scoped_namespace_declaration name: (_) @name) @definition.namespace
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.constructor
(property_declaration name: (identifier) @name) @definition.property
(delegate_declaration name: (identifier) @name) @definition.type
""",
    "ruby": """
(module name: (_) @name) @definition.module
(class name: (_) @name) @definition.class
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.singleton_method
""",
    "php": """
(namespace_definition name: (_) @name) @definition.namespace
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
""",
    "kotlin": """
(class_declaration name: (_) @name) @definition.class
(object_declaration name: (_) @name) @definition.object
(function_declaration name: (_) @name) @definition.function
(type_alias type: (_) @name) @definition.type
""",
    "swift": """
(class_declaration name: [(type_identifier) (user_type)] @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration) @definition.constructor
(typealias_declaration name: (type_identifier) @name) @definition.type
""",
    "scala": """
(class_definition name: (_) @name) @definition.class
(object_definition name: (_) @name) @definition.object
(trait_definition name: (_) @name) @definition.trait
(enum_definition name: (_) @name) @definition.enum
(function_definition name: (_) @name) @definition.function
(function_declaration name: (_) @name) @definition.function
(type_definition name: (_) @name) @definition.type
""",
    "shell": """
(function_definition name: (_) @name) @definition.function
""",
}
