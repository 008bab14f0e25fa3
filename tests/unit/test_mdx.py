"""MDX and site-flavoured Markdown: markup out of the indexed text, the sites' heading ids."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium.text.slugs import github_slug
from scriptorium_plugins.markdown.extractor import MarkdownExtractor
from scriptorium_plugins.markdown.mdx import vitepress_slug
from scriptorium_plugins.markdown.source import MarkdownSource

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/site_markdown"

DOCUSAURUS = """\
---
id: install
title: Installing the quokka
sidebar_label: Install
---

import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

export const toc = [
  {value: 'Setup', id: 'setup'},
];

Read this first.{/* a note for editors */}

## Setup {#custom-setup}

<Tabs>
  <TabItem value="npm" label="npm" default>

```bash
npm install quokka
```

  </TabItem>
  <TabItem
    value="yarn"
    label="Yarn">

Use the <Highlight color="#25c2a0">yarn</Highlight> client.

  </TabItem>
</Tabs>

:::tip[Heads up]
Pin the burrow version.
:::

:::danger
Never feed after midnight.
:::
"""


def blocks_of(path: str, text: str, slugify=github_slug):
    return MarkdownExtractor().extract(path, text, slugify)


def test_docusaurus_markup_leaves_the_bodies_and_custom_ids_anchor() -> None:
    extraction = blocks_of("docs/install.mdx", DOCUSAURUS)
    assert extraction.preview_from_body
    assert extraction.meta.title == "Installing the quokka"
    preamble, setup = extraction.blocks
    assert preamble.body.strip() == "Read this first."
    assert (setup.anchor, setup.title) == ("custom-setup", "Setup")
    body = setup.body
    for markup in ("<Tabs>", "TabItem", "import ", "export ", "{/*", ":::", "Highlight", "{#"):
        assert markup not in body
    # What the page shows stays: tab labels, code, the words inside components, admonitions.
    for shown in ("npm install quokka", "Yarn", "Use the yarn client.", "Heads up", "Danger"):
        assert shown in body
    assert "Pin the burrow version." in body and "Never feed after midnight." in body
    # Lines are the file's: the block starts at its heading in the file.
    assert DOCUSAURUS.splitlines()[setup.start_line - 1] == "## Setup {#custom-setup}"
    assert setup.end_line == len(DOCUSAURUS.splitlines())


def test_react_dev_page_reads_its_heading_ids_and_drops_its_components() -> None:
    text = (FIXTURES / "react.dev/learn/installation.md").read_text("utf-8")
    extraction = blocks_of("learn/installation.md", text)
    anchors = [b.anchor for b in extraction.blocks if b.anchor]
    assert anchors == [
        "try-react",
        "creating-a-react-app",
        "build-a-react-app-from-scratch",
        "add-react-to-an-existing-project",
        "should-i-use-create-react-app",
        "next-steps",
    ]
    joined = "\n".join(b.body for b in extraction.blocks)
    for markup in ("<Intro>", "</Intro>", "<Sandpack>", "<Note>", "{/*", "{#"):
        assert markup not in joined
    # JSX inside a fenced code sample is code, and stays.
    assert "return <h1>Hello, {name}</h1>;" in joined
    assert extraction.blocks[0].body.strip().startswith("React has been designed")


def test_plain_markdown_is_read_as_before() -> None:
    text = "# Title\n\n<div class='x'>Some <b>html</b></div>\n\n## Next\n\nMore.\n"
    extraction = blocks_of("page.md", text)
    assert not extraction.preview_from_body
    assert extraction.blocks[0].body == "# Title\n\n<div class='x'>Some <b>html</b></div>\n"
    # mkdocstrings' ``::: name`` directives are not containers: the page stays plain Markdown.
    reference = "# Request\n\n::: fastapi.Request\n    options:\n      members: []\n\n::: fastapi\n"
    extraction = blocks_of("reference/request.md", reference)
    assert not extraction.preview_from_body
    assert extraction.blocks[0].body == reference.rstrip("\n")


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("index.html and Project Root", "index-html-and-project-root"),
        ("Vite's config", "vite-s-config"),
        ("Émile & Café", "emile-cafe"),
        ("3 ways --- fast", "_3-ways-fast"),
        ("  Trim -- me -- ", "trim-me"),
    ],
)
def test_vitepress_slug(heading: str, slug: str) -> None:
    assert vitepress_slug(heading) == slug


def source_for(root: Path, **options) -> MarkdownSource:
    context = SourceContext(extractors=ExtractorChain([MarkdownExtractor()]))
    config = SourceConfig(name="site", kind="markdown", root=root, options=options)
    return MarkdownSource(config, context)


def anchors_of(source: MarkdownSource, path: str) -> list[str]:
    doc = source.load(path)
    assert doc is not None
    return [b.anchor for b in doc.blocks if b.anchor]


def test_a_vitepress_site_gets_vitepress_anchors(tmp_path: Path) -> None:
    site = tmp_path / "vite"
    shutil.copytree(FIXTURES / "vite", site)
    auto = anchors_of(source_for(site), "guide/index.md")
    assert "index-html-and-project-root" in auto and "indexhtml-and-project-root" not in auto
    # A source rooted below the site's folder still finds its .vitepress.
    assert "index-html-and-project-root" in anchors_of(source_for(site / "guide"), "index.md")
    forced = anchors_of(source_for(site, anchors="github"), "guide/index.md")
    assert "indexhtml-and-project-root" in forced
    shutil.rmtree(site / ".vitepress")
    assert "indexhtml-and-project-root" in anchors_of(source_for(site), "guide/index.md")
    assert "index-html-and-project-root" in anchors_of(
        source_for(site, anchors="vitepress"), "guide/index.md"
    )


def test_vitepress_containers_read_as_their_titles() -> None:
    text = (FIXTURES / "vite/guide/dep-pre-bundling.md").read_text("utf-8")
    extraction = blocks_of("guide/dep-pre-bundling.md", text, vitepress_slug)
    why = next(b for b in extraction.blocks if b.anchor == "the-why")
    assert ":::" not in why.body
    assert "NOTE\nDependency pre-bundling only applies in development mode." in why.body
