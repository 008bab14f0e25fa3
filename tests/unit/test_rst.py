"""The reStructuredText extractor: docutils' sections, ids and lines, and text without markup."""

from __future__ import annotations

from pathlib import Path

import pluggy
import pytest

import scriptorium_plugins.rst as rst_plugin
import scriptorium_plugins.rst.sections as rst_sections
from scriptorium import hookspecs
from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.content.cut import find_doc_block
from scriptorium.domain.model import Corpus, RefKind, SourceDocument
from scriptorium.index.store import decode_document, encode_document
from scriptorium.plugins import collect
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium_plugins.markdown.extractor import MarkdownExtractor
from scriptorium_plugins.markdown.source import MarkdownSource
from scriptorium_plugins.rst.extractor import UNPARSED_CONFIDENCE, RstExtractor

GUIDE = """\
.. _guide-top:

=====
Guide
=====

Read :ref:`the install notes <install-notes>` and call :func:`~pkg.tools.run`.

.. _install-notes:

Getting started
---------------

Install the **quokka** package with ``pip``.

.. autofunction:: pkg.tools.run
   :noindex:

   Runs the tools.

Deeper details
~~~~~~~~~~~~~~

An example::

    run(fast=True)

Second part
-----------

.. note:: Mind the platypus.

.. versionadded:: 2.1
   The wombat option.
"""


def blocks_of(text: str, path: str = "guide.rst"):
    return RstExtractor().extract(path, text).blocks


def by_anchor(text: str):
    return {b.anchor: b for b in blocks_of(text)}


def test_sections_follow_docutils_levels_whatever_the_adornment_order() -> None:
    dash_first = "One\n---\n\nTwo\n===\n\ntext\n\nThree\n-----\n"
    equals_first = "One\n===\n\nTwo\n---\n\ntext\n\nThree\n=====\n"
    for text in (dash_first, equals_first):
        blocks = blocks_of(text)
        assert [(b.title, b.level) for b in blocks] == [("One", 1), ("Two", 2), ("Three", 1)]
        assert blocks[1].section_path == ("One", "Two")
    overlined = "######\nPart\n######\n\n****\nChap\n****\n\nSec\n===\n\nbody\n"
    assert [(b.title, b.level) for b in blocks_of(overlined)] == [
        ("Part", 1),
        ("Chap", 2),
        ("Sec", 3),
    ]


def test_anchors_are_docutils_ids_and_labels_are_aliases() -> None:
    blocks = by_anchor(GUIDE)
    assert list(blocks) == ["guide", "getting-started", "deeper-details", "second-part"]
    assert blocks["getting-started"].aliases == ("install-notes",)
    assert blocks["guide"].aliases == ("guide-top",)
    doc = SourceDocument("docs", "guide.rst", GUIDE, Corpus.DOCS, "h", blocks=blocks_of(GUIDE))
    assert find_doc_block(doc, "install-notes") == blocks["getting-started"]
    assert find_doc_block(doc, "Getting-Started") == blocks["getting-started"]
    # Duplicate titles get docutils' numbered ids, as the rendered page has them.
    twice = by_anchor("A\n=\n\nSame\n----\n\nx\n\nSame\n----\n\ny\n")
    assert set(twice) == {"a", "same", "same-1"}


def test_line_ranges_cover_the_section_and_its_subsections() -> None:
    lines = GUIDE.splitlines()
    blocks = by_anchor(GUIDE)
    guide, started = blocks["guide"], blocks["getting-started"]
    deeper, second = blocks["deeper-details"], blocks["second-part"]
    assert lines[guide.start_line - 1].startswith("=====")  # the overline
    assert lines[guide.start_line] == "Guide"
    assert guide.end_line == len(lines)
    assert lines[started.start_line - 1] == "Getting started"
    assert lines[deeper.start_line - 1] == "Deeper details"
    assert started.end_line == second.start_line - 1 == deeper.end_line
    assert lines[second.start_line - 1] == "Second part"
    assert second.end_line == len(lines)


def test_bodies_keep_prose_and_code_but_not_markup() -> None:
    blocks = by_anchor(GUIDE)
    guide = blocks["guide"].body
    assert "the install notes" in guide and "pkg.tools.run" in guide
    assert ":ref:" not in guide and "<install-notes>" not in guide and ":func:" not in guide
    started = blocks["getting-started"].body
    assert "Install the quokka package with pip." in started
    assert "**" not in started and "``" not in started
    # The nested section is indexed on its own, not twice.
    assert "run(fast=True)" not in started
    assert "run(fast=True)" in blocks["deeper-details"].body
    second = blocks["second-part"].body
    assert "Mind the platypus." in second and "The wombat option." in second
    assert "2.1" in second


def test_autodoc_directives_keep_their_argument_in_the_mkdocstrings_spelling() -> None:
    from scriptorium.ranking.pipeline import renders_from_code

    started = by_anchor(GUIDE)["getting-started"].body
    assert "::: pkg.tools.run" in started
    assert "Runs the tools." in started
    assert ":noindex:" not in started
    assert renders_from_code(started)
    assert not renders_from_code(by_anchor(GUIDE)["second-part"].body)
    toctree = blocks_of("Index\n=====\n\n.. toctree::\n   :maxdepth: 2\n\n   install\n   usage\n")
    assert "install" in toctree[0].body and "usage" in toctree[0].body


def test_title_and_preamble() -> None:
    extraction = RstExtractor().extract("guide.rst", GUIDE)
    assert extraction.meta.title == "Guide"
    assert extraction.meta.parse_confidence == 1.0
    assert extraction.preview_from_body
    untitled = RstExtractor().extract("notes/todo.rst", "Just a paragraph.\n\nAnother.\n")
    assert extraction.blocks[0].anchor == "guide"
    assert untitled.meta.title == "todo"
    [preamble] = untitled.blocks
    assert (preamble.anchor, preamble.level, preamble.start_line) == ("", 0, 1)
    assert "Another." in preamble.body


def test_broken_markup_never_raises() -> None:
    messy = (
        "Top\n===\n\n`unclosed role\n\n+---+---+\n| a | b\n+---+\n\n"
        ".. include:: /etc/passwd\n\n.. raw:: html\n\n   <script>x</script>\n\nShort\n==\n"
    )
    blocks = blocks_of(messy)
    assert blocks and blocks[0].title == "Top"
    text = "\n".join(b.body for b in blocks)
    assert "root:" not in text and "<script>" not in text


def test_a_file_docutils_cannot_read_is_one_block_of_its_text() -> None:
    # Nesting this deep exhausts docutils' recursion: the file is still indexed.
    deep = "".join("  " * depth + "- item wombat\n\n" for depth in range(300))
    extraction = RstExtractor().extract("deep.rst", deep)
    [block] = extraction.blocks
    assert extraction.meta.parse_confidence == UNPARSED_CONFIDENCE
    assert (block.start_line, block.end_line) == (1, len(deep.splitlines()))
    assert "wombat" in block.body and block.anchor == ""


def test_any_docutils_failure_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str, path: str):
        raise ValueError("docutils broke")

    monkeypatch.setattr(rst_sections, "parse", broken)
    extraction = RstExtractor().extract("guide.rst", GUIDE)
    assert extraction.meta.parse_confidence == UNPARSED_CONFIDENCE
    assert [b.body for b in extraction.blocks] == [GUIDE]


def test_aliases_and_previews_survive_the_store() -> None:
    source = make_source(Path("/"))
    doc = source.document_from_text("guide.rst", GUIDE)
    assert doc is not None
    again = decode_document(encode_document(doc), "docs")
    assert again.blocks == doc.blocks
    assert again.preview_from_body


def make_source(root: Path) -> MarkdownSource:
    chain = ExtractorChain([MarkdownExtractor(), RstExtractor()])
    return MarkdownSource(
        SourceConfig(name="docs", kind="markdown", root=root), SourceContext(chain)
    )


def test_markdown_source_lists_and_locates_rst_pages(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide/install.rst").write_text(GUIDE, "utf-8")
    (tmp_path / "guide/index.rst").write_text("Guide\n=====\n", "utf-8")
    (tmp_path / "conf.py").write_text("project = 'x'\n", "utf-8")
    source = make_source(tmp_path)
    assert [s.path for s in source.list_files()] == ["guide/index.rst", "guide/install.rst"]
    assert source.page_location("guide/install.rst") == "guide/install"
    assert source.page_location("guide/index.rst") == "guide"
    doc = source.load("guide/install.rst")
    assert doc is not None and doc.corpus is Corpus.DOCS
    started = next(b for b in doc.blocks if b.anchor == "getting-started")
    assert started.kind is RefKind.DOC
    assert source.block_location(doc, started, None) == "guide/install#getting-started"


def test_plugin_registers_the_extractor() -> None:
    pm = pluggy.PluginManager("scriptorium")
    pm.add_hookspecs(hookspecs)
    pm.register(rst_plugin, name="rst")
    pm.check_pending()
    registry = collect(pm)
    assert [e.name for e in registry.extractors] == ["rst"]
    assert registry.extractor_chain.for_path("guide/x.rst", Corpus.DOCS) is not None
    assert registry.extractor_chain.for_path("guide/x.rst", Corpus.CODE) is None
