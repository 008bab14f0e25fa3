"""Sphinx projects: conf.py read as literals, exclude_patterns, and toctree breadcrumbs."""

from __future__ import annotations

import shutil
from pathlib import Path

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium_plugins.markdown.source import MarkdownSource
from scriptorium_plugins.rst.extractor import RstExtractor
from scriptorium_plugins.rst.sphinx import SphinxConf, read_conf, toctree_entries

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/sphinx"


def test_conf_py_is_read_as_literals_and_never_run() -> None:
    conf = read_conf(
        "import os\nproject = 'x'\nmaster_doc = 'contents'\n"
        "exclude_patterns = ['_build', 'drafts/*']\nversion = os.environ['V']\n"
        "raise SystemExit('never run')\n"
    )
    assert conf == SphinxConf("contents", ("_build", "drafts/*"))
    assert read_conf("root_doc: str = 'start'\nmaster_doc = 'old'\n").root_doc == "start"
    assert read_conf("exclude_patterns = make()\n") == SphinxConf()
    assert read_conf("def broken(:\n") == SphinxConf()


def test_toctree_entries() -> None:
    page = (
        ".. toctree::\n   :maxdepth: 2\n   :caption: Basics\n\n   install\n"
        "   The guide <guide/index>\n   self\n   https://example.com\n\n"
        "Text.\n\n.. toctree::\n   :glob:\n\n   api/*\n\n"
        "An example::\n\n   .. toctree::\n\n      not-an-entry\n"
    )
    assert toctree_entries(page) == [
        ("install", False),
        ("guide/index", False),
        ("api/*", True),
    ]


def source_for(root: Path, **options) -> MarkdownSource:
    context = SourceContext(extractors=ExtractorChain([RstExtractor()]))
    return MarkdownSource(SourceConfig("docs", "markdown", root, options=options), context)


def sections(source: MarkdownSource, path: str) -> list[tuple[str, ...]]:
    doc = source.load(path)
    assert doc is not None
    return [b.section_path for b in doc.blocks]


def test_pages_take_their_place_in_the_toctrees(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    (repo / "doc/_build/html/_sources").mkdir(parents=True)
    (repo / "doc/_build/html/_sources/stale.rst").write_text("Stale\n=====\n", "utf-8")
    source = source_for(repo)  # a repository whose Sphinx project lives in doc/
    listed = [s.path for s in source.list_files()]
    assert "doc/usage/quickstart.rst" in listed
    assert not [p for p in listed if "_build" in p]  # exclude_patterns = ['_build']
    quickstart = sections(source, "doc/usage/quickstart.rst")
    assert quickstart[0] == ("Sphinx", "Getting started")
    assert quickstart[1] == ("Sphinx", "Getting started", "Setting up the documentation sources")
    assert sections(source, "doc/usage/referencing.rst")[0][:3] == (
        "Sphinx",
        "Using Sphinx",
        "Cross-references",
    )
    assert sections(source, "doc/index.rst")[0] == ("Sphinx",)
    assert sections(source_for(repo, toctree=False), "doc/usage/quickstart.rst")[0] == (
        "Getting started",
    )


def test_a_toctree_edit_moves_the_pages_it_names(tmp_path: Path) -> None:
    project = tmp_path / "doc"
    shutil.copytree(FIXTURE / "doc", project)
    source = source_for(project)  # pointed at the project folder itself
    assert sections(source, "usage/markdown.rst")[0][:2] == ("Sphinx", "Using Sphinx")
    index = project / "usage/index.rst"
    index.write_text(index.read_text("utf-8").replace("   markdown\n", ""), "utf-8")
    faq = project / "faq.rst"
    faq.write_text(faq.read_text("utf-8") + "\n.. toctree::\n\n   usage/markdown\n", "utf-8")
    source.load("usage/index.rst")
    source.load("faq.rst")
    assert sections(source, "usage/markdown.rst")[0][:2] == ("Sphinx", "Sphinx FAQ")
