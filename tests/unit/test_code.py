"""Unit tests for the code plugin (languages, extractor, source) and scriptorium.text.code."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.domain.model import Block, Corpus, RefKind
from scriptorium.plugins import build_plugin_manager, collect
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium.text import split_lines
from scriptorium.text.code import (
    code_flow_candidates,
    import_targets,
    interesting_code_ranges,
    route_lines,
    signature_lines,
)
from scriptorium_plugins.code.extractor import CodeExtractor
from scriptorium_plugins.code.languages import has_grammar, language_for_path
from scriptorium_plugins.code.source import CodeSource
from tests.support.daemon import CORPUS

FASTAPI = CORPUS
DOCS_SRC = FASTAPI / "docs_src"


def extract(path: str, text: str) -> tuple[Block, ...]:
    return CodeExtractor().extract(path, text).blocks


def by_anchor(blocks: tuple[Block, ...]) -> dict[str, Block]:
    return {b.anchor: b for b in blocks}


def own_lines(blocks) -> int:
    return sum(1 for b in blocks for line in b.body.split("\n") if line.strip())


# -- languages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("app/main.py", "python"),
        ("typings/x.pyi", "python"),
        ("web/index.mjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/api.cts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("cmd/server/main.go", "go"),
        ("src/Main.java", "java"),
        ("Program.cs", "csharp"),
        ("src/lib.rs", "rust"),
        ("deploy/Dockerfile", "dockerfile"),
        ("Makefile", "makefile"),
        ("setup.cfg", "ini"),
        ("config.YAML", "yaml"),
        ("README.md", None),
        ("notes.txt", None),
    ],
)
def test_language_for_path(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_grammar_languages() -> None:
    for language in ("python", "javascript", "typescript", "tsx", "go", "java", "rust", "csharp"):
        assert has_grammar(language)
    for language in ("dart", "lua", "sql", None):
        assert not has_grammar(language)


# -- extractor: definitions ----------------------------------------------------------------

PYTHON = '''\
"""Module docstring."""
import os

app = FastAPI()


@app.get("/items/{item_id}")
async def read_item(item_id: int):
    return {"item_id": item_id}


class Service:
    """A service."""

    retries = 3

    @property
    def name(self) -> str:
        def helper():
            return "n"

        return helper()

    async def run(self):
        return None


def plain():
    pass
'''


def test_python_definitions_with_real_line_ranges() -> None:
    extraction = CodeExtractor().extract("pkg/main.py", PYTHON)
    assert extraction.language == "python"
    blocks = by_anchor(extraction.blocks)

    read_item = blocks["read_item"]
    assert (read_item.start_line, read_item.end_line) == (7, 9)  # starts at the decorator
    assert read_item.kind is RefKind.CODE
    assert read_item.symbol == "read_item"
    assert read_item.symbol_kind == "function"
    assert read_item.body.startswith('@app.get("/items/{item_id}")\nasync def read_item')
    assert read_item.level == 1

    service = blocks["Service"]
    assert (service.start_line, service.end_line, service.symbol_kind) == (12, 25, "class")

    name = blocks["Service.name"]
    assert (name.start_line, name.end_line) == (17, 22)
    assert name.symbol_kind == "method"
    assert name.section_path == ("Service", "name")
    assert name.title == "Service.name"
    assert name.level == 2

    helper = blocks["Service.name.helper"]
    assert (helper.start_line, helper.end_line, helper.level) == (19, 20, 3)
    assert helper.symbol_kind == "function"

    run = blocks["Service.run"]
    assert (run.start_line, run.end_line, run.symbol_kind) == (24, 25, "method")
    assert blocks["plain"].start_line == 28


def test_body_excludes_nested_definitions() -> None:
    blocks = by_anchor(extract("pkg/main.py", PYTHON))
    service = blocks["Service"].body
    assert "retries = 3" in service
    assert "def name" not in service and "async def run" not in service
    name = blocks["Service.name"].body
    assert "def helper" not in name and 'return "n"' not in name
    assert "return helper()" in name
    # Every non-blank line of the file is indexed exactly once.
    assert own_lines(extract("pkg/main.py", PYTHON)) == sum(
        1 for line in PYTHON.splitlines() if line.strip()
    )


def test_uncovered_lines_become_module_blocks() -> None:
    blocks = extract("pkg/main.py", PYTHON)
    modules = [b for b in blocks if b.symbol_kind == "module"]
    assert [(b.start_line, b.end_line) for b in modules] == [(1, 4)]
    assert modules[0].anchor == "L1-4"
    assert modules[0].title == "main.py lines 1-4"
    assert "app = FastAPI()" in modules[0].body
    assert [b.start_line for b in blocks] == sorted(b.start_line for b in blocks)


def test_long_module_regions_are_cut_into_windows_of_at_most_40_lines() -> None:
    text = "\n".join(f"setting_{i} = {i}" for i in range(1, 101)) + "\n\ndef f():\n    pass\n"
    blocks = extract("settings.py", text)
    modules = [b for b in blocks if b.symbol_kind == "module"]
    assert len(modules) == 3
    assert modules[0].start_line == 1 and modules[-1].end_line == 100
    assert all(b.end_line - b.start_line + 1 <= 40 for b in modules)
    assert all(a.end_line + 1 == b.start_line for a, b in itertools.pairwise(modules))
    assert by_anchor(blocks)["f"].start_line == 102


JAVASCRIPT = """\
const express = require("express");
const app = express();

function listItems(req, res) {
  res.json([]);
}

export const createItem = async (req, res) => {
  res.status(201).end();
};

class ItemStore {
  constructor() {
    this.items = [];
  }

  add(item) {
    this.items.push(item);
  }
}

app.get("/items", listItems);
"""


def test_javascript_definitions() -> None:
    extraction = CodeExtractor().extract("web/server.js", JAVASCRIPT)
    assert extraction.language == "javascript"
    blocks = by_anchor(extraction.blocks)
    assert (blocks["listItems"].start_line, blocks["listItems"].end_line) == (4, 6)
    assert blocks["createItem"].symbol_kind == "function"
    assert (blocks["createItem"].start_line, blocks["createItem"].end_line) == (8, 10)
    assert blocks["createItem"].body.startswith("export const createItem")
    assert blocks["ItemStore"].symbol_kind == "class"
    assert blocks["ItemStore.constructor"].symbol_kind == "constructor"
    assert (blocks["ItemStore.add"].start_line, blocks["ItemStore.add"].symbol_kind) == (
        17,
        "method",
    )
    registration = [b for b in extraction.blocks if "app.get" in b.body]
    assert [b.symbol_kind for b in registration] == ["module"]


TYPESCRIPT = """\
import { Injectable } from "@nestjs/common";

export interface Item {
  id: string;
}

export type ItemId = string;

@Controller("items")
export class ItemsController {
  constructor(private readonly items: ItemsService) {}

  @Get(":id")
  findOne(@Param("id") id: ItemId): Item {
    return this.items.find(id);
  }
}

export function helper(): void {}
"""


def test_typescript_definitions() -> None:
    extraction = CodeExtractor().extract("src/items.controller.ts", TYPESCRIPT)
    assert extraction.language == "typescript"
    blocks = by_anchor(extraction.blocks)
    assert (blocks["Item"].symbol_kind, blocks["Item"].start_line, blocks["Item"].end_line) == (
        "interface",
        3,
        5,
    )
    assert (blocks["ItemId"].symbol_kind, blocks["ItemId"].start_line) == ("type", 7)
    controller = blocks["ItemsController"]
    assert (controller.start_line, controller.end_line) == (9, 17)  # includes the decorator
    find_one = blocks["ItemsController.findOne"]
    assert (find_one.start_line, find_one.end_line) == (13, 16)  # includes @Get
    assert find_one.body.lstrip().startswith('@Get(":id")')
    assert "findOne" not in controller.body
    assert blocks["helper"].symbol_kind == "function"
    # The same grammar family parses TSX.
    tsx = by_anchor(extract("ui/App.tsx", "export const App = () => <div>hi</div>;\n"))
    assert tsx["App"].symbol_kind == "function"


GO = """\
package main

import "net/http"

// Server serves items.
type Server struct {
\titems []string
}

type Store interface {
\tAll() []string
}

// ServeHTTP answers every request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
\tw.WriteHeader(http.StatusOK)
}

func main() {
\thttp.Handle("/", &Server{})
}
"""


def test_go_definitions() -> None:
    extraction = CodeExtractor().extract("cmd/api/main.go", GO)
    assert extraction.language == "go"
    blocks = by_anchor(extraction.blocks)
    server = blocks["Server"]
    assert (server.symbol_kind, server.start_line, server.end_line) == ("struct", 5, 8)
    assert blocks["Store"].symbol_kind == "interface"
    method = blocks["Server.ServeHTTP"]
    assert method.symbol == "ServeHTTP"
    assert method.symbol_kind == "method"
    assert method.section_path == ("Server", "ServeHTTP")
    assert (method.start_line, method.end_line) == (14, 17)  # with its doc comment
    assert (blocks["main"].start_line, blocks["main"].end_line) == (19, 21)
    assert [b.anchor for b in extraction.blocks if b.symbol_kind == "module"] == ["L1-3"]


JAVA = """\
package com.example.items;

import org.springframework.web.bind.annotation.GetMapping;

@RestController
public class ItemController {
    private final ItemService service;

    public ItemController(ItemService service) {
        this.service = service;
    }

    @GetMapping("/items/{id}")
    @ResponseBody
    public Item get(@PathVariable long id) {
        return service.find(id);
    }
}

interface ItemService {
    Item find(long id);
}
"""


def test_java_definitions() -> None:
    extraction = CodeExtractor().extract("src/main/java/ItemController.java", JAVA)
    assert extraction.language == "java"
    blocks = by_anchor(extraction.blocks)
    controller = blocks["ItemController"]
    assert (controller.symbol_kind, controller.start_line, controller.end_line) == ("class", 5, 18)
    constructor = blocks["ItemController.ItemController"]
    assert (constructor.symbol_kind, constructor.start_line) == ("constructor", 9)
    get = blocks["ItemController.get"]
    assert (get.symbol_kind, get.start_line, get.end_line) == ("method", 13, 17)
    assert get.body.strip().startswith('@GetMapping("/items/{id}")')
    assert blocks["ItemService"].symbol_kind == "interface"
    assert "private final ItemService service;" in controller.body
    assert "return service.find(id);" not in controller.body


# -- extractor: windows and messy input ----------------------------------------------------


def test_fallback_windows_for_unknown_language() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101)) + "\n"
    extraction = CodeExtractor().extract("notes/data.unknown", text)
    assert extraction.language is None
    spans = [(b.start_line, b.end_line) for b in extraction.blocks]
    assert spans == [(1, 40), (31, 70), (61, 100)]  # 40 lines, 10 lines overlap
    assert extraction.blocks[0].anchor == "L1-40"
    assert extraction.blocks[0].title == "data.unknown lines 1-40"
    assert extraction.blocks[1].body.split("\n")[0] == "line 31"


def test_files_without_grammar_keep_their_language() -> None:
    extraction = CodeExtractor().extract("db/schema.sql", "create table t (\n  id int\n);\n")
    assert extraction.language == "sql"
    assert [(b.start_line, b.end_line, b.symbol_kind) for b in extraction.blocks] == [
        (1, 3, "window")
    ]


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n"])
def test_empty_files_give_no_blocks(text: str) -> None:
    assert extract("empty.py", text) == ()


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("broken.py", "def f(:\n    )))]]\nclass\n\x00\x01\ufffd\n    return\n" * 20),
        ("broken.ts", "export class { method( { => } \n interface <<\n" * 30),
        ("broken.go", "func (\ntype struct {{{{\n" * 30),
        ("broken.java", "public class A { void m( { @ }\n" * 30),
        ("crlf.py", "def f():\r\n    return 1\r\n\r\nx = f()\r\n"),
        ("long.js", "var a = function () { return 1 };" * 5000),
    ],
)
def test_messy_input_never_raises_and_stays_in_bounds(path: str, text: str) -> None:
    blocks = extract(path, text)
    total = len(split_lines(text))
    assert blocks
    assert all(1 <= b.start_line <= b.end_line <= total for b in blocks)


def test_crlf_lines_have_no_carriage_returns() -> None:
    blocks = by_anchor(extract("crlf.py", "def f():\r\n    return 1\r\n\r\nx = f()\r\n"))
    assert blocks["f"].body == "def f():\n    return 1"
    assert (blocks["f"].start_line, blocks["f"].end_line) == (1, 2)


# -- the whole FastAPI corpus --------------------------------------------------------------


def test_whole_fastapi_corpus_parses_into_definitions(fastapi_corpus) -> None:
    extractor = CodeExtractor()
    files = sorted(p for d in ("fastapi", "docs_src") for p in (FASTAPI / d).rglob("*.py"))
    assert len(files) > 400
    by_path = {}
    for path in files:
        text = path.read_text("utf-8")
        extraction = extractor.extract(path.relative_to(FASTAPI).as_posix(), text)
        lines = split_lines(text)
        assert all(1 <= b.start_line <= b.end_line <= len(lines) for b in extraction.blocks)
        assert not any(b.symbol_kind == "window" for b in extraction.blocks)
        # Nothing is indexed twice and nothing with content is lost.
        assert own_lines(extraction.blocks) == sum(1 for line in lines if line.strip())
        by_path[path.relative_to(FASTAPI).as_posix()] = extraction.blocks

    oauth2 = by_path["fastapi/security/oauth2.py"]
    bearer = by_anchor(oauth2)["OAuth2PasswordBearer"]
    lines = split_lines((FASTAPI / "fastapi/security/oauth2.py").read_text("utf-8"))
    assert lines[bearer.start_line - 1].startswith("class OAuth2PasswordBearer(OAuth2)")
    assert bearer.symbol_kind == "class"
    call = by_anchor(oauth2)["OAuth2PasswordBearer.__call__"]
    assert bearer.start_line < call.start_line <= call.end_line <= bearer.end_line
    assert "async def __call__" not in bearer.body


# -- the source ----------------------------------------------------------------------------


def make_source(root: Path, **options) -> CodeSource:
    context = SourceContext(extractors=ExtractorChain([CodeExtractor()]))
    return CodeSource(SourceConfig(name="app", kind="code", root=root, options=options), context)


def test_code_source_over_a_copy_of_the_fastapi_corpus(fastapi_corpus, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(DOCS_SRC / "bigger_applications", root / "bigger_applications")
    shutil.copytree(FASTAPI / "fastapi" / "security", root / "fastapi" / "security")
    shutil.copy(FASTAPI / "docs" / "en" / "docs" / "index.md", root / "index.md")
    (root / ".gitignore").write_text("secret_stuff/\n*.generated.py\n")
    (root / "secret_stuff").mkdir()
    (root / "secret_stuff" / "keys.py").write_text("KEY = 1\n")
    (root / "models.generated.py").write_text("X = 1\n")
    (root / "blob.py").write_bytes(b"import os\x00\x01\x02binary")
    (root / "service_pb2.py").write_text("DESCRIPTOR = None\n")
    (root / "service_pb2_grpc.py").write_text("class Stub: ...\n")
    (root / "bundle.min.js").write_text("var a=1;\n")
    (root / "poetry.lock").write_text("[[package]]\n")
    (root / "package-lock.json").write_text("{}\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("module.exports = 1;\n")
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (root / "Dockerfile").write_text("FROM python:3.12\n")
    (root / "Makefile").write_text("test:\n\tpytest\n")
    (root / "huge.py").write_text("x = 1\n" * 2000)
    # A nested .gitignore applies below its own directory only.
    (root / "bigger_applications" / ".gitignore").write_text("internal/\nscratch_*.py\n")
    (root / "bigger_applications" / "scratch_one.py").write_text("Y = 1\n")
    (root / "scratch_two.py").write_text("Z = 1\n")

    source = make_source(root, max_file_bytes=8000)
    paths = {f.path for f in source.list_files()}
    assert source.list_files() == sorted(source.list_files(), key=lambda f: f.path)
    assert {f.path for f in source.list_files()} == paths  # a second scan (remembered answers)
    assert "bigger_applications/scratch_one.py" not in paths
    assert "bigger_applications/app_an_py310/internal/admin.py" not in paths  # any depth below
    assert "scratch_two.py" in paths

    assert "bigger_applications/app_an_py310/main.py" in paths
    assert "fastapi/security/oauth2.py" not in paths  # larger than max_file_bytes here
    assert "fastapi/security/base.py" in paths
    assert {"pyproject.toml", "Dockerfile", "Makefile"} <= paths
    for skipped in (
        "index.md",
        "secret_stuff/keys.py",
        "models.generated.py",
        "service_pb2.py",
        "service_pb2_grpc.py",
        "bundle.min.js",
        "poetry.lock",
        "package-lock.json",
        "node_modules/dep/index.js",
        "huge.py",
    ):
        assert skipped not in paths, skipped
    assert "blob.py" in paths  # listed by name, refused when read
    assert source.load("blob.py") is None

    doc = source.load("bigger_applications/app_an_py310/main.py")
    assert doc is not None
    assert doc.corpus is Corpus.CODE and doc.language == "python"
    assert "root" in {b.symbol for b in doc.blocks}
    assert source.page_location("bigger_applications/app_an_py310/main.py") == (
        "bigger_applications/app_an_py310/main.py"
    )
    assert {d.path for d in source.iter_documents()} == paths - {"blob.py"}


def test_code_plugin_registers_through_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIPTORIUM_PLUGINS", "code")
    registry = collect(build_plugin_manager())
    assert registry.source_kinds["code"] is CodeSource
    chain = registry.extractor_chain
    extractor = chain.for_path("src/app.py", Corpus.CODE)
    assert isinstance(extractor, CodeExtractor)
    assert (extractor.name, extractor.version, extractor.priority) == ("code", "2", 200)
    assert chain.for_path("docs/index.md", Corpus.DOCS) is None


# -- scriptorium.text.code on real files -----------------------------------------------------


def read_lines(relpath: str) -> list[str]:
    return split_lines((DOCS_SRC / relpath).read_text("utf-8"))


def test_route_and_signature_lines_on_a_real_app(fastapi_corpus) -> None:
    lines = read_lines("sql_databases/tutorial002_an_py310.py")
    expected_routes = [
        i for i, line in enumerate(lines, 1) if line.startswith(("@app.get", "@app.post"))
    ] + [i for i, line in enumerate(lines, 1) if line.startswith(("@app.patch", "@app.delete"))]
    assert route_lines(lines, "python") == sorted(expected_routes)
    assert len(expected_routes) == 5
    on_event = next(i for i, line in enumerate(lines, 1) if "on_event" in line)
    assert on_event not in route_lines(lines, "python")
    defs = [i for i, line in enumerate(lines, 1) if line.startswith(("def ", "class "))]
    assert set(defs) <= set(signature_lines(lines, "python"))


def test_interesting_code_ranges_on_a_real_app(fastapi_corpus) -> None:
    lines = read_lines("bigger_applications/app_an_py310/main.py")
    anchor = next(i for i, line in enumerate(lines, 1) if line.startswith("async def root"))
    ranges = interesting_code_ranges(lines, "python", anchor)
    reasons = {reason for _, _, reason in ranges}
    assert {"anchor", "route-handler", "import", "dependency-injection"} <= reasons
    assert (anchor, anchor, "anchor") in ranges
    route = next(r for r in ranges if r[2] == "route-handler")
    assert lines[route[0] - 1].startswith('@app.get("/")')
    assert ranges == sorted(ranges)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(ranges))  # no overlaps
    assert all(1 <= start <= end <= len(lines) for start, end, _ in ranges)

    config = read_lines("settings/app02_an_py310/config.py")
    assert any(r[2] == "configuration" for r in interesting_code_ranges(config, "python", 1))


def test_interesting_ranges_keep_far_route_handlers_but_not_far_imports(fastapi_corpus) -> None:
    lines = read_lines("sql_databases/tutorial002_an_py310.py")
    ranges = interesting_code_ranges(lines, "python", len(lines), radius=5)
    assert sum(1 for r in ranges if r[2] == "route-handler") == 5
    assert not any(r[2] == "import" for r in ranges)


def test_code_flow_candidates_on_a_real_app(fastapi_corpus) -> None:
    lines = read_lines("sql_databases/tutorial002_an_py310.py")
    steps = code_flow_candidates(lines, "python")
    assert steps == code_flow_candidates(lines, "python")  # deterministic
    assert [s[0] for s in steps] == sorted(s[0] for s in steps)
    titles = [s[2] for s in steps if s[1] == "route"]
    assert "GET /heroes/{hero_id} → read_hero" in titles
    assert "POST /heroes/ → create_hero" in titles
    signatures = {s[2] for s in steps if s[1] == "signature"}
    assert "class Hero" in signatures and "function get_session" in signatures
    assert "function read_hero" not in signatures  # folded into its route
    operations = {s[2] for s in steps if s[1] == "operation"}
    assert {"Create the FastAPI app `app`", "Commit the transaction"} <= operations
    assert "Create the database tables" in operations

    main = read_lines("bigger_applications/app_an_py310/main.py")
    ops = [s for s in code_flow_candidates(main, "python") if s[1] == "operation"]
    assert [s[2] for s in ops][:3] == [
        "Create the FastAPI app `app`",
        "Include router users.router",
        "Include router items.router",
    ]


def test_import_targets_on_real_files(fastapi_corpus) -> None:
    main = (DOCS_SRC / "bigger_applications/app_an_py310/main.py").read_text("utf-8")
    targets = import_targets(main, "python")
    assert targets[:3] == ["fastapi", "fastapi.Depends", "fastapi.FastAPI"]
    assert ".dependencies.get_token_header" in targets and ".routers.users" in targets
    assert len(targets) == len(set(targets))

    oauth2 = (FASTAPI / "fastapi/security/oauth2.py").read_text("utf-8")
    assert "fastapi.security.base" in import_targets(oauth2, "python")


def test_route_lines_in_other_languages() -> None:
    js = ['app.get("/items/:id", show);', 'cache.get("key");', "// app.post('/x', y)"]
    assert route_lines(js, "javascript") == [1]
    nest = ["  @Get(':id')", "  findOne(id: string) {"]
    assert route_lines(nest, "typescript") == [1]
    go = ['\thttp.HandleFunc("/hello", hello)', '\tr.GET("/ping", ping)', '\tm.Get("key")']
    assert route_lines(go, "go") == [1, 2]
    java = ['    @GetMapping("/items")', "    public List<Item> all() {"]
    assert route_lines(java, "java") == [1]
    cs = ['    [HttpGet("{id}")]', '    app.MapPost("/items", Create);', "    [Authorize]"]
    assert route_lines(cs, "csharp") == [1, 2]


def test_code_flow_candidates_name_handlers_in_other_languages() -> None:
    go = ["func main() {", '\tmux.HandleFunc("GET /items/{id}", getItem)', "}"]
    assert code_flow_candidates(go, "go")[1][:3] == (2, "route", "GET /items/{id} → getItem")
    java = [
        "public class ItemController {",
        '    @PostMapping("/items")',
        "    public Item create(@RequestBody Item item) {",
    ]
    steps = code_flow_candidates(java, "java")
    assert [s[1:3] for s in steps] == [
        ("signature", "class ItemController"),
        ("route", "POST /items → create"),
    ]


def test_import_targets_in_other_languages() -> None:
    js = "import React, { useState } from 'react';\nconst fs = require(\"node:fs\");\n"
    assert import_targets(js, "typescript") == ["react", "node:fs"]
    go = 'package main\n\nimport (\n\t"fmt"\n\tlog "log/slog"\n)\n'
    assert import_targets(go, "go") == ["fmt", "log/slog"]
    java = "import java.util.List;\nimport static org.junit.Assert.assertEquals;\n"
    assert import_targets(java, "java") == [
        "java.util.List",
        "org.junit.Assert",
        "org.junit.Assert.assertEquals",
    ]
    cs = "using System.Text;\nusing Json = System.Text.Json;\nusing (var x = Open()) {}\n"
    assert import_targets(cs, "csharp") == ["System.Text", "System.Text.Json"]


def test_routes_inside_docstrings_are_examples_not_routes(fastapi_corpus) -> None:
    lines = split_lines((FASTAPI / "fastapi/exceptions.py").read_text("utf-8"))
    example = next(i for i, line in enumerate(lines, 1) if '@app.get("/items/{item_id}")' in line)
    assert route_lines(lines, "python") == []
    steps = code_flow_candidates(lines, "python")
    assert example not in {s[0] for s in steps}
    assert example + 1 not in signature_lines(lines, "python")  # the example's def
    assert "class HTTPException" in {s[2] for s in steps}


def test_read_text_reads_up_to_the_size_limit_and_refuses_past_it(tmp_path: Path) -> None:
    source = make_source(tmp_path, max_file_bytes=100)
    for name, size in (("small.py", 10), ("at_limit.py", 100), ("over.py", 101), ("empty.py", 0)):
        (tmp_path / name).write_text("x" * size)
    assert source.read_text("small.py") == "x" * 10
    assert source.read_text("at_limit.py") == "x" * 100
    assert source.read_text("over.py") is None
    assert source.read_text("empty.py") == ""
    assert source.read_text("missing.py") is None


def test_read_text_reads_on_when_the_file_grew_after_its_size_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import scriptorium.sources.paths as paths

    source = make_source(tmp_path, max_file_bytes=100)
    (tmp_path / "grown.py").write_text("y" * 50)
    (tmp_path / "too_big.py").write_text("y" * 150)

    class SmallerSize:
        """``os`` as the source module sees it, reporting every file as 5 bytes long."""

        def __getattr__(self, name: str):
            return getattr(os, name)

        @staticmethod
        def fstat(fd: int) -> os.stat_result:
            return os.stat_result((os.fstat(fd).st_mode,) + (0,) * 5 + (5,) + (0,) * 3)

    monkeypatch.setattr(paths, "os", SmallerSize())
    assert source.read_text("grown.py") == "y" * 50
    assert source.read_text("too_big.py") is None
