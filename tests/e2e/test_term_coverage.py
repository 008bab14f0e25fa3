"""A question's every word counts: a block matching all of them passes a small section that
matches one word in its heading (term coverage), through a real daemon over Markdown pages."""

from __future__ import annotations

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running
from tests.support.trees import write_tree

HOOKS = "The hooks run once per module and may return a changed module or nothing. " * 10
FILLER = (
    "It reads the project settings, checks the versions installed and reports what it found. " * 3
)
PAGES = {
    "options.md": "# Build options\n\n## build.write\n\n"
    "Set to false to skip writing to disk; writing is on by default.\n\n"
    "## build.outDir\n\nThe folder the bundle goes to, relative to the project root.\n",
    "plugin-api.md": "# Plugin API\n\nA gizmo plugin is an object with hooks; write it once and "
    f"it works for both the dev server and the build. {HOOKS}\n",
    **{
        f"plugins/{name}.md": f"# {name.title()}\n\nThe {name} gizmo plugin adds {name} "
        f"support. {FILLER}\n"
        for name in ("vue", "react", "legacy", "svelte", "solid", "preact")
    },
}
QUESTION = "writing a gizmo plugin"


@pytest.fixture(scope="module", params=[None, 0.0], ids=["shipped", "coverage-off"])
def served(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("coverage")
    docs = write_tree(root / "docs", PAGES)
    ranking = "" if request.param is None else f"[ranking]\nterm_coverage = {request.param}\n\n"
    config = root / "config.toml"
    config.write_text(
        f'[server]\nwatch = false\n\n{ranking}[[sources]]\nname = "docs"\nkind = "markdown"\n'
        f'root = "{docs}"\ndefault = true\n',
        encoding="utf-8",
    )
    with running(["--config", str(config)], root / "state") as daemon:
        yield request.param, daemon


def test_the_block_holding_every_word_of_a_question_comes_first(served):
    coverage, daemon = served
    response = daemon.stub.Search(pb.SearchRequest(query=QUESTION, explain=True), timeout=30)
    found = [r.location for r in response.results]
    if coverage is None:
        assert found[0].startswith("plugin-api#"), found
        small = next(r for r in response.results if r.location == "options#buildwrite")
        assert "coverage" in {reason.name for reason in small.reasons}, small.reasons
    else:  # without it, the heading's one word wins: what the lever is for
        assert found[0] == "options#buildwrite", found
