"""What a long query says: which terms are searched and how much each weighs, and which
indexed files it names by path or module name."""

from __future__ import annotations

import dataclasses

import pytest

from scriptorium.domain.model import Corpus, Query
from scriptorium.index.suffixes import PathSuffixes
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.ranking.questions import foreign_question
from scriptorium.ranking.signals import (
    asked_kinds,
    asked_text,
    last_named,
    named_files,
    path_mentions,
    title_line,
    weighted_terms,
)
from scriptorium.settings.ranking import RankingSettings
from scriptorium.text import counted_query_terms
from tests.unit.test_fusion_priors import candidate


def test_a_query_over_the_term_cap_keeps_its_first_terms_or_its_most_frequent():
    text = "alpha beta gamma delta beta delta delta"
    assert counted_query_terms(text, limit=2) == [("alpha", 1), ("beta", 2)]
    # Most often said first, then by first appearance; the kept terms stay in query order.
    assert counted_query_terms(text, limit=2, frequent_first=True) == [("beta", 2), ("delta", 3)]
    assert counted_query_terms(text) == [("alpha", 1), ("beta", 2), ("gamma", 1), ("delta", 3)]


def test_term_weights_follow_repetition_and_identifier_shape_only_when_asked():
    text = "the merge fails in `combine_by_coords` merge merge"
    assert weighted_terms(text, RankingSettings())[1] == ()
    terms, weights = weighted_terms(
        text, RankingSettings(query_term_frequency=1.0, long_query_chars=0)
    )
    by_term = dict(zip(terms, weights, strict=True))
    assert by_term["merg"] > by_term["fail"] == 1.0  # said three times (stemmed "merge")
    terms, weights = weighted_terms(
        text, RankingSettings(identifier_term_weight=2.0, long_query_chars=0)
    )
    by_term = dict(zip(terms, weights, strict=True))
    assert by_term["combine_by_coords"] == by_term["coord"] == 2.0 and by_term["fail"] == 1.0


def test_paths_traceback_frames_and_module_names_are_mentions():
    frame = 'File "/venv/lib/site-packages/sphinx/util/inspect.py", line 3, in signature'
    (keys,) = path_mentions(frame)
    assert keys[0] == "venv/lib/site-packages/sphinx/util/inspect.py"
    assert keys[-1] == "util/inspect.py"  # never the bare file name of a longer path
    assert path_mentions("see diff.py") == (("diff.py",),)
    (module,) = path_mentions("xarray.core.variable.Variable breaks")
    assert "xarray/core/variable.py" in module and "xarray/core/__init__.py" in module
    assert path_mentions("xarray.core.variable.Variable", modules=False) == ()
    assert path_mentions("plain words, no names") == ()


def test_a_mention_names_the_files_its_most_specific_suffix_picks_unless_too_many_do():
    paths = [
        "sphinx/util/inspect.py",
        "other/util/inspect.py",
        "other/xutil/inspect.py",  # ends with the letters, not the segments
        *(f"p{i}/__init__.py" for i in range(10)),
    ]
    table = PathSuffixes(len(paths), paths.__getitem__)

    def ending(key: str, limit: int | None = None) -> list[tuple[str, str]]:
        return [("code", paths[at]) for at in table.positions(key, limit)]

    frame = "/site-packages/sphinx/util/inspect.py"
    assert named_files(frame, ending) == {("code", "sphinx/util/inspect.py")}
    assert named_files("util/inspect.py", ending) == {
        ("code", "sphinx/util/inspect.py"),
        ("code", "other/util/inspect.py"),
    }
    assert named_files("__init__.py", ending) == frozenset()  # ten files end so: too vague


def test_blocks_of_a_named_file_are_weighed_up():
    pipeline = Pipeline(RankingSettings(named_file_factor=2.0), lambda doc: [])
    named = candidate(Corpus.CODE, "pkg/named.py", "def f():\n    pass\n", 1.0)
    other = candidate(Corpus.CODE, "pkg/other.py", "def g():\n    pass\n", 1.0)
    query = Query(text="pkg/named.py fails", terms=("fail",), explain=True)
    query = dataclasses.replace(query, files=frozenset({(named.source, "pkg/named.py")}))
    pipeline.priors(query, [named, other], lambda source: "product")
    assert named.score == 2.0 and other.score == 1.0
    assert any(reason.name == "named-file" for reason in named.reasons)


def test_term_weights_leave_short_queries_alone_past_a_length():
    settings = RankingSettings(identifier_term_weight=2.0, long_query_chars=30)
    assert weighted_terms("where is `include_router`", settings)[1] == ()
    long = "the router drops prefixes when `include_router` nests routers twice"
    terms, weights = weighted_terms(long, settings)
    assert dict(zip(terms, weights, strict=True))["include_router"] == 2.0


ISSUE_TEXT = """The linkcheck builder crashes, see https://github.com/org/proj/issues/12

```python
import pytest
```
  File "/src/proj/tests/test_build.py", line 3, in `run`
Expected the report to list the broken link."""


def asks(text: str, scope: str) -> frozenset[str]:
    return asked_kinds(asked_text(text, RankingSettings(auxiliary_asks=scope)))


def test_links_code_and_paths_do_not_ask_for_a_kind_in_prose_scope():
    assert asks(ISSUE_TEXT, "words") == {"meta", "tests"}
    assert asks(ISSUE_TEXT, "prose") == frozenset()
    assert asks("run the tests on github", "prose") == {"tests", "meta"}


def test_short_scope_lets_only_questions_ask_for_a_kind():
    assert asks("which tests cover the router", "short") == {"tests"}
    pasted = "which tests cover the router " * 20
    assert asks(pasted, "short") == frozenset()


def test_a_test_file_yields_to_library_code_when_only_a_link_says_github_and_tests():
    settings = RankingSettings(auxiliary_factor=0.5, auxiliary_asks="prose", term_coverage=0.0)
    pipeline = Pipeline(settings, lambda doc: [])
    test_file = candidate(Corpus.CODE, "tests/test_build.py", "def test_run():\n    pass\n", 1.0)
    library = candidate(Corpus.CODE, "proj/build.py", "def run():\n    pass\n", 0.8)
    query = Query(text=ISSUE_TEXT, terms=("linkcheck", "builder"), explain=True)
    pipeline.priors(query, [test_file, library], lambda source: "product")
    assert test_file.score == 0.5 and library.score == 0.8


def test_documentation_yields_to_code_only_for_a_long_pasted_query():
    settings = RankingSettings(
        long_query_docs_factor=0.5, long_query_chars=40, question_code_factor=1.0
    )
    pipeline = Pipeline(settings, lambda doc: [])
    for text, docs_score in (("where is the router", 1.0), (ISSUE_TEXT, 0.5)):
        page = candidate(Corpus.DOCS, "docs/router.md", "The router.\n", 1.0)
        code = candidate(Corpus.CODE, "proj/router.py", "def route():\n    pass\n", 1.0)
        query = Query(text=text, terms=("router",), explain=True)
        pipeline.priors(query, [page, code], lambda source: "product")
        assert (page.score, code.score) == (docs_score, 1.0)


PROSE = " ".join(f"word{i:03d}" for i in range(80))
ISSUE = f"{PROSE} and then `Plotter._finalize_figure` draws the grid"


def test_a_pasted_text_over_the_term_cap_can_keep_its_identifiers_first():
    settings = RankingSettings(
        max_query_terms=64, long_query_chars=100, identifier_terms_first=True
    )
    terms, _ = weighted_terms(ISSUE, settings)
    assert len(terms) == 64
    assert {"plotter._finalize_figure", "plotter", "finalize_figure"} <= set(terms)
    assert terms[0] == "word000"  # the kept terms stay in the order the text says them
    off = weighted_terms(ISSUE, dataclasses.replace(settings, identifier_terms_first=False))[0]
    assert len(off) == 64 and "plotter" not in off
    # A question is never reordered: only pasted texts are.
    short = dataclasses.replace(settings, long_query_chars=10_000)
    assert "plotter" not in weighted_terms(ISSUE, short)[0]


def test_a_definition_the_query_names_qualified_weighs_more_than_its_bare_name():
    def scored(text: str, anchor: str, **levers) -> float:
        cand = candidate(Corpus.CODE, "pkg/plot.py", "def finalize(self):\n", 1.0)
        block = dataclasses.replace(cand.block, symbol="finalize", anchor=anchor)
        cand = dataclasses.replace(cand, block=block)
        pipeline = Pipeline(RankingSettings(long_query_chars=10_000, **levers), lambda d: [])
        pipeline.priors(Query(text=text, terms=("final",)), [cand], lambda s: "product")
        return cand.score

    qualified = "Plotter.finalize"
    assert scored("fix `Plotter.finalize`", qualified) == 1.5
    assert scored("fix `finalize`", qualified) == 1.2  # the bare name: definition_factor
    assert scored("fix `Figure.finalize`", qualified) == 1.2  # another class's
    assert scored("fix `Plotter.finalize`", qualified, qualified_definition_factor=1.0) == (1.2)


def test_of_the_files_a_traceback_names_the_innermost_frame_is_named_last():
    files = frozenset({("code", "src/pkg/runner.py"), ("code", "src/pkg/setuponly.py")})
    trace = (
        "src/pkg/runner.py:244: in from_call\n    result = func()\n"
        "src/pkg/setuponly.py:69: BytesWarning\n"
    )
    assert last_named(trace, files) == ("code", "src/pkg/setuponly.py")
    assert last_named(trace + "see also pkg.runner for the hook", files) == (
        "code",
        "src/pkg/runner.py",
    )
    assert last_named(trace, frozenset({("code", "src/pkg/runner.py")})) is None


def test_the_file_named_last_weighs_more_than_the_other_named_ones():
    pipeline = Pipeline(RankingSettings(named_file_factor=1.5, last_file_factor=1.3), lambda d: [])
    first = candidate(Corpus.CODE, "pkg/runner.py", "def f():\n    pass\n", 1.0)
    last = candidate(Corpus.CODE, "pkg/setuponly.py", "def g():\n    pass\n", 1.0)
    files = frozenset({(first.source, "pkg/runner.py"), (last.source, "pkg/setuponly.py")})
    query = Query(text="pkg/runner.py pkg/setuponly.py", terms=("f",), files=files)
    query = dataclasses.replace(query, last_file=(last.source, "pkg/setuponly.py"))
    pipeline.priors(query, [first, last], lambda source: "product")
    assert first.score == 1.5 and abs(last.score - 1.95) < 1e-9


def test_a_pasted_texts_title_terms_weigh_more_when_asked():
    issue = (
        "Autodoc ignores inherited members\n"
        "When I build the docs with `make html` the members of the parent class are missing, "
        "and the build prints no warning about the option either. " * 3
    )
    settings = RankingSettings(title_term_weight=2.0)
    terms, weights = weighted_terms(issue, settings)
    by_term = dict(zip(terms, weights, strict=True))
    assert by_term["autodoc"] == by_term["inherit"] == 2.0
    assert by_term["build"] == by_term["warn"] == 1.0
    # 1.0 is off; a question is never a title; a first line that is the whole text or longer
    # than title_chars is no title.
    assert weighted_terms(issue, RankingSettings(title_term_weight=1.0))[1] == ()
    assert dict(zip(*weighted_terms(issue, RankingSettings()), strict=True))["autodoc"] == 1.5
    assert weighted_terms("autodoc ignores inherited members", settings)[1] == ()
    assert title_line("one line only, however long it is", 200) == ""
    assert title_line("x" * 201 + "\nbody", 200) == ""
    assert title_line("\n  Title here \nbody", 200) == "Title here"
    # A line ending with a colon is a label for what follows, not a title.
    for label in ("Problem:", "Traceback (most recent call last):", "Steps to reproduce:"):
        assert title_line(f"{label}\n  File 'x.py', line 3, in <module>\nKeyError", 200) == ""
    problem = "Problem:\nHow do I turn a long table into a wide one, one column per month?"
    assert weighted_terms(problem, settings)[1] == ()
    # A snippet's first line of code is no title; a title quoting code still is.
    snippet = "import numpy as np\nx = np.arange(10)\n# plot x against its square\n"
    assert title_line(snippet, 200) == "" and weighted_terms(snippet, settings)[1] == ()
    quoting = '`autodoc_typehints = "description"` causes autoclass to add a return type\nbody'
    assert title_line(quoting, 200).startswith("`autodoc_typehints")


@pytest.mark.parametrize(
    ("text", "foreign"),
    [
        ("wie kann ich abhaengigkeiten mit yield nutzen", True),
        ("comment utiliser les dependances avec yield", True),
        ("como usar dependencias con yield", True),
        ("hoe kan ik een dependency met yield maken", True),
        ("dependencies with yield", False),
        ("how do I use the os module with em units", False),
        ("die with an error when the mit license is missing", False),
        ("why does my component render twice in development", False),
    ],
)
def test_a_question_in_another_language_is_told_by_its_function_words(text, foreign):
    assert foreign_question(text) is foreign


def test_a_pasted_texts_numbers_can_be_left_out_of_its_terms():
    dump = "the labels come out wrong\n[[1 0 0]\n [0 1 0]]\nin tf.one_hot with depth 10"
    kept = weighted_terms(dump, RankingSettings())[0]
    assert {"0", "1", "10"} <= set(kept)
    dropped = weighted_terms(dump, RankingSettings(drop_numbers=True))[0]
    assert not {"0", "1", "10"} & set(dropped) and {"one_hot", "depth"} <= set(dropped)
    # A question is not a pasted text: its numbers stay.
    assert "3" in weighted_terms("what changed in python 3", RankingSettings(drop_numbers=True))[0]
