"""The re-export statements each language writes, read into (public name, original, files):
the forms the end-to-end test does not spell out (aliases, nesting, type-only exports,
fallback imports, relative levels)."""

from __future__ import annotations

from scriptorium.content.reexports import STAR, read_exports


def _table(path: str, text: str, language: str | None = None) -> dict[str, tuple[str, tuple]]:
    return {e.name: (e.original, e.targets) for e in read_exports(path, language, text).items}


def test_python_relative_levels_aliases_and_fallbacks():
    text = (
        "try:\n"
        "    from ._speedups import Fast as Impl\n"
        "except ImportError:\n"
        "    from .._pure import Slow\n"
        "from . import helpers\n"
        "from pkg.core.api import Api\n"
        "__all__ = ['Impl', 'Api']\n"
    )
    table = _table("pkg/sub/__init__.py", text)
    assert table["Impl"] == ("Fast", ("pkg/sub/_speedups.py", "pkg/sub/_speedups.pyi",
                                      "pkg/sub/_speedups/__init__.py"))  # fmt: skip
    assert table["Slow"][1][0] == "pkg/_pure.py"
    assert table["helpers"][1] == ("pkg/sub/__init__.py",)
    exports = read_exports("pkg/sub/__init__.py", "python", text)
    api = next(e for e in exports.items if e.name == "Api")
    assert api.targets == () and api.module == "pkg.core.api"
    assert exports.public == ["Impl", "Api"]


def test_python_that_does_not_parse_exports_nothing():
    assert read_exports("broken.py", "python", "from . import (\n").items == []


def test_typescript_type_exports_stars_and_namespaces():
    text = (
        'export type { Props, State as S } from "./types.js";\n'
        'export * from "./all";\n'
        'export * as ns from "./ns";\n'
    )
    table = _table("src/index.ts", text)
    assert table["Props"][0] == "Props" and "src/types.ts" in table["Props"][1]
    assert table["S"][0] == "State"
    assert STAR in table and "src/all.ts" in table[STAR][1]
    assert "ns" not in table  # a namespace is not a name defined elsewhere


def test_rust_nested_groups_aliases_and_super():
    text = "pub use super::{a::{B, c::D as E}, F};\npub(crate) use self::g::H;\n"
    table = _table("src/x/y.rs", text)
    assert table["B"] == ("B", ("src/x/a.rs", "src/x/a/mod.rs"))
    assert table["E"] == ("D", ("src/x/a/c.rs", "src/x/a/c/mod.rs"))
    assert table["F"][0] == "F"
    assert "H" not in table  # pub(crate) is not public


def test_other_languages_export_nothing():
    assert read_exports("main.go", "go", 'import "fmt"\n').items == []
