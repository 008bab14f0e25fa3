"""An experimental API's pages and code rank below the stable ones unless the query asks for
them (``ranking/paths.py``: an ``experimental/`` folder is an auxiliary kind)."""

from __future__ import annotations

import asyncio

from scriptorium.domain.outcomes import SearchParams
from tests.support.daemon import engine_from

# The experimental page says the query's words more often than the stable one does: without
# the prior it comes first.
EXPERIMENTAL = (
    "# numpy.sum\n\nSum the elements of a tensor, as numpy sum does: sum over an axis, "
    "the sum of all elements of a tensor.\n"
)
STABLE = "# reduce_sum\n\nComputes the sum of elements across the dimensions of a tensor.\n"


def _ranked(tmp_path, text: str, factor: float, rules: str = "") -> list[tuple[str, list[str]]]:
    docs = tmp_path / "docs"
    (docs / "experimental" / "numpy").mkdir(parents=True, exist_ok=True)
    (docs / "math").mkdir(exist_ok=True)
    (docs / "experimental" / "numpy" / "sum.md").write_text(EXPERIMENTAL, encoding="utf-8")
    (docs / "math" / "reduce_sum.md").write_text(STABLE, encoding="utf-8")
    engine = engine_from(
        tmp_path,
        f"factor-{factor}-{bool(rules)}",
        f'[server]\nwatch = false\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
        f'root = "{docs}"\ndefault = true\n{rules}\n'
        f"[ranking]\nsemantic = false\nauxiliary_factor = {factor}\n",
    )
    outcome = asyncio.run(engine.search(SearchParams(query=text, explain=True)))
    return [(hit.location.split("#")[0], [r.name for r in hit.reasons]) for hit in outcome.hits]


def test_the_stable_page_ranks_above_the_experimental_one_through_a_search(tmp_path):
    question = "sum the elements of a tensor"
    assert [path for path, _ in _ranked(tmp_path, question, 1.0)] == [
        "experimental/numpy/sum",
        "math/reduce_sum",
    ]
    shipped = _ranked(tmp_path, question, 0.5)
    assert [path for path, _ in shipped] == ["math/reduce_sum", "experimental/numpy/sum"]
    assert "auxiliary" in dict(shipped)["experimental/numpy/sum"]
    # Asked for by name, the experimental page is what the query wants.
    asked = _ranked(tmp_path, "the experimental numpy sum of a tensor", 0.5)
    assert asked[0][0] == "experimental/numpy/sum"
    assert "auxiliary" not in asked[0][1]


def test_a_class_rule_makes_an_experimental_folder_the_product_again(tmp_path):
    # A project whose own API lives under experimental/ says so with its source's class rules:
    # a page with a class is weighed by that class, not by its folder's kind.
    rules = '[sources.class_rules]\n"experimental/**" = "product"\n'
    ranked = _ranked(tmp_path, "sum the elements of a tensor", 0.5, rules)
    assert [path for path, _ in ranked] == ["experimental/numpy/sum", "math/reduce_sum"]
    assert "auxiliary" not in dict(ranked)["experimental/numpy/sum"]
