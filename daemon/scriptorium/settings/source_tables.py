"""The ``[[sources]]`` tables and bare command-line paths, read into ``SourceConfig`` values.

Kept apart from ``config`` (which reads the rest of the file) because sources have the most
rules of their own: common keys beside each kind's, names that must be unique and usable in
locations, which source is the default, and the stems bare paths are named by.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scriptorium.domain.model import SourceClass
from scriptorium.settings.dependencies import dependency_source
from scriptorium.settings.schema import (
    ConfigError,
    Key,
    check_table,
    check_value,
    describe,
    table_of,
    unknown_key_message,
)
from scriptorium.settings.sourceconfig import SourceConfig

# Kinds that read a directory on this machine, so a ``root`` is required.
LOCAL_KINDS = frozenset({"markdown", "code", "dependencies"})


def resolve_path(value: Any, base: Path, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key} must be a non-empty path string")
    path = Path(value).expanduser()
    return (path if path.is_absolute() else base / path).resolve()


SOURCE_KEYS: tuple[Key, ...] = (
    Key("name", "string", None, "the source's name; non-default sources qualify locations"),
    Key("kind", "string", None, "which plugin reads it: markdown, code, mkdocs, peer, ..."),
    Key("root", "string", None, "the directory a local kind reads"),
    Key("class", "string", "product", "product, reference, ledger or archive"),
    Key("default", "bool", False, "whether bare locations are looked up here"),
    Key("url_base", "string", "", "base URL of the published pages"),
    Key("options", "table", {}, "kind-specific keys, as an alternative to writing them inline"),
)
_COMMON_SOURCE_KEYS = frozenset(k.name for k in SOURCE_KEYS)


def parse_sources(items: Any, base: Path) -> list[SourceConfig]:
    if not isinstance(items, list):
        raise ConfigError(
            f"sources must be an array of tables ([[sources]]), got {describe(items)}"
        )
    return [_parse_source(item, index, base) for index, item in enumerate(items, start=1)]


def source_label(index: int, name: str | None) -> str:
    """How an unknown-key error names a source: ``[[sources]] #2 ("code")``."""
    return f'[[sources]] #{index} ("{name}")' if name else f"[[sources]] #{index}"


def _parse_source(item: Any, index: int, base: Path) -> SourceConfig:
    item = table_of(item, f"[[sources]] #{index}")
    raw_name = item.get("name")
    if not isinstance(raw_name, str) or not raw_name.strip():
        got = "" if raw_name is None else f", got {describe(raw_name)}"
        raise ConfigError(f"[[sources]] #{index}: name is required (a non-empty string){got}")
    name = raw_name.strip()
    where = f'[[sources]] "{name}":'
    common = {k: v for k, v in item.items() if k in _COMMON_SOURCE_KEYS}
    check_table(common, SOURCE_KEYS, source_label(index, name), where)
    _check_name(name, where)
    kind = item.get("kind", "").strip()
    if not kind:
        raise ConfigError(f"{where} kind is required")
    root = resolve_path(item["root"], base, f"{where} root") if "root" in item else None
    if root is None and kind in LOCAL_KINDS:
        raise ConfigError(f"{where} kind {kind!r} needs a root directory")
    source_class = item.get("class", SourceClass.PRODUCT.value).lower()
    if source_class not in {c.value for c in SourceClass}:
        known = ", ".join(c.value for c in SourceClass)
        raise ConfigError(f"{where} class must be one of {known}, not {item.get('class')!r}")
    options = {k: v for k, v in item.items() if k not in _COMMON_SOURCE_KEYS}
    for key, value in item.get("options", {}).items():
        if key in options:
            raise ConfigError(f"{where} {key} is given both inline and in [sources.options]")
        options[key] = value
    return SourceConfig(
        name=name,
        kind=kind,
        root=root,
        source_class=source_class,
        default=item.get("default", False),
        url_base=item.get("url_base", ""),
        options=options,
        index=index,
    )


def check_source_options(sources: Sequence[SourceConfig], declared: Mapping[str, Any]) -> None:
    """Each source's kind-specific keys against what the plugin owning its kind declares.

    ``declared`` maps a kind to its keys (a sequence of :class:`Key`), or to None for a plugin
    that declares none: its sources' keys are then passed through unchecked.
    """
    for source in sources:
        keys = declared.get(source.kind)
        if keys is None or not source.options:
            continue
        label = source_label(source.index, source.name) if source.index else repr(source.name)
        common = [k.name for k in SOURCE_KEYS]
        declared_names = {k.name for k in keys}
        for key in source.options:
            if key not in declared_names:
                hint_pool = declared_names | set(common)
                raise ConfigError(
                    unknown_key_message(str(key), label, hint_pool)
                    + ("" if keys else f" (kind {source.kind!r} takes no other keys)")
                )
        for key in keys:
            if key.name in source.options:
                check_value(key, source.options[key.name], f'[[sources]] "{source.name}":')


def _check_name(name: str, where: str) -> None:
    # Names qualify locations ("site/path#anchor"), so they must not contain either separator.
    if "/" in name or "#" in name:
        raise ConfigError(f"{where} a source name must not contain '/' or '#'")


def sources_from_paths(
    paths: Sequence[str], taken: set[str], dependencies: dict[str, Any] | None = None
) -> list[SourceConfig]:
    """Two sources (docs and code) per bare path, named so that every name stays unique, and
    a third (``deps``, the installed dependencies) where the path holds a manifest and
    ``dependencies`` (its options) is given."""
    out: list[SourceConfig] = []
    roots: set[Path] = set()
    for raw in paths:
        root = Path(raw).expanduser().resolve()
        if not root.is_dir():
            raise ConfigError(f"not a directory: {raw}")
        if root in roots:
            continue
        roots.add(root)
        if len(paths) == 1 and not ({"docs", "code"} & taken):
            stem = ""
        else:
            stem = _unique_stem(root.name or "root", taken)
        for kind, suffix in (("markdown", "docs"), ("code", "code")):
            name = f"{stem}-{suffix}" if stem else suffix
            taken.add(name.casefold())
            out.append(SourceConfig(name=name, kind=kind, root=root, default=True))
        if dependencies is not None:
            out.extend(
                dependency_source(root, f"{stem}-deps" if stem else "deps", taken, dependencies)
            )
    return out


def _unique_stem(dirname: str, taken: set[str]) -> str:
    stem = dirname.replace("/", "-").replace("#", "-")
    candidate, n = stem, 1
    while f"{candidate}-docs".casefold() in taken or f"{candidate}-code".casefold() in taken:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def check_unique_names(sources: Sequence[SourceConfig]) -> None:
    seen: dict[str, str] = {}
    for source in sources:
        key = source.name.casefold()
        if key in seen:
            raise ConfigError(
                f"duplicate source name {source.name!r} (names are compared case-insensitively;"
                f" {seen[key]!r} is already configured)"
            )
        seen[key] = source.name


def assign_defaults(sources: Sequence[SourceConfig]) -> None:
    """Without an explicit default, the first docs and the first code source become defaults."""
    if any(s.default for s in sources):
        return
    for kind in ("markdown", "code"):
        first = next((s for s in sources if s.kind == kind), None)
        if first is not None:
            first.default = True
