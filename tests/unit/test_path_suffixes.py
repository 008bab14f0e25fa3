"""The sorted suffix table answers what a table of every trailing run of segments did."""

from __future__ import annotations

import random

from scriptorium.index.suffixes import PathSuffixes

PATHS = [
    "fastapi/routing.py",
    "docs_src/app/main.py",
    "examples/docs_src/app/main.py",
    "docs_src/app/main.pyc",
    "docs_src/app-main.py",
    "docs_src/xapp/main.py",
    "Docs_Src/App/Main.py",
    "main.py",
    "pkg/__init__.py",
    "pkg/sub/__init__.py",
    "a/b.c/d.py",
    "a/b-c/d.py",
]


def every_suffix_table(paths: list[str]) -> dict[str, list[int]]:
    table: dict[str, list[int]] = {}
    for at, path in enumerate(paths):
        parts = path.lower().split("/")
        for i in range(len(parts)):
            table.setdefault("/".join(parts[i:]), []).append(at)
    return table


def test_whole_segments_only_and_case_folded():
    table = PathSuffixes(len(PATHS), PATHS.__getitem__)
    found = sorted(table.positions("app/main.py"))
    assert [PATHS[at] for at in found] == [
        "docs_src/app/main.py",
        "examples/docs_src/app/main.py",
        "Docs_Src/App/Main.py",
    ]
    assert sorted(table.positions("main.py")) == [1, 2, 5, 6, 7]
    assert table.positions("pp/main.py") == []  # a segment's tail is not a segment
    assert table.positions("") == []
    assert len(table.positions("__init__.py", limit=1)) == 1


def test_it_agrees_with_the_table_of_every_suffix_on_random_trees():
    rng = random.Random(7)
    names = ["a", "b", "a.b", "a-b", "ab", "A", "__init__.py", "x.py", "x.pyc", "x-py"]
    paths = sorted(
        {"/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) for _ in range(400)}
    )
    table = PathSuffixes(len(paths), paths.__getitem__)
    for suffix, positions in every_suffix_table(paths).items():
        assert sorted(table.positions(suffix)) == sorted(positions), suffix
    assert table.positions("zz/a") == []
