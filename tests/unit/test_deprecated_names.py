"""A definition marked deprecated where it is declared weighs less (``deprecated_factor``).

The marks are read once, when a block is indexed (``text.features.marked_deprecated``), and
stored with the block's features; the prior reads the flag. A search that asks for legacy
code, or names the definition, leaves it alone.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from scriptorium.domain.model import Corpus, Query
from scriptorium.domain.outcomes import SearchParams
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import features
from tests.support.daemon import engine_from
from tests.unit.test_fusion_priors import candidate, lever_alone

MARKED = {
    "a decorator": '    @deprecated("Use model_dump.")\n    def dict(self):\n        return {}',
    "a qualified decorator": (
        "    @typing_extensions.deprecated('x', category=None)\n    def json(self):\n        pass"
    ),
    "a function decorator": "@np.deprecate(message='use g')\ndef f():\n    return 1",
    "a docstring's directive": (
        '    def old(self):\n        """Old thing.\n\n        .. deprecated:: 1.2\n'
        '           Use new.\n        """\n        return 1'
    ),
    "a docstring's opening": 'def f():\n    """DEPRECATED: use g."""\n    return g()',
    "a warning the body raises": (
        "    def warned(self):\n"
        '        warnings.warn("warned is deprecated", DeprecationWarning, stacklevel=2)\n'
        "        return 2"
    ),
    "a multi-line warning": (
        "def f(*, name):  # pragma: nocover\n    warnings.warn(\n"
        '        message="f() was deprecated, it is not used internally",\n'
        "        category=FastAPIDeprecationWarning,\n    )\n    return name"
    ),
    "sympy's warning": (
        'def f():\n    sympy_deprecation_warning("f is deprecated", '
        'deprecated_since_version="1.10")\n    return 1'
    ),
    "a JSDoc tag": (
        "/**\n * Fetch a thing.\n * @deprecated Use fetchThing instead.\n */\n"
        "export function getThing(id: string): string {\n  return id\n}"
    ),
    "a Java annotation": "@Deprecated\npublic void foo() {}",
    "a Rust attribute": '#[deprecated(since = "1.0", note = "use bar")]\npub fn foo() {}',
    "Go's paragraph": "// Foo does x.\n//\n// Deprecated: use Bar.\nfunc Foo() {}",
    "a C# attribute": '[Obsolete("use Bar")]\npublic void Foo() {}',
}

NOT_MARKED = {
    "a parameter named deprecated": (
        'def get(path, *, deprecated: Optional[bool] = None):\n    """Add a route."""\n    return 1'
    ),
    "an argument deprecated under a condition": (
        "    def param(self, x=None):\n        if x is not None:\n"
        '            warnings.warn("x is deprecated", DeprecationWarning)\n        return 3'
    ),
    "a decorator deprecating an argument": (
        '@deprecate_kwarg("old", "new")\ndef f(new=None):\n    return 1'
    ),
    "a parameter's directive": (
        'def f(a, b):\n    """Do it.\n\n    Parameters\n    ----------\n    a : int\n'
        '        .. deprecated:: 1.0\n    """\n    return 1'
    ),
    "the word in a docstring's sentence": (
        'def f(x):\n    """Return x; the deprecated spelling of g."""\n    return x'
    ),
    "a call that only names the category": (
        "def enable_warnings():\n    import warnings\n"
        "    warnings.filterwarnings('default', '.*', DeprecationWarning, module='pkg.*')"
    ),
    "a warning about something else": (
        'def f():\n    warnings.warn("slow path", RuntimeWarning)\n    return 1'
    ),
}


@pytest.mark.parametrize("body", MARKED.values(), ids=MARKED.keys())
def test_a_definition_marked_deprecated_where_it_is_declared_is_found(body):
    assert features.marked_deprecated(body)


@pytest.mark.parametrize("body", NOT_MARKED.values(), ids=NOT_MARKED.keys())
def test_a_definition_merely_speaking_of_deprecation_is_not_marked(body):
    assert not features.marked_deprecated(body)


def test_the_mark_is_stored_with_the_blocks_features():
    options = (("cjk_bigrams", True), ("drop_stopwords", True), ("split_identifiers", True))
    marked = MARKED["a decorator"]
    stored = features.encode_features(marked, ("dict",), "pkg/main.py", options)
    plain = features.encode_features(NOT_MARKED["a parameter named deprecated"], (), "a.py", ())
    assert features.BlockFeatures(lambda: stored).deprecated
    assert not features.BlockFeatures(lambda: plain).deprecated
    # The extension's features carry every flag but this one (the bit of 4); the build adds it.
    unflagged = bytes((stored[0] & ~4,)) + stored[1:]
    assert not features.BlockFeatures(lambda: unflagged).deprecated
    assert features.with_deprecated_flag(unflagged, marked) == stored


def _prior(body: str, text: str, symbol: str | None = None, path: str = "pkg/main.py") -> float:
    """The score (from 1.0) a code block takes from the priors alone for ``text``."""
    cand = candidate(Corpus.CODE, path, body, 1.0, symbol=symbol)
    settings = lever_alone(deprecated_factor=0.5)
    query = Query(text=text, terms=tuple(text.split()))
    Pipeline(settings, lambda d: []).priors(query, [cand], lambda s: "product")
    return cand.score


def test_deprecated_code_yields_unless_the_query_asks_for_it_or_names_it():
    body = MARKED["a decorator"]
    assert _prior(body, "return the model as a dict") == pytest.approx(0.5)
    assert _prior(body, "the deprecated way to get a dict") == pytest.approx(1.0)
    # Named, it is a lookup of it: the definition prior's, not this one's.
    named = _prior(body, "what does Model.dict() return", symbol="Model.dict")
    assert named == pytest.approx(RankingSettings().definition_factor)
    assert _prior(NOT_MARKED["a parameter named deprecated"], "add a route") == pytest.approx(1.0)
    # A pasted text (an issue, a traceback) is about the code that ran, deprecated or not.
    issue = "Serializing a model gives the wrong output\n\n```\nm.dumps()\n```\n" + "x " * 200
    assert _prior(body, issue) == pytest.approx(1.0)
    # A legacy folder's code weighs less once, by its path, not twice.
    assert _prior(body, "return the model as a dict", path="pkg/v1/main.py") == pytest.approx(0.5)


MODEL = '''\
import warnings

from typing_extensions import deprecated


class Model:
    """A model."""

    @deprecated("The `dumps` method is deprecated; use `model_dump_json` instead.")
    def dumps(self, indent=None):
        """Serialize the model to a JSON string."""
        return self.model_dump_json(indent=indent)

    def model_dump_json(self, indent=None):
        """Write the model's fields out as JSON."""
        return "{}"
'''


def _ranked(tmp_path: Path, text: str, factor: float) -> list[tuple[str, list[str]]]:
    root = tmp_path / "src"
    root.mkdir(exist_ok=True)
    (root / "model.py").write_text(MODEL, encoding="utf-8")
    engine = engine_from(
        tmp_path,
        f"factor-{factor}",
        f'[server]\nwatch = false\n\n[[sources]]\nname = "code"\nkind = "code"\n'
        f'root = "{root}"\ndefault = true\n\n'
        f"[ranking]\nsemantic = false\ndeprecated_factor = {factor}\n",
    )
    outcome = asyncio.run(engine.search(SearchParams(query=text, explain=True)))
    return [(hit.title, [r.name for r in hit.reasons]) for hit in outcome.hits]


def test_the_current_definition_ranks_above_its_deprecated_twin_through_a_search(tmp_path):
    question = "serialize the model to a JSON string"
    # Its words are the deprecated method's: without the prior it comes first.
    assert [title for title, _ in _ranked(tmp_path, question, 1.0)][:2] == [
        "Model.dumps",
        "Model.model_dump_json",
    ]
    shipped = _ranked(tmp_path, question, 0.5)
    assert [title for title, _ in shipped][:2] == ["Model.model_dump_json", "Model.dumps"]
    assert "deprecated" in dict(shipped)["Model.dumps"]
    # Asked for by name, it is what the query wants.
    named = _ranked(tmp_path, "what does Model.dumps return", 0.5)
    assert named[0][0] == "Model.dumps"
    assert "deprecated" not in named[0][1]
