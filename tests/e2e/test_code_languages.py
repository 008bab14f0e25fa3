"""More code languages and configuration formats through a real daemon, on real third-party files.

The tree is ``tests/fixtures/code_languages`` (Rust from itoa, C from sds, Ruby from Rack, Flask's
pyproject.toml, workflow and devcontainer.json, a multi-stage Dockerfile and sds's Makefile; see
its SOURCES.md), plus a generated JSON dump larger than the data-file cap. Definitions resolve by
the name their language writes (``Buffer::format``, ``Rack::Builder#use``) and by the dotted form;
configuration files resolve by key path (``tool.ruff``, ``jobs.tests``), stage and target.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.grpc.status import resolution_from_error
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import Daemon, running

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "code_languages"
RUST = "itoa/src/lib.rs"
C = "sds/sds.c"
RUBY = "rack/lib/rack/builder.rb"
TOML = "flask/pyproject.toml"
YAML = "flask/.github/workflows/tests.yaml"
JSON = "flask/.devcontainer/devcontainer.json"
DOCKERFILE = "full-stack-fastapi-template/backend/Dockerfile"
MAKEFILE = "sds/Makefile"
DUMP = "data/dump.json"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("code-languages") / "repo"
    shutil.copytree(FIXTURES, root)
    dump = {f"key{i}": {"value": "x" * 64, "index": i} for i in range(4000)}
    (root / DUMP).parent.mkdir(parents=True)
    (root / DUMP).write_text(json.dumps(dump, indent=2), encoding="utf-8")  # ~500 KB
    return root


@pytest.fixture(scope="module")
def stub(tree: Path) -> Iterator:
    with running([str(tree), "--no-watch"], tree.parent / "state") as served:
        served: Daemon
        yield served.stub


def fetch(stub, location: str, mode=pb.CONTENT_MODE_SNIPPET) -> pb.GetContentResponse:
    return stub.GetContent(pb.GetContentRequest(location=location, mode=mode), timeout=30)


def lines_of(tree: Path, path: str) -> list[str]:
    return (tree / path).read_text(encoding="utf-8").splitlines()


def line_of(lines: list[str], text: str, after: int = 0) -> int:
    """The 1-based number of the first line at or after ``after`` that starts with ``text``."""
    return next(i for i, line in enumerate(lines, 1) if i >= after and line.startswith(text))


def span(lines: list[str], first: int, last: int) -> str:
    return "\n".join(lines[first - 1 : last])


def test_a_rust_method_resolves_by_type_and_name(stub, tree):
    lines = lines_of(tree, RUST)
    start = line_of(lines, "    /// Print an integer into this buffer")  # its doc comment
    end = line_of(lines, "    }", line_of(lines, "    pub fn format<I: Integer>"))
    reply = fetch(stub, f"{RUST}#Buffer::format")
    assert (reply.start_line, reply.end_line) == (start, end)
    assert reply.content == span(lines, start, end)
    assert reply.symbol == "Buffer::format"
    assert reply.resolution.rule == "exact"
    assert reply.location == f"{RUST}#Buffer::format"
    # The dotted form names the same definition in every language.
    dotted = fetch(stub, f"{RUST}#Buffer.format")
    assert (dotted.start_line, dotted.end_line, dotted.resolution.rule) == (start, end, "exact")


def test_a_rust_impl_block_is_its_own_definition(stub, tree):
    lines = lines_of(tree, RUST)
    start = line_of(lines, "impl Buffer {")
    reply = fetch(stub, f"{RUST}#impl Buffer")
    assert reply.start_line == start
    assert reply.content.startswith("impl Buffer {")
    # ``Buffer`` alone is the struct, not one of its impl blocks.
    struct = fetch(stub, f"{RUST}#Buffer")
    assert "pub struct Buffer {" in struct.content
    assert struct.start_line < start


def test_a_c_function_resolves_with_its_leading_comment(stub, tree):
    lines = lines_of(tree, C)
    start = line_of(lines, "/* Create a new sds string with the content")
    signature = line_of(lines, "sds sdsnewlen(", start)
    reply = fetch(stub, f"{C}#sdsnewlen", pb.CONTENT_MODE_DEFINITION)
    assert reply.start_line == start
    assert lines[signature - 1] in reply.content


def test_ruby_methods_resolve_by_their_convention_dots_and_short_names(stub, tree):
    lines = lines_of(tree, RUBY)
    start = line_of(lines, "    # Specifies middleware to use in a stack.")
    end = line_of(lines, "    end", line_of(lines, "    def use("))
    for location, rule in (
        (f"{RUBY}#Rack::Builder#use", "exact"),
        (f"{RUBY}#Rack.Builder.use", "exact"),
        (f"{RUBY}#Builder#use", "variant"),
    ):
        reply = fetch(stub, location)
        assert (reply.start_line, reply.end_line) == (start, end), location
        assert reply.resolution.rule == rule, location
    # A class method is written with a dot.
    assert fetch(stub, f"{RUBY}#Rack::Builder.parse_file").content.lstrip().startswith("#")


def test_a_misspelt_name_offers_the_language_qualified_candidates(stub):
    with pytest.raises(grpc.RpcError) as err:
        fetch(stub, f"{RUBY}#Rack::Builder#usee")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert f"{RUBY}#Rack::Builder#use" in resolution_from_error(err.value).candidates


def test_toml_tables_resolve_by_their_dotted_path(stub, tree):
    lines = lines_of(tree, TOML)
    start = line_of(lines, "[tool.ruff]")
    end = line_of(lines, "[tool.codespell]") - 2  # the blank line before it is not the table's
    reply = fetch(stub, f"{TOML}#tool.ruff")
    assert (reply.start_line, reply.end_line) == (start, end)
    assert reply.content == span(lines, start, end)
    assert reply.resolution.rule == "exact"
    # ``tool`` is every [tool.*] table: from the first to the end of the file.
    tool = fetch(stub, f"{TOML}#tool", pb.CONTENT_MODE_DEFINITION)
    assert tool.start_line == line_of(lines, "[tool.")
    assert tool.content.startswith("[tool.")


def test_yaml_and_json_keys_and_docker_stages_and_make_targets(stub, tree):
    yaml = lines_of(tree, YAML)
    job = fetch(stub, f"{YAML}#jobs.tests")
    assert job.start_line == line_of(yaml, "  tests:")
    assert job.end_line == line_of(yaml, "  typing:") - 1
    devcontainer = fetch(stub, f"{JSON}#customizations")
    assert devcontainer.content.startswith('  "customizations": {')
    stage = fetch(stub, f"{DOCKERFILE}#frontend-build")
    assert stage.content.startswith("FROM oven/bun:1 AS frontend-build")
    assert stage.content.rstrip().endswith("RUN bun run build")
    final = fetch(stub, f"{DOCKERFILE}#stage-2")
    assert final.content.startswith("FROM python:")
    target = fetch(stub, f"{MAKEFILE}#sds-test")
    assert target.content.startswith("sds-test: sds.c sds.h")
    assert target.content.rstrip().endswith(
        '@echo ">>> Type ./sds-test to run the sds.c unit tests."'
    )


def test_search_finds_definitions_and_config_keys(stub):
    results = stub.Search(
        pb.SearchRequest(query="sdsnewlen", kinds=[pb.CORPUS_CODE]), timeout=30
    ).results
    assert any(r.title == "sdsnewlen" and r.location.startswith(C) for r in results)
    ruff = stub.Search(
        pb.SearchRequest(query="ruff lint select isort", kinds=[pb.CORPUS_CODE]), timeout=30
    ).results
    assert any(r.location.startswith(TOML) and r.title.startswith("tool.ruff") for r in ruff)


def test_a_generated_data_file_over_the_cap_is_not_indexed(stub):
    with pytest.raises(grpc.RpcError) as err:
        fetch(stub, DUMP)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    results = stub.Search(pb.SearchRequest(query="key3999", kinds=[pb.CORPUS_CODE])).results
    assert not any(r.location.startswith(DUMP) for r in results)


@pytest.mark.parametrize(
    ("location", "symbol", "first", "holds"),
    [
        (
            "leveldb/util/status.cc#leveldb::Status::ToString",
            "leveldb::Status::ToString",
            "std::string Status::ToString() const {",
            "std::string Status::ToString() const {",
        ),
        (
            "MediatR/samples/MediatR.Examples.PublishStrategies/Publisher.cs#Publisher.ParallelWhenAll",
            "MediatR.Examples.PublishStrategies.Publisher.ParallelWhenAll",
            "    private Task ParallelWhenAll(",
            "Task.WhenAll",
        ),
        (
            "phpdotenv/src/Dotenv.php#Dotenv::createImmutable",
            "Dotenv\\Dotenv::createImmutable",
            "    /**",
            "public static function createImmutable(",
        ),
        (
            "timber/timber/src/main/java/timber/log/Timber.kt#DebugTree.createStackElementTag",
            "Timber.DebugTree.createStackElementTag",
            "    /**",
            "protected open fun createStackElementTag(",
        ),
        (
            "Rainbow/Sources/Color.swift#NamedColor",
            "NamedColor",
            "/// Valid named text colors to use in `Rainbow`.",
            "case black",
        ),
        (
            "scopt/shared/src/main/scala/scopt/OParser.scala#OParserBuilder.head",
            "OParserBuilder.head",
            "  /** adds usage text. */",
            "def head(xs: String*)",
        ),
        ("nvm/install.sh#nvm_detect_profile", "nvm_detect_profile", "#", "nvm_detect_profile() {"),
    ],
)
def test_each_language_resolves_a_definition_by_its_qualified_name(
    stub, location, symbol, first, holds
):
    reply = fetch(stub, location)
    assert reply.symbol == symbol
    assert reply.scope == "definition"
    assert reply.content.splitlines()[0].startswith(first), reply.content[:200]
    assert holds in reply.content
