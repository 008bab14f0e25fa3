"""Two priors of a served clone, through a real daemon: a translation yields to an English
question but not to one written in its own language (typed without its accents), and a hidden
folder's files (a docs site's configuration) yield to the page unless the query names the
folder."""

from __future__ import annotations

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import explained, serving_files

FILES = {
    "docs/en/dependencies.md": "# Dependencies with yield\n\nA dependency can yield a value "
    "and run its cleanup after the response: dependencies with yield.\n",
    "docs/de/dependencies.md": "# Abhaengigkeiten mit yield\n\nEine Abhaengigkeit kann mit "
    "yield einen Wert liefern: Abhaengigkeiten mit yield nutzen (dependencies with yield).\n",
    "docs/guide/sidebar.md": "# Sidebar navigation\n\nThe sidebar lists the site's pages; "
    "order the sidebar navigation in the page's front matter.\n",
    "docs/.vitepress/config.ts": "export default {\n  // the site's sidebar navigation\n"
    "  themeConfig: { sidebar: [{ text: 'Sidebar navigation', link: '/guide/sidebar' }] },\n}\n",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    with serving_files(tmp_path_factory.mktemp("priors"), FILES) as served:
        yield served


def _reasons(results: list[pb.SearchResult], path: str) -> set[str]:
    result = next(r for r in results if r.location.split("#")[0] == path)
    return {reason.name for reason in result.reasons}


def test_a_translation_yields_to_an_english_question_only(daemon):
    english = explained(daemon, "dependencies with yield")
    assert english[0].location.startswith("docs/en/dependencies")
    assert "translation" in _reasons(english, "docs/de/dependencies")
    assert "translation" not in _reasons(english, "docs/en/dependencies")
    german = explained(daemon, "wie kann ich abhaengigkeiten mit yield nutzen")
    assert german[0].location.startswith("docs/de/dependencies")
    assert "translation" not in _reasons(german, "docs/de/dependencies")


def test_a_hidden_folders_files_yield_unless_the_query_names_the_folder(daemon):
    plain = explained(daemon, "sidebar navigation")
    assert plain[0].location.startswith("docs/guide/sidebar")
    assert "auxiliary" in _reasons(plain, "docs/.vitepress/config.ts")
    named = explained(daemon, "vitepress sidebar navigation")
    assert "auxiliary" not in _reasons(named, "docs/.vitepress/config.ts")
