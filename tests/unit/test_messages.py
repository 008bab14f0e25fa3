"""An error message a query quotes: its fixed fragments, and the block that holds them ranked
where the error comes from, through a real engine over a small tree."""

from __future__ import annotations

import asyncio

import pytest

from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.ranking.messages import normalized, quoted_messages
from tests.support.daemon import engine_from
from tests.support.trees import code_config_text


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("ValueError: Matrix must be symmetric.", ("matrix must be symmetric",)),
        # What varies between runs (quoted values, numbers, paths) is cut out.
        (
            "RuntimeError: Frontend file 'index.html' does not exist in directory '/srv/app'",
            ("does not exist in directory",),
        ),
        (
            "E   AssertionError: Status code 204 must not have a response body",
            ("must not have a response body",),
        ),
        # A traceback's last line, with the exception's module.
        (
            'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
            "sympy.polys.polyerrors.PolynomialError: generator must be a Symbol",
            ("generator must be a symbol",),
        ),
        # Too little left to be one message's words; no exception line at all.
        ("KeyError: 'name'", ()),
        ("ValueError: bad value 42", ()),
        ("how do I fix a ValueError when the matrix is not symmetric", ()),
    ],
)
def test_the_fixed_fragments_of_a_quoted_message(text, fragments):
    assert quoted_messages(text) == fragments


def test_a_message_is_held_literally_whatever_the_whitespace_and_case():
    body = 'if not M.is_symmetric():\n    raise ValueError("Matrix must be\n    symmetric.")'
    assert "matrix must be symmetric" in normalized(body)
    assert "matrix must be symmetric" not in normalized("matrix symmetric must be")


LINALG = '''\
def cholesky(matrix):
    """Cholesky factors of a symmetric matrix."""
    if not matrix.is_symmetric():
        raise ValueError("Matrix must be symmetric.")
    return factor(matrix)


class SymmetricMatrixValueError(ValueError):
    """The ValueError of a matrix that must be symmetric: a symmetric matrix was expected,
    and the matrix is not symmetric (a symmetric matrix equals its transpose)."""
'''


def _engine(tmp_path, ranking: str = "") -> LocalEngine:
    code = tmp_path / "code"
    code.mkdir(exist_ok=True)
    (code / "linalg.py").write_text(LINALG, encoding="utf-8")
    for n in range(4):
        # The same phrase in many places says where nothing comes from.
        (code / f"shape{n}.py").write_text(
            f'def check{n}(x):\n    raise TypeError("object has no attribute shape {n}")\n',
            encoding="utf-8",
        )
    return engine_from(tmp_path, f"config{len(ranking)}", code_config_text(code, ranking))


def _search(engine: LocalEngine, query: str):
    return asyncio.run(engine.search(SearchParams(query=query, explain=True)))


def test_the_block_that_raises_a_quoted_message_ranks_first(tmp_path):
    query = "ValueError: Matrix must be symmetric."
    outcome = _search(_engine(tmp_path), query)
    first = outcome.hits[0]
    assert first.title == "cholesky"
    assert "message" in {reason.name for reason in first.reasons}
    # Off, the words alone put the block that says them most first.
    off = _search(_engine(tmp_path, "message_factor = 1.0\n"), query)
    assert off.hits[0].title == "SymmetricMatrixValueError"


def test_a_phrase_many_blocks_hold_marks_none(tmp_path):
    outcome = _search(_engine(tmp_path), "AttributeError: object has no attribute shape")
    assert all("message" not in {r.name for r in hit.reasons} for hit in outcome.hits)
