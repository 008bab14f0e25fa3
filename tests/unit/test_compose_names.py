"""How ExpandRelated reads code names out of a doc section (``compose/names.py``)."""

from __future__ import annotations

import pytest

from scriptorium.compose.names import code_spans, name_in


def test_code_spans_join_a_span_that_wraps_a_line_and_skip_fenced_code() -> None:
    text = (
        "Declare `scriptorium.plugin.Key(name, type, default,\nhelp)` and ``a `tick` b``.\n"
        "```python\nx = `not a span`\n```\nThen `hookspecs.py`."
    )
    assert code_spans(text) == [
        "scriptorium.plugin.Key(name, type, default, help)",
        "a `tick` b",
        "hookspecs.py",
    ]


@pytest.mark.parametrize(
    ("span", "name"),
    [
        ("scriptorium.plugin.Key(name, type, default, help)", "scriptorium.plugin.Key"),
        ("scriptorium_register_source_kinds(register)", "scriptorium_register_source_kinds"),
        ("@hookimpl", None),
        ("@app.get", "app.get"),
        ("hookspecs.py", "hookspecs.py"),
        ("content/code.py#cut_snippet", "content/code.py#cut_snippet"),
        ("Class.method", "Class.method"),
        ("OAuth2PasswordBearer", "OAuth2PasswordBearer"),
        ("extract(path, text)", "extract"),
        ("register", None),  # a bare lower-case word: a key, a value or English
        ("make lint", None),
        ('"*.md"', None),
        ("[[sources]]", None),
    ],
)
def test_name_in(span: str, name: str | None) -> None:
    assert name_in(span) == name


def test_the_related_sets_parse_and_every_case_is_a_related_case() -> None:
    from pathlib import Path

    from scriptorium.evaluation.evalset import EvalSetError, load_eval_set, parse_lines

    eval_dir = Path(__file__).resolve().parents[2] / "eval"
    for name in ("related.jsonl", "related-self.jsonl"):
        cases = load_eval_set(eval_dir / name)
        assert cases and all(c.related and c.acceptable and c.query is None for c in cases)
    with pytest.raises(EvalSetError, match="related case needs"):
        parse_lines(['{"id": "r", "related": "docs/x#y", "acceptable": [], "tag": "t"}'])


def test_a_name_defined_in_many_places_is_counted_not_loaded() -> None:
    from types import SimpleNamespace

    from scriptorium.compose.names import MAX_CANDIDATES, NameResolver

    class View:
        def definitions_of(self, snapshot, name: str) -> int:
            return MAX_CANDIDATES + 1

        def symbols(self, snapshot):
            raise AssertionError("the definitions of a common name were loaded")

        def code_by_suffix(self, snapshot) -> dict:
            return {}  # no module client.py

    resolver = NameResolver(SimpleNamespace(view=View(), snapshot=None))
    assert resolver.resolve("__init__") == []
    assert resolver.resolve("Client.send") == []
