"""The manifest and lock-file readers of the ``dependencies`` kind, on real-format files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scriptorium.settings.config import load_settings
from scriptorium.settings.schema import ConfigError
from scriptorium_plugins.dependencies import golang, node, python, rust
from scriptorium_plugins.dependencies.discover import discover, has_manifest
from scriptorium_plugins.dependencies.files import wanted
from scriptorium_plugins.dependencies.source import split_label

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/dependencies"


def pins(declared) -> dict[str, tuple[str, bool]]:
    return {d.name: (d.version, d.direct) for d in declared}


def test_uv_lock_pins_what_pyproject_names() -> None:
    root = FIXTURES / "python-uv"
    assert pins(python.read(root, transitive=False)) == {
        "httpx": ("0.28.1", True),
        "pydantic": ("2.11.7", True),
        "rich": ("14.0.0", True),
        "pytest": ("8.4.1", True),
    }
    every = pins(python.read(root, transitive=True))
    # The project itself (an editable entry) is never its own dependency.
    assert "weather-service" not in every
    assert every["pydantic-core"] == ("2.33.2", False)
    assert every["anyio"] == ("4.9.0", False)


def test_poetry_lock_with_a_local_path_dependency() -> None:
    root = FIXTURES / "python-poetry"
    assert pins(python.read(root, transitive=False)) == {
        "requests": ("2.32.4", True),
        "sqlalchemy": ("2.0.41", True),
        "pytest": ("8.4.1", True),
    }
    every = pins(python.read(root, transitive=True))
    assert every["certifi"] == ("2025.6.15", False)
    assert "shared-utils" not in every  # a directory source, not a distribution


def test_requirements_files_alone() -> None:
    found = pins(python.read(FIXTURES / "python-requirements", transitive=False))
    assert found == {
        "click": ("8.2.1", True),
        "flask": ("3.1.1", True),
        "itsdangerous": ("2.2.0", True),
        "werkzeug": ("3.1.3", True),
        "gunicorn": ("", True),
    }


def test_package_lock_v3() -> None:
    root = FIXTURES / "node-npm"
    assert pins(node.read(root, transitive=False)) == {
        "@types/node": ("22.15.30", True),
        "express": ("4.21.2", True),
        "vitest": ("3.2.4", True),
    }
    every = pins(node.read(root, transitive=True))
    assert every["body-parser"] == ("1.20.3", False)
    assert "debug" not in every  # a nested copy, not what node_modules/debug holds


def test_pnpm_lock_v9_peers_stripped() -> None:
    root = FIXTURES / "node-pnpm"
    assert pins(node.read(root, transitive=False)) == {
        "@tanstack/react-query": ("5.80.7", True),
        "react": ("19.1.0", True),
        "typescript": ("5.8.3", True),
    }
    assert pins(node.read(root, transitive=True))["@tanstack/query-core"] == ("5.80.7", False)


def test_yarn_classic_and_berry() -> None:
    classic = pins(node.read(FIXTURES / "node-yarn", transitive=True))
    assert classic == {
        "@babel/code-frame": ("7.27.1", False),
        "@babel/core": ("7.27.4", True),
        "lodash": ("4.17.21", True),
    }
    berry = pins(node.read(FIXTURES / "node-berry", transitive=True))
    assert berry["chalk"] == ("5.4.1", True)
    assert "__metadata" not in berry


def test_go_mod_direct_indirect_and_replace() -> None:
    root = FIXTURES / "go"
    assert pins(golang.read(root, transitive=False)) == {
        "github.com/BurntSushi/toml": ("v1.5.0", True),
        "github.com/google/uuid": ("v1.6.0", True),
        "github.com/pkg/errors": ("v0.9.1", True),
    }
    every = pins(golang.read(root, transitive=True))
    assert every["golang.org/x/sync"] == ("v0.15.0", False)
    # go.sum's modules whose code was needed and that go.mod does not name.
    assert every["github.com/mattn/go-isatty"] == ("v0.0.20", False)
    assert golang.replacements(root) == {
        "github.com/pkg/errors": ("github.com/pkg/errors", "v0.9.0")
    }
    assert golang.escape_path("github.com/BurntSushi/toml") == "github.com/!burnt!sushi/toml"


def test_cargo_renames_targets_and_workspace_members() -> None:
    root = FIXTURES / "rust"
    assert pins(rust.read(root, transitive=False)) == {
        "libc": ("0.2.174", True),
        "proptest": ("1.7.0", True),
        "serde": ("1.0.219", True),
        "serde_json": ("1.0.140", True),  # named `json` in Cargo.toml
        "tokio": ("1.45.1", True),
    }
    every = pins(rust.read(root, transitive=True))
    assert every["serde_derive"] == ("1.0.219", False)
    assert "ledger" not in every


def test_installed_crates_and_modules_are_found_where_their_tools_put_them(tmp_path) -> None:
    home = tmp_path / "cargo"
    crate = home / "registry/src/index.crates.io-1949cf8c6b5b557f/serde-1.0.219"
    (crate / "src").mkdir(parents=True)
    (crate / "src/lib.rs").write_text("pub trait Serialize {}\n")
    (crate / "tests").mkdir()
    (crate / "tests/ui.rs").write_text("// a test\n")
    cache = tmp_path / "gomod"
    module = cache / "github.com/!burnt!sushi/toml@v1.5.0"
    module.mkdir(parents=True)
    (module / "decode.go").write_text("package toml\n")
    (module / "decode_test.go").write_text("package toml\n")
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Cargo.toml", "Cargo.lock"):
        shutil.copy(FIXTURES / "rust" / name, project / name)
    for name in ("go.mod", "go.sum"):
        shutil.copy(FIXTURES / "go" / name, project / name)
    from scriptorium_plugins.dependencies.discover import Where

    found = {
        d.name: d
        for d in discover(
            project, where=Where(gomodcache=str(cache), cargo_home=str(home), venv=str(tmp_path))
        )
    }
    assert [f.path for f in found["serde"].files] == ["src/lib.rs"]
    assert found["serde"].label == "serde@1.0.219"
    assert found["serde"].documentation_urls == ("https://docs.rs/serde/1.0.219",)
    assert not found["tokio"].installed
    assert [f.path for f in found["github.com/BurntSushi/toml"].files] == ["decode.go"]
    assert not found["github.com/google/uuid"].installed


def test_which_files_of_a_library_are_read() -> None:
    assert wanted("httpx/_client.py", "python")
    assert wanted("pydantic/main.pyi", "python")
    assert wanted("docs/guide.md", "go")
    assert not wanted("numpy/tests/test_core.py", "python")
    assert not wanted("dist/bundle.min.js", "node")
    assert not wanted("uuid_test.go", "go")
    assert not wanted("httpx/py.typed", "python")


def test_labels_split_into_library_and_version() -> None:
    assert split_label("httpx@0.28.1:httpx/_client.py") == ("httpx", "0.28.1")
    assert split_label("@types/node@22.15.30:index.d.ts") == ("@types/node", "22.15.30")
    assert split_label("github.com/google/uuid@v1.6.0:uuid.go") == (
        "github.com/google/uuid",
        "v1.6.0",
    )
    assert split_label("src/app.py") is None


def test_serve_path_offers_dependencies_unless_turned_off(tmp_path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    assert not has_manifest(project)
    assert [s.kind for s in load_settings(paths=[str(project)]).sources] == ["markdown", "code"]
    shutil.copy(FIXTURES / "python-requirements/requirements.txt", project)
    assert has_manifest(project)
    deps = load_settings(paths=[str(project)]).sources[-1]
    assert (deps.name, deps.kind, deps.source_class) == ("deps", "dependencies", "reference")
    assert deps.options == {"transitive": False}
    assert len(load_settings(paths=[str(project)], dependencies=False).sources) == 2
    config = tmp_path / "scriptorium.toml"
    config.write_text("[dependencies]\nenabled = false\n")
    assert len(load_settings(config, [str(project)]).sources) == 2
    config.write_text("[dependencies]\ntransitive = true\n")
    assert load_settings(config, [str(project)]).sources[-1].options == {"transitive": True}
    config.write_text("[dependencies]\ndocs_sites = true\n")
    options = load_settings(config, [str(project)]).sources[-1].options
    assert options == {"transitive": False, "docs_sites": True}
    config.write_text("[dependencies]\nenable = false\n")
    with pytest.raises(ConfigError, match="enabled"):
        load_settings(config, [str(project)])


METADATA = """\
Metadata-Version: 2.4
Name: Requests-Toolbelt
Version: 1.0.0
Summary: A utility belt for advanced users of python-requests
Project-URL: Changelog, https://github.com/requests/toolbelt/blob/master/HISTORY.rst
Project-URL: Documentation, https://toolbelt.readthedocs.io
Home-page: https://toolbelt.readthedocs.io
Description-Content-Type: text/markdown

# requests-toolbelt

A collection of utilities for python-requests.

## Multipart encoder

Stream a multipart upload without reading it into memory.

## Changelog

### 1.0.0

- Dropped Python 2.
"""
RECORD = """\
requests_toolbelt/__init__.py,sha256=abc,1200
requests_toolbelt/multipart/encoder.py,sha256=def,20000
requests_toolbelt/py.typed,,
requests_toolbelt/__pycache__/__init__.cpython-311.pyc,,
requests_toolbelt-1.0.0.dist-info/METADATA,sha256=ghi,900
requests_toolbelt-1.0.0.dist-info/RECORD,,
../../../bin/toolbelt,sha256=jkl,200
"""


def test_a_wheel_installed_in_a_virtualenv(tmp_path) -> None:
    site = tmp_path / ".venv/lib/python3.11/site-packages"
    info = site / "requests_toolbelt-1.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(METADATA)
    (info / "RECORD").write_text(RECORD)
    (site / "requests_toolbelt/multipart").mkdir(parents=True)
    (site / "requests_toolbelt/__init__.py").write_text('"""Toolbelt."""\n')
    (site / "requests_toolbelt/multipart/encoder.py").write_text("class MultipartEncoder: ...\n")
    (tmp_path / "requirements.txt").write_text("requests-toolbelt==1.0.0\nrequests==2.32.4\n")
    found = {d.name: d for d in discover(tmp_path)}  # the project's .venv, found by itself
    toolbelt = found["requests-toolbelt"]
    assert toolbelt.label == "requests-toolbelt@1.0.0"
    assert [f.path for f in toolbelt.files] == [
        "README.md",
        "requests_toolbelt/__init__.py",
        "requests_toolbelt/multipart/encoder.py",
    ]
    readme = python.readme_text(toolbelt.files[0].absolute)
    assert "## Multipart encoder" in readme and "Dropped Python 2" not in readme
    assert toolbelt.documentation_urls == ("https://toolbelt.readthedocs.io",)
    assert not found["requests"].installed


def test_pnpm_links_into_its_store_are_followed(tmp_path) -> None:
    store = tmp_path / "node_modules/.pnpm/ms@2.1.3/node_modules/ms"
    store.mkdir(parents=True)
    (store / "package.json").write_text('{"name": "ms", "version": "2.1.3"}')
    (store / "index.js").write_text("module.exports = function (val, options) {};\n")
    (store / "readme.md").write_text("# ms\n")
    (tmp_path / "node_modules/ms").symlink_to(store)
    (tmp_path / "package.json").write_text('{"dependencies": {"ms": "^2.1.3"}}')
    (found,) = discover(tmp_path, ecosystems=("node",))
    assert (found.label, [f.path for f in found.files]) == ("ms@2.1.3", ["index.js", "readme.md"])
