"""Configuration files as blocks: TOML tables and keys, YAML and JSON keys, Dockerfile stages,
Makefile targets; and the size cap that keeps generated data files out of a code source."""

from __future__ import annotations

from pathlib import Path

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium_plugins.code.extractor import CodeExtractor
from scriptorium_plugins.code.source import CodeSource


def spans(path: str, text: str) -> dict[str, tuple[str, int, int]]:
    blocks = CodeExtractor().extract(path, text).blocks
    return {b.anchor: (b.symbol_kind, b.start_line, b.end_line) for b in blocks if b.symbol}


TOML = """\
name = "demo"
version = "1"

[project]
dependencies = [
  "[not-a-table]",
]

[tool.ruff]
line-length = 100

[tool.ruff.lint]
select = ["E"]

[tool.mypy]
strict = true

[[tool.mypy.overrides]]
module = "x"
"""


def test_toml_tables_nest_and_a_prefix_spans_its_run_of_subtables() -> None:
    found = spans("pyproject.toml", TOML)
    assert found["name"] == ("key", 1, 1)
    assert found["project"] == ("table", 4, 7)  # a "[...]" inside an array is no header
    assert found["tool"] == ("table", 9, 19)
    assert found["tool.ruff"] == ("table", 9, 13)
    assert found["tool.ruff.lint"] == ("table", 12, 13)
    assert found["tool.mypy"] == ("table", 15, 19)
    assert found["tool.mypy.overrides"] == ("array", 18, 19)


def test_yaml_keys_two_levels_deep() -> None:
    text = (
        "name: CI\non:\n  push:\n    branches: [main]\n\n"
        "# jobs\njobs:\n  test:\n    runs-on: x\n  lint:\n    runs-on: y\n"
    )
    found = spans(".github/workflows/ci.yml", text)
    assert found["name"] == ("key", 1, 1)
    assert found["on"] == ("key", 2, 4)
    assert found["jobs"] == ("key", 7, 11)
    assert found["jobs.test"] == ("key", 8, 9)
    assert found["jobs.lint"] == ("key", 10, 11)
    assert "on.push.branches" not in found


def test_json_top_level_keys_skip_strings_that_look_like_structure() -> None:
    text = (
        '{\n  "name": "a{b",\n  "scripts": {\n    "x": "y: z"\n  },\n'
        '  "files": ["a",\n    "b"]\n}\n'
    )
    found = spans("package.json", text)
    assert found == {
        "name": ("key", 2, 2),
        "scripts": ("key", 3, 5),
        "files": ("key", 6, 7),
    }


def test_dockerfile_stages_and_makefile_targets() -> None:
    docker = (
        "ARG BASE=python\nFROM node:20 AS build\nRUN npm ci \\\n  --quiet\n\n"
        "FROM $BASE\nCOPY --from=build /app /app\n"
    )
    assert spans("Dockerfile", docker) == {"build": ("stage", 2, 4), "stage-2": ("stage", 6, 7)}
    make = (
        "CC := gcc\n.PHONY: all\nall: app\n\napp: main.c\n\t$(CC) -o app main.c\n\n"
        "\t@echo done\nclean:\n\trm -f app\n"
    )
    assert spans("Makefile", make) == {
        "all": ("target", 3, 3),
        "app": ("target", 5, 8),
        "clean": ("target", 9, 10),
    }


def test_data_files_over_the_cap_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "small.json").write_text('{"a": 1}\n')
    (tmp_path / "big.json").write_text('{"a": "' + "x" * 2000 + '"}\n')
    (tmp_path / "big.py").write_text("x = 1\n" * 400)
    config = SourceConfig(
        name="code", kind="code", root=tmp_path, options={"max_data_file_bytes": 1000}
    )
    source = CodeSource(config, SourceContext(extractors=ExtractorChain([CodeExtractor()])))
    listed = sorted(stat.path for stat in source.list_files())
    assert listed == ["big.py", "small.json"]
    assert source.read_text("big.json") is None
