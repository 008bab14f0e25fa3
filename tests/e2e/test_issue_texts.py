"""An issue text pasted as a query: the file its traceback names, and library code above the
tests and templates that repeat its words, through a real daemon on a small repository."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import write, write_tree

MERGE = '''"""Joining two frames."""


def combine(left, right):
    """Join ``left`` and ``right`` on their shared index."""
    return left.join(right)
'''

ALIGN = '''"""Aligning frames before they are combined."""


class Aligner:
    def combine(self, frames):
        """Align the frames, then combine them: raises ValueError when the frames do not
        align, and the error names the frames that do not align. Joining two frames that
        share their index is what combine expects; to reproduce an error, build two small
        frames with the same index and combine them."""
        return [frame.reindex() for frame in frames]
'''

TEST = """import pytest

from pkg.core.merge import combine


def test_combine_raises_when_frames_do_not_align():
    # combine frames; the error says the frames do not align (ValueError)
    with pytest.raises(ValueError, match="frames do not align"):
        combine(frame_a(), frame_b())
"""

TEMPLATE = """# Bug report

Describe the bug: what error was raised, the traceback, and what you expected.

To reproduce: the smallest code that raises the error.
"""

CONTRIBUTING = """# Contributing

Please read the contributing guidelines and the code of conduct before you open an issue, and
search the tracker first: a similar issue may be open or closed already. Hidden comments of
the templates are not shown when you submit.
"""

FILES = {
    "CONTRIBUTING.md": CONTRIBUTING,
    "pkg/core/merge.py": MERGE,
    "pkg/core/align.py": ALIGN,
    "tests/test_merge.py": TEST,
    ".github/ISSUE_TEMPLATE/bug_report.md": TEMPLATE,
}

ISSUE = """combine raises ValueError although the frames align

Describe the bug: joining two frames that share their index raises an error; I expected the
joined frame. To reproduce, build two small frames with the same index and combine them.

Traceback (most recent call last):
  File "/home/me/project/run.py", line 12, in <module>
    out = combine(a, b)
  File "/home/me/venv/lib/python3.12/site-packages/pkg/core/merge.py", line 6, in combine
    return left.join(right)
ValueError: frames do not align
"""


def serving(root: Path, files: dict[str, str], config: Callable[[Path], str]) -> Iterator:
    """A daemon over ``files`` written under ``root/repo``, configured by ``config(repo)``."""
    repo = write_tree(root / "repo", files)
    path = write(root / "config.toml", "[server]\nwatch = false\n\n" + config(repo))
    with running(["--config", str(path)], root / "state") as d:
        yield d


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    yield from serving(
        tmp_path_factory.mktemp("issue-texts"),
        FILES,
        lambda repo: (
            f'[[sources]]\nname = "repo"\nkind = "code"\nroot = "{repo}"\n'
            f'default = true\ninclude = ["**/*.py", "**/*.md"]\n'
        ),
    )


def files(response: pb.SearchResponse) -> list[str]:
    return list(dict.fromkeys(r.location.split("#")[0] for r in response.results))


def test_the_file_a_traceback_names_comes_first_and_says_why(daemon):
    response = daemon.stub.Search(pb.SearchRequest(query=ISSUE, explain=True), timeout=30)
    assert files(response)[0] == "pkg/core/merge.py", files(response)
    reasons = {reason.name for reason in response.results[0].reasons}
    assert "named-file" in reasons


def test_tests_and_issue_templates_yield_to_library_code_unless_asked_for(daemon):
    query = "combine raises ValueError when the frames do not align; describe the error"
    found = files(daemon.stub.Search(pb.SearchRequest(query=query), timeout=30))
    library = min(found.index(p) for p in ("pkg/core/merge.py", "pkg/core/align.py"))
    assert library < found.index("tests/test_merge.py"), found
    asked = files(daemon.stub.Search(pb.SearchRequest(query=f"the test for: {query}"), timeout=30))
    assert asked[0] == "tests/test_merge.py", asked


GUIDE = """# Combining frames

Combine two frames that share their index: combine joins them and returns the joined frame.
When the frames do not align, combine raises ValueError and names the frames that do not
align. Build two small frames with the same index and combine them to see the joined frame.
"""

PASTED = f"""combine raises ValueError although the frames align

Joining two frames that share their index raises an error; I expected the joined frame. To
reproduce, build two small frames with the same index and combine them (reported first at
https://github.com/org/pkg/issues/12, where the template asked for the traceback).

```python
import pytest
```

{ISSUE.split(chr(10), 4)[4]}"""


@pytest.fixture(scope="module")
def docs_and_code(tmp_path_factory):
    yield from serving(
        tmp_path_factory.mktemp("issue-texts-docs"),
        {**FILES, "docs/combining.md": GUIDE},
        lambda repo: (
            f'[[sources]]\nname = "code"\nkind = "code"\nroot = "{repo}"\n'
            f'default = true\ninclude = ["pkg/**/*.py", "tests/*.py"]\n\n'
            f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{repo}"\n'
        ),
    )


def test_a_pasted_issue_text_weighs_pages_down_and_a_question_does_not(docs_and_code):
    search = docs_and_code.stub.Search
    pasted = search(pb.SearchRequest(query=PASTED, explain=True), timeout=30)
    assert files(pasted)[0] == "pkg/core/merge.py", files(pasted)
    page = next(r for r in pasted.results if r.location.startswith("docs/docs/combining"))
    assert "pasted-text" in {reason.name for reason in page.reasons}
    question = search(pb.SearchRequest(query="how do I combine two frames", explain=True))
    page = next(r for r in question.results if r.location.startswith("docs/docs/combining"))
    assert "pasted-text" not in {reason.name for reason in page.reasons}


def test_a_link_or_an_import_in_a_pasted_text_does_not_ask_for_templates_or_tests(
    docs_and_code,
):
    response = docs_and_code.stub.Search(pb.SearchRequest(query=PASTED, explain=True), timeout=30)
    for prefix in ("tests/test_merge.py", "docs/.github/ISSUE_TEMPLATE/bug_report"):
        result = next(r for r in response.results if r.location.startswith(prefix))
        assert "auxiliary" in {reason.name for reason in result.reasons}, prefix


HIDDEN_PROMPTS = """<!-- This comment is hidden when you submit the issue: please read the
contributing guidelines and the code of conduct, and search the tracker first, a similar issue
may be open or closed already. -->
"""

COMMENTED = f"""{HIDDEN_PROMPTS}### Description
{HIDDEN_PROMPTS}combine raises ValueError although the frames share their index
{HIDDEN_PROMPTS}"""


def test_the_hidden_comments_of_an_issue_template_are_not_searched(daemon):
    """The template's prompts match the contributing page word for word; the writer's words
    are about ``combine``: only the words a reader sees are searched, and the answer says
    how many characters that was without calling the query cut."""
    response = daemon.stub.Search(pb.SearchRequest(query=COMMENTED, top_k=25), timeout=30)
    found = files(response)
    assert "CONTRIBUTING.md" not in found, found
    assert found[0] in ("pkg/core/merge.py", "pkg/core/align.py"), found
    visible = COMMENTED.replace(HIDDEN_PROMPTS.rstrip("\n"), " ")
    assert response.query_chars_used == len(visible)
    assert not response.query_truncated


def _functions(prefix: str, count: int, words: str) -> str:
    return "\n\n".join(
        f'def {prefix}_{i}(frame):\n    """{words} {prefix} {i}."""\n    return frame\n'
        for i in range(count)
    )


@pytest.fixture(scope="module")
def many_blocks(tmp_path_factory):
    """More blocks than a search's candidate pool (100) that match a traceback's words better
    than the file it ends in does."""
    words = "reindex the frame before join; the frame index must align to join"
    files = {"pkg/runner.py": _functions("run", 12, words)}
    for n in range(8):
        files[f"pkg/other{n}.py"] = _functions(f"other{n}", 15, words)
    filler = " ".join(f"filler{i}" for i in range(200))
    files["pkg/emit.py"] = f'def emit(out):\n    """The frame. {filler}"""\n    return out\n'
    yield from serving(
        tmp_path_factory.mktemp("issue-texts-frames"),
        files,
        lambda repo: (
            "[ranking]\nidentifier_terms_first = false\n\n"
            f'[[sources]]\nname = "repo"\nkind = "code"\nroot = "{repo}"\ndefault = true\n'
        ),
    )


def test_every_file_a_traceback_names_gets_candidates_though_another_matches_more(
    many_blocks,
):
    # The terms past the query's first 64 are not searched: the file it ends in is named
    # there, and only "frame" of the searched words is in it, weakly.
    prose = " ".join(f"said{i}" for i in range(70))
    trace = (
        "join fails: reindex the frame before join, the frame index must align\n"
        f'File "pkg/runner.py", line 3, in run_0\n    return frame\n{prose}\n'
        'File "pkg/emit.py", line 3, in emit\n    return out\n'
    )
    # Top 25: every file's best blocks come before any file's third (max_per_document).
    response = many_blocks.stub.Search(pb.SearchRequest(query=trace, top_k=25), timeout=30)
    assert "pkg/emit.py" in files(response), files(response)


SETUP = '''"""Packaging: builds the wheel that ships combine, join and the frames' index helpers."""
from setuptools import setup

# The package joins two frames left and right on their shared index, and combine returns the
# joined frame: the description on the package index says so too.
setup(name="pkg", description="join two frames on their shared index; combine them")
'''

TITLED = """Aligner reindexes every frame

Joining left and right on their shared index is fine: left.join(right) joins left and right
as I expected, and the join of left and right keeps the shared index of left and right. The
join is not where the time goes; left and right are joined on the shared index in no time, and
joining left to right again on that shared index is just as quick.
"""


@pytest.fixture(scope="module", params=[None, 1.0], ids=["shipped", "title-weight-off"])
def titled(request, tmp_path_factory):
    ranking = "" if request.param is None else f"[ranking]\ntitle_term_weight = {request.param}\n"
    for d in serving(
        tmp_path_factory.mktemp("issue-titles"),
        {"pkg/core/merge.py": MERGE, "pkg/core/align.py": ALIGN, "setup.py": SETUP},
        lambda repo: (
            f'{ranking}\n[[sources]]\nname = "repo"\nkind = "code"\nroot = "{repo}"\n'
            'default = true\ninclude = ["**/*.py"]\n'
        ),
    ):
        yield request.param, d


def test_an_issue_title_says_what_the_text_is_about(titled):
    """The title names the aligner; the body repeats the words of the join. The title's terms
    weigh 1.5, so the file it names comes first; without that weight the body's words win."""
    weight, daemon = titled
    found = files(daemon.stub.Search(pb.SearchRequest(query=TITLED), timeout=30))
    expected = "pkg/core/align.py" if weight is None else "pkg/core/merge.py"
    assert found[0] == expected, found


def test_a_packaging_script_yields_to_the_library_code_it_ships(titled):
    _, daemon = titled
    query = "join two frames on their shared index and combine them"
    response = daemon.stub.Search(pb.SearchRequest(query=query, explain=True), timeout=30)
    found = files(response)
    assert found.index("pkg/core/merge.py") < found.index("setup.py"), found
    setup = next(r for r in response.results if r.location.startswith("setup.py"))
    assert "tooling" in {reason.detail for reason in setup.reasons}, setup.reasons
    asked = files(daemon.stub.Search(pb.SearchRequest(query=f"the setup script: {query}")))
    assert asked[0] == "setup.py", asked
