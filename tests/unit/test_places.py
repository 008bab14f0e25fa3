"""The places a query points at (a traceback's frames, ``path:line`` as tools print it): read
from its text, and the definition holding the line ranked first, through a real engine."""

from __future__ import annotations

import asyncio

import pytest

from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.ranking.places import placed_lines
from tests.support.daemon import engine_from
from tests.support.trees import code_config_text


@pytest.mark.parametrize(
    ("text", "places"),
    [
        ("fastapi/routing.py:1855", (("fastapi/routing.py", 1855),)),
        ("src\\app.ts:12:4: error TS2304", (("src/app.ts", 12),)),
        (
            'Traceback (most recent call last):\n  File "/venv/site-packages/pkg/core.py", '
            'line 120, in run\n  File "pkg/util.py", line 7, in helper\nValueError: bad',
            (("/venv/site-packages/pkg/core.py", 120), ("pkg/util.py", 7)),
        ),
        # Numbers with a colon that are no place.
        ("a ratio of 3:1 at http://localhost:8080/docs, version 1.2:3", ()),
        ("how do I read a file line by line", ()),
    ],
)
def test_the_places_a_query_points_at(text, places):
    assert placed_lines(text) == places


SHAPES = '''\
def area(shape):
    """The area of a shape."""
    width, height = shape
    return width * height


def perimeter(shape):
    """The perimeter of a shape: twice its width and its height, for a shape that has them."""
    width, height = shape
    return 2 * (width + height)
'''


def _engine(tmp_path, ranking: str = "") -> LocalEngine:
    code = tmp_path / "code"
    (code / "geometry").mkdir(parents=True, exist_ok=True)
    (code / "geometry" / "shapes.py").write_text(SHAPES, encoding="utf-8")
    (code / "main.py").write_text("def main():\n    return area((2, 3))\n", encoding="utf-8")
    return engine_from(tmp_path, f"config{len(ranking)}", code_config_text(code, ranking))


def _first(engine: LocalEngine, query: str):
    outcome = asyncio.run(engine.search(SearchParams(query=query, explain=True)))
    return outcome.hits[0]


def test_the_definition_holding_a_named_line_ranks_first(tmp_path):
    engine = _engine(tmp_path)
    # Its words say "shape" and "width" as the other definition does, more often.
    first = _first(engine, "geometry/shapes.py:4 wrong shape width")
    assert first.title == "area"
    assert "place" in {reason.name for reason in first.reasons}
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/home/me/project/main.py", line 2, in main\n'
        '  File "/venv/lib/site-packages/geometry/shapes.py", line 10, in perimeter\n'
        "TypeError: shape width height"
    )
    assert _first(engine, traceback).title == "perimeter"
    off = _first(
        _engine(tmp_path, "place_factor = 1.0\n"), "geometry/shapes.py:4 wrong shape width"
    )
    assert off.title == "perimeter"
    assert "place" not in {reason.name for reason in off.reasons}


def test_a_users_own_file_of_one_name_picks_none_of_the_tree(tmp_path):
    # ``/home/me/other/main.py`` ends like the tree's ``main.py`` by one segment only.
    first = _first(_engine(tmp_path), 'File "/home/me/other/main.py", line 1, in main\nshape width')
    assert "place" not in {reason.name for reason in first.reasons}
