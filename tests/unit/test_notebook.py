"""Jupyter notebooks: Markdown cells as heading blocks, code cells as cell blocks, no outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.content.cut import find_doc_block
from scriptorium.sources.base import SourceConfig, SourceContext, content_hash
from scriptorium_plugins.markdown.source import MarkdownSource
from scriptorium_plugins.notebook.extractor import UNREADABLE_CONFIDENCE, NotebookExtractor

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/notebooks/xarray"


def notebook(cells: list[dict], **metadata) -> str:
    return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5})


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": source.splitlines(True)}


def code(source: str, output: str = "") -> dict:
    outputs = [{"output_type": "stream", "name": "stdout", "text": [output]}] if output else []
    return {"cell_type": "code", "source": source, "outputs": outputs, "execution_count": 7}


def test_the_xarray_notebook_is_cut_into_headings_and_cells() -> None:
    text = (FIXTURE / "area_weighted_temperature.ipynb").read_text("utf-8")
    extraction = NotebookExtractor().extract("area_weighted_temperature.ipynb", text)
    assert extraction.language == "python"
    assert extraction.meta.title == "Compare weighted and unweighted mean temperature"
    blocks = {b.anchor: b for b in extraction.blocks}
    weights = blocks["cell-9"]
    assert weights.body.splitlines() == [
        "weights = np.cos(np.deg2rad(air.lat))",
        'weights.name = "weights"',
        "weights",
    ]
    assert weights.section_path[:2] == (
        "Compare weighted and unweighted mean temperature",
        "Creating weights",
    )
    rendered = extraction.text.splitlines()
    assert rendered[weights.start_line - 1] == "```python"
    assert rendered[weights.end_line - 1] == "```"
    # A Markdown cell that opens with a heading answers to its cell number through the heading.
    heading = blocks["creating-weights"]
    assert "cell-8" in heading.aliases
    assert heading.end_line >= weights.end_line  # the section holds the cells under it
    assert "weights = np.cos" not in heading.body  # but does not index them twice
    # JupyterLab's ids (the notebook's own table of contents links to them) are aliases.
    plot = blocks["plot-comparison-with-unweighted-mean"]
    assert "Plot:-comparison-with-unweighted-mean" in plot.aliases
    assert blocks["cell-1"].title == "Cell 1: Table of Contents"


def test_outputs_are_left_out_and_the_kernel_language_kept() -> None:
    text = notebook(
        [
            markdown("# Fitting\n\nWe fit a line."),
            code("fit(x, y)\n", output="WOMBAT_OUTPUT 42"),
            {"cell_type": "raw", "source": "raw text"},
            code("s = '''\n```\n'''"),
            markdown("Done."),
        ],
        kernelspec={"language": "julia", "name": "julia-1.9"},
    )
    extraction = NotebookExtractor().extract("fit.ipynb", text)
    assert "WOMBAT_OUTPUT" not in extraction.text
    assert "raw text" not in extraction.text
    assert extraction.language == "julia"
    anchors = [b.anchor for b in extraction.blocks]
    assert anchors == ["fitting", "cell-2", "cell-4", "cell-5"]
    fenced = next(b for b in extraction.blocks if b.anchor == "cell-4")
    lines = extraction.text.splitlines()
    assert lines[fenced.start_line - 1] == "````julia"  # longer than the fence in the code
    assert lines[fenced.end_line - 1] == "````"
    assert fenced.body == "s = '''\n```\n'''"


def test_nbformat_3_and_unreadable_files() -> None:
    old = json.dumps(
        {
            "nbformat": 3,
            "worksheets": [
                {
                    "cells": [
                        {"cell_type": "heading", "level": 2, "source": ["Old style"]},
                        {"cell_type": "code", "input": ["print('hi')"], "outputs": []},
                    ]
                }
            ],
        }
    )
    blocks = NotebookExtractor().extract("old.ipynb", old).blocks
    assert [(b.anchor, b.level) for b in blocks] == [("old-style", 2), ("cell-2", 3)]
    for broken in ("{not json", "[1, 2]", '{"cells": 3}'):
        extraction = NotebookExtractor().extract("broken.ipynb", broken)
        assert extraction.blocks == ()
        assert extraction.meta.parse_confidence == UNREADABLE_CONFIDENCE


def test_a_docs_tree_serves_the_rendered_notebook(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    shutil.copytree(FIXTURE, root / "examples")
    context = SourceContext(extractors=ExtractorChain([NotebookExtractor()]))
    source = MarkdownSource(SourceConfig(name="docs", kind="markdown", root=root), context)
    assert "examples/area_weighted_temperature.ipynb" in [s.path for s in source.list_files()]
    doc = source.load("examples/area_weighted_temperature.ipynb")
    assert doc is not None
    assert doc.text.startswith("<h1>Table of Contents")
    assert doc.content_hash == content_hash(doc.text)
    assert doc.language == "python"
    block = find_doc_block(doc, "cell-9")
    location = source.block_location(doc, block, None)
    assert location == "examples/area_weighted_temperature.ipynb#cell-9"
    assert find_doc_block(doc, "CELL-8").anchor == "creating-weights"
