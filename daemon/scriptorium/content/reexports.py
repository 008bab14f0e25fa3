"""A package's re-exports: which public name of a file is defined in which other file.

People name a definition by its public name (``httpx.Client``, ``pydantic.BaseModel``), which
the package's entry file imports from where it lives (``httpx/_client.py``). This module reads
those statements and turns each into the files it may point to, so a location that names a
public name finds its definition (the ``re-export`` rule):

- Python: ``from ._client import Client`` (aliases, relative and absolute, also under
  ``if TYPE_CHECKING:`` or ``try:``), ``from .errors import *``, lazy import tables
  (``{"BaseModel": (__spec__.parent, ".main")}``) and ``__all__``;
- TypeScript and JavaScript: ``export { A, B as C } from "./a"``, ``export * from "./a"``,
  and ``import { A } from "./a"`` followed by ``export { A }``;
- Rust: ``pub use self::a::{A, B as C}``, ``pub use crate::a::*``.

Only the statements are read (text, no execution); what they point to is looked up in the
served index, so nothing outside a source root is ever read.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field

STAR = "*"
_TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")
_TS_EXPORT_FROM = re.compile(
    r"export\s+(?:type\s+)?(\{[^}]*\}|\*(?:\s+as\s+\w+)?)\s*from\s*['\"]([^'\"]+)['\"]"
)
_TS_IMPORT = re.compile(r"import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['\"]([^'\"]+)['\"]")
_TS_EXPORT_LIST = re.compile(r"export\s+(?:type\s+)?\{([^}]*)\}\s*(?!\s*from)[;\n]")
_RUST_PUB_USE = re.compile(r"^\s*pub\s+use\s+([^;]+);", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Export:
    """``name`` (public here, or ``*``) is ``original`` in the module ``module`` points to."""

    name: str
    original: str
    targets: tuple[str, ...] = ()  # candidate file paths from the source root, best first
    module: str = ""  # an absolute Python module name, looked up by the resolver


@dataclass(slots=True)
class Exports:
    """What a file re-exports and the names it declares public (``__all__``)."""

    items: list[Export] = field(default_factory=list)
    public: list[str] = field(default_factory=list)

    def named(self, name: str) -> list[Export]:
        """The exports that may define ``name``: the ones naming it, then the star ones."""
        exact = [e for e in self.items if e.name == name]
        return exact + [e for e in self.items if e.name == STAR]

    def names(self) -> list[str]:
        return list(dict.fromkeys([*self.public, *(e.name for e in self.items if e.name != STAR)]))


def read_exports(path: str, language: str | None, text: str) -> Exports:
    """The re-exports of the file at ``path`` (empty for a language without them)."""
    if language == "python" or path.endswith((".py", ".pyi")):
        return _python(path, text)
    if path.endswith(_TS_SUFFIXES) or language in ("typescript", "javascript", "tsx"):
        return _typescript(path, text)
    if language == "rust" or path.endswith(".rs"):
        return _rust(path, text)
    return Exports()


# -- Python --------------------------------------------------------------------------------------


def _python(path: str, text: str) -> Exports:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return Exports()
    out = Exports()
    for node in _module_level(tree.body):
        if isinstance(node, ast.ImportFrom):
            targets, module = _python_targets(path, node.level, node.module or "")
            for alias in node.names:
                public = alias.asname or alias.name
                out.items.append(Export(public, alias.name, targets, module))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            _python_assignment(path, node, out)
    return out


def _module_level(body: list[ast.stmt]):
    """Module-level statements, through ``if`` and ``try`` blocks (TYPE_CHECKING, fallbacks)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _module_level(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _module_level(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                yield from _module_level(handler.body)


def _python_assignment(path: str, node: ast.stmt, out: Exports) -> None:
    target = node.targets[0] if isinstance(node, ast.Assign) else node.target
    value = node.value
    if not isinstance(target, ast.Name) or value is None:
        return
    if target.id == "__all__" and isinstance(value, (ast.List, ast.Tuple)):
        out.public += [e.value for e in value.elts if isinstance(e, ast.Constant)]
        return
    if not isinstance(value, ast.Dict):
        return
    # A lazy import table: {"Name": (package, ".module"), ...}.
    for key, entry in zip(value.keys, value.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        if not isinstance(entry, ast.Tuple) or not entry.elts:
            continue
        last = entry.elts[-1]
        if isinstance(last, ast.Constant) and isinstance(last.value, str):
            spec = last.value
            if spec.startswith("."):
                level = len(spec) - len(spec.lstrip("."))
                targets, module = _python_targets(path, level, spec.lstrip("."))
                out.items.append(Export(key.value, key.value, targets, module))


def _python_targets(path: str, level: int, module: str) -> tuple[tuple[str, ...], str]:
    """The files a ``from`` import points to: relative ones as paths, absolute ones by name."""
    if level == 0:
        return (), module
    package = posixpath.dirname(path)
    for _ in range(level - 1):
        package = posixpath.dirname(package)
    base = posixpath.join(package, *module.split(".")) if module else package
    if not module:
        return (posixpath.join(base, "__init__.py"),), ""
    return (f"{base}.py", f"{base}.pyi", posixpath.join(base, "__init__.py")), ""


# -- TypeScript and JavaScript -------------------------------------------------------------------


def _typescript(path: str, text: str) -> Exports:
    out = Exports()
    imported: dict[str, tuple[str, tuple[str, ...]]] = {}
    for match in _TS_IMPORT.finditer(text):
        targets = _ts_targets(path, match.group(2))
        for local, original in _ts_names(match.group(1)):
            imported[local] = (original, targets)
    for match in _TS_EXPORT_FROM.finditer(text):
        what, spec = match.group(1), match.group(2)
        targets = _ts_targets(path, spec)
        if what.startswith("*"):
            if " as " not in what:
                out.items.append(Export(STAR, STAR, targets))
            continue
        for public, original in _ts_names(what):
            out.items.append(Export(public, original, targets))
    for match in _TS_EXPORT_LIST.finditer(text):
        for public, local in _ts_names(match.group(1)):
            if local in imported:
                original, targets = imported[local]
                out.items.append(Export(public, original, targets))
    return out


def _ts_names(inside: str) -> list[tuple[str, str]]:
    """``{ A, type B, C as D }`` -> [(A, A), (B, B), (D, C)]: (public, original)."""
    names = []
    for item in inside.strip("{} \n").split(","):
        words = item.replace("type ", " ").split()
        if not words:
            continue
        original = words[0]
        public = words[2] if len(words) == 3 and words[1] == "as" else original
        names.append((public, original))
    return names


def _ts_targets(path: str, spec: str) -> tuple[str, ...]:
    if not spec.startswith("."):
        return ()  # a package: not in this tree
    base = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
    stem = re.sub(r"\.(?:m|c)?js$", "", base)
    files = [base] + [stem + s for s in _TS_SUFFIXES]
    return tuple(files + [posixpath.join(base, "index" + s) for s in _TS_SUFFIXES])


# -- Rust ----------------------------------------------------------------------------------------


def _rust(path: str, text: str) -> Exports:
    out = Exports()
    for match in _RUST_PUB_USE.finditer(text):
        for module, original, public in _rust_paths(" ".join(match.group(1).split())):
            out.items.append(Export(public, original, _rust_targets(path, module)))
    return out


def _rust_paths(tree: str, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str, str]]:
    """``a::{B, c::D as E, *}`` -> [((a,), B, B), ((a, c), D, E), ((a,), *, *)]."""
    tree = tree.strip()
    if "{" in tree:
        head, _, rest = tree.partition("{")
        inner = rest.rsplit("}", 1)[0]
        segments = prefix + tuple(s for s in head.strip().rstrip(":").split("::") if s)
        return [p for part in _split_top(inner) for p in _rust_paths(part, segments)]
    name, _, alias = tree.partition(" as ")
    segments = prefix + tuple(s.strip() for s in name.split("::") if s.strip())
    if not segments or segments[-1] == "self":
        return []
    original = segments[-1]
    return [(segments[:-1], original, alias.strip() or original)]


def _split_top(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in inner:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [p for p in [*parts, current] if p.strip()]


def _rust_targets(path: str, module: tuple[str, ...]) -> tuple[str, ...]:
    here = posixpath.dirname(path)
    name = posixpath.basename(path)
    current = here if name in ("lib.rs", "main.rs", "mod.rs") else posixpath.join(here, name[:-3])
    segments = list(module)
    if segments and segments[0] == "crate":
        base = _crate_root(here)
        segments = segments[1:]
    else:
        base = current
        if segments and segments[0] == "self":
            segments = segments[1:]
        while segments and segments[0] == "super":
            base = posixpath.dirname(base)
            segments = segments[1:]
    if not segments:
        candidates = [posixpath.join(base, "mod.rs"), base + ".rs"]
        if base == _crate_root(here):
            candidates = [posixpath.join(base, "lib.rs"), posixpath.join(base, "main.rs")]
        return tuple(candidates)
    target = posixpath.join(base, *segments)
    return (target + ".rs", posixpath.join(target, "mod.rs"))


def _crate_root(directory: str) -> str:
    """The crate's ``src`` folder: the nearest ancestor named ``src`` (else the file's folder)."""
    parts = directory.split("/")
    for i in range(len(parts), 0, -1):
        if parts[i - 1] == "src":
            return "/".join(parts[:i])
    return directory
