"""Definition blocks and qualified names for the grammar languages beyond the first five:
Rust, C, C++, C#, Ruby, PHP, Kotlin, Swift, Scala and shell, each with its own separators."""

from __future__ import annotations

import pytest

from scriptorium.domain.model import Block
from scriptorium_plugins.code.extractor import CodeExtractor
from scriptorium_plugins.code.languages import definitions_query, has_grammar, parser

LANGUAGES = ("rust", "c", "cpp", "csharp", "ruby", "php", "kotlin", "swift", "scala", "shell")


def definitions(path: str, text: str) -> dict[str, tuple[str, int, int, tuple[str, ...]]]:
    """anchor -> (kind, first line, last line, section path) of every definition block."""
    blocks: tuple[Block, ...] = CodeExtractor().extract(path, text).blocks
    return {
        b.anchor: (b.symbol_kind, b.start_line, b.end_line, b.section_path)
        for b in blocks
        if b.symbol is not None
    }


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_pinned_grammar_loads_and_its_query_compiles(language: str) -> None:
    # A wheel whose ABI the pinned tree-sitter cannot load would leave the language on windows.
    assert has_grammar(language)
    assert parser(language) is not None
    assert definitions_query(language) is not None


RUST = """\
mod geometry {
    /// A point.
    #[derive(Debug)]
    pub struct Point<T> {
        x: T,
    }

    impl<T> Point<T> {
        pub fn new(x: T) -> Self {
            Point { x }
        }
    }

    impl fmt::Display for Point<i32> {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            Ok(())
        }
    }

    pub trait Area {
        fn area(&self) -> f64;
    }
}

fn main() {}
"""


def test_rust_impl_blocks_scope_their_methods_under_the_type() -> None:
    found = definitions("src/geometry.rs", RUST)
    assert found["geometry"][0] == "module"
    assert found["geometry::Point"] == ("struct", 2, 6, ("geometry", "Point"))  # doc + attribute
    assert found["geometry::impl Point"][:3] == ("impl", 8, 12)
    assert found["geometry::Point::new"] == ("method", 9, 11, ("geometry", "Point", "new"))
    assert found["geometry::impl Display for Point"][0] == "impl"
    assert found["geometry::Point::fmt"][0] == "method"
    assert found["geometry::Area::area"][0] == "method"
    assert found["main"][0] == "function"


CPP = """\
namespace geo {
template <typename T>
class Point {
 public:
  T norm() const { return x; }
 private:
  T x;
};
struct Pair { int a; };
}
int geo::helper(int *p) { return *p; }
static const char *name(void) { return "x"; }
"""


def test_cpp_namespaces_classes_and_out_of_class_definitions() -> None:
    found = definitions("src/geo.hpp", CPP)
    assert found["geo::Point"][:3] == ("class", 2, 8)  # the template line belongs to it
    assert found["geo::Point::norm"][:2] == ("method", 5)
    assert found["geo::Pair"][0] == "struct"
    assert found["geo::helper"] == ("function", 11, 11, ("geo", "helper"))
    assert found["name"][0] == "function"  # a pointer-returning function keeps its name


def test_c_functions_structs_and_typedefs() -> None:
    text = (
        "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
        "typedef struct { int x; } point_t;\n"
        "struct list { struct list *next; };\n"
        "static int *find(struct list *l) {\n  return 0;\n}\n"
    )
    found = definitions("src/list.c", text)
    assert found["MAX"][0] == "macro"
    assert found["point_t"][0] == "type"
    assert found["list"][0] == "struct"
    assert found["find"][:3] == ("function", 4, 6)


CSHARP = """\
namespace Acme.Tools;

public class Widget {
    public Widget() {}
    public int Size { get; set; }
    public void Draw() {}
}
"""


def test_csharp_file_scoped_namespaces_hold_what_follows() -> None:
    found = definitions("src/Widget.cs", CSHARP)
    assert found["Acme.Tools"][:3] == ("namespace", 1, 7)
    assert found["Acme.Tools.Widget"][0] == "class"
    assert found["Acme.Tools.Widget.Widget"][0] == "constructor"
    assert found["Acme.Tools.Widget.Size"][0] == "property"
    assert found["Acme.Tools.Widget.Draw"][:2] == ("method", 6)


RUBY = """\
module Acme
  class Widget < Base
    def initialize(x)
      @x = x
    end

    def self.build
      new(1)
    end
  end
end
"""


def test_ruby_instance_methods_use_hash_and_singleton_methods_a_dot() -> None:
    found = definitions("lib/acme/widget.rb", RUBY)
    assert found["Acme::Widget"][0] == "class"
    assert found["Acme::Widget#initialize"] == (
        "method",
        3,
        5,
        ("Acme", "Widget", "initialize"),
    )
    assert found["Acme::Widget.build"][:3] == ("method", 7, 9)


PHP = """\
<?php
namespace App\\Models;

class User extends Model {
    public function name(): string {
        return "x";
    }
}

function helper() { return 1; }
"""


def test_php_namespaces_and_class_methods() -> None:
    found = definitions("src/Models/User.php", PHP)
    assert found["App\\Models"][:3] == ("namespace", 2, 10)
    assert found["App\\Models\\User"][0] == "class"
    assert found["App\\Models\\User::name"][:3] == ("method", 5, 7)
    assert found["App\\Models\\helper"][0] == "function"


def test_kotlin_swift_and_scala_use_dots() -> None:
    kotlin = definitions(
        "src/Point.kt",
        "interface Shape {\n    fun area(): Double\n}\n"
        "data class Point(val x: Int) {\n    fun norm(): Int {\n        return x\n    }\n}\n"
        "object Registry {\n    fun get() = 1\n}\n",
    )
    assert kotlin["Shape"][0] == "interface"
    assert kotlin["Point.norm"][:3] == ("method", 5, 7)
    assert kotlin["Registry.get"][0] == "method"
    swift = definitions(
        "Sources/Point.swift",
        "struct Point {\n    init(x: Int) {}\n    func norm() -> Int { return 0 }\n"
        "    static func == (a: Point, b: Point) -> Bool { true }\n}\n"
        "extension Point {\n    func twice() -> Int { return 1 }\n}\n",
    )
    assert swift["Point"][0] == "struct"
    assert swift["Point.init"][0] == "constructor"
    assert swift["Point.norm"][0] == "method"
    assert "Point.Bool" not in swift  # an operator is not named after its return type
    assert swift["extension Point"][0] == "extension"
    assert swift["Point.twice"][0] == "method"
    scala = definitions(
        "src/Point.scala",
        "trait Shape { def area: Double }\nobject Point {\n  def origin: Int = 0\n}\n",
    )
    assert scala["Shape"][0] == "trait"
    assert scala["Point.origin"][:2] == ("method", 3)


def test_shell_functions_are_definitions() -> None:
    found = definitions(
        "scripts/build.sh", "#!/bin/bash\nusage() { echo usage; }\nfunction build {\n  make\n}\n"
    )
    assert found["usage"][:2] == ("function", 2)
    assert found["build"][:3] == ("function", 3, 5)
