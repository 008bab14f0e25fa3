"""What a result's preview shows (results/hits.py): a code result's is cut from its own lines
(the window around its anchor line stops at the block's ends, so it never shows a neighbouring
definition); a documentation result's is cut from its own text, not its subsections', and
leaves its headings' attribute lists out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scriptorium.domain.model import Corpus, RefKind
from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.plugins import load_registry
from scriptorium.settings.config import load_settings
from scriptorium.text.markdown import without_attr_lists
from scriptorium.text.preview import collapse_whitespace, readable

# The query's other words sit in the definition just above the one its name finds: a window
# of a dozen lines either side of that one's first line would centre on them.
MODULE = '''\
"""Widgets."""


def widget_permanent(table):
    """Gadget sprocket flange: the gadget sprocket flange of a table."""
    return sum(table)


def widget_tune(value):
    """Tune a value."""
    return value * 2


def widget_other(value):
    """Nothing to see."""
    return value
'''


PAGE = """\
# Widgets { #widgets }

## Tune a widget { #tune-a-widget .tip data-level="2" }

Tune the widget before its first use.

## Not an attribute list {see below}

Braces a heading ends with stay when they hold no attribute.
"""


# The page's section runs on over its subsection, a result of its own.
GEARS = """\
# Gears

Gears turn other gears.

## Grease

Grease the sprocket flange twice a week.
"""


# A section with no text of its own: what it holds is its subsection.
TOOLS = """\
# Tools

## Hammer

Hammer the nails flat.
"""


# The same with setext headings: an underline is not text of the section's own.
PARTS = """\
Parts
=====

Bolt
----

A bolt holds the parts together.
"""


def _engine(tmp_path: Path) -> LocalEngine:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "widgets.py").write_text(MODULE, encoding="utf-8")
    (tree / "docs").mkdir()
    (tree / "docs" / "widgets.md").write_text(PAGE, encoding="utf-8")
    (tree / "docs" / "gears.md").write_text(GEARS, encoding="utf-8")
    (tree / "docs" / "tools.md").write_text(TOOLS, encoding="utf-8")
    (tree / "docs" / "parts.md").write_text(PARTS, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "code"\nkind = "code"\n'
        f'root = "{tree / "pkg"}"\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
        f'root = "{tree / "docs"}"\n\n[ranking]\nsemantic = false\n',
        encoding="utf-8",
    )
    engine = LocalEngine(load_settings(config, state_dir=str(tmp_path / "state")), load_registry())
    engine.indexer.load_or_build()
    return engine


def test_a_code_preview_shows_only_its_own_block(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    lines = MODULE.splitlines()
    query = "widget_tune gadget sprocket flange"
    outcome = asyncio.run(engine.search(SearchParams(query=query, kinds=(Corpus.CODE,))))
    code = [h for h in outcome.hits if h.kind is RefKind.CODE]
    assert "widget_tune" in {h.title for h in code}
    for hit in code:
        own = collapse_whitespace(readable("\n".join(lines[hit.start_line - 1 : hit.end_line])))
        shown = hit.preview.removeprefix("...").removesuffix("...").strip()
        assert shown, hit.location
        assert shown in own, (hit.location, hit.preview)
    tune = next(h for h in code if h.title == "widget_tune")
    assert "sprocket" not in tune.preview
    assert "Tune a value" in tune.preview


def test_a_documentation_preview_leaves_the_headings_attribute_lists_out(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    outcome = asyncio.run(engine.search(SearchParams(query="tune a widget", kinds=(Corpus.DOCS,))))
    tune = next(h for h in outcome.hits if h.title == "Tune a widget")
    assert tune.preview.startswith("## Tune a widget Tune the widget before its first use.")
    assert "{" not in tune.preview and "data-level" not in tune.preview
    # The snippet is the page's own text, attribute list and all.
    assert "{ #tune-a-widget" in tune.snippet


def test_only_well_formed_attribute_lists_of_headings_are_left_out() -> None:
    lines = [
        "## Title { #custom-id }",
        "### Kramdown {: #k .c }",
        "## Not one {see below}",
        "Prose { #not-a-heading }",
        "    # indented code { #id }",
    ]
    assert without_attr_lists(lines) == [
        "## Title",
        "### Kramdown",
        "## Not one {see below}",
        "Prose { #not-a-heading }",
        "    # indented code { #id }",
    ]


def test_a_section_preview_stops_where_its_first_subsection_starts(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    query = "gears grease sprocket flange"
    outcome = asyncio.run(engine.search(SearchParams(query=query, kinds=(Corpus.DOCS,))))
    by_title = {h.title: h for h in outcome.hits}
    assert by_title["Gears"].end_line == 7  # the section's range holds its subsection
    assert by_title["Gears"].preview == "# Gears Gears turn other gears."
    assert "sprocket flange" in by_title["Grease"].preview


def test_a_section_with_no_text_of_its_own_previews_its_subsections(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    outcome = asyncio.run(engine.search(SearchParams(query="tools", kinds=(Corpus.DOCS,))))
    tools = next(h for h in outcome.hits if h.title == "Tools")
    assert tools.preview == "# Tools ## Hammer Hammer the nails flat."
    outcome = asyncio.run(engine.search(SearchParams(query="parts", kinds=(Corpus.DOCS,))))
    parts = next(h for h in outcome.hits if h.title == "Parts")
    assert parts.preview == "Parts ===== Bolt ---- A bolt holds the parts together."
