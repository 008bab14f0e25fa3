"""Markdown structure, front matter, the Markdown extractor and the local Markdown source."""

from __future__ import annotations

import itertools
import math
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pluggy
import pytest

import scriptorium_plugins.markdown as markdown_plugin
from scriptorium import hookspecs
from scriptorium.blocks.extractors import BlockExtractor, ExtractorChain
from scriptorium.domain.model import Corpus, RefKind
from scriptorium.plugins import collect
from scriptorium.sources.base import PathEscapeError, SourceConfig, SourceContext
from scriptorium.text.markdown import (
    fenced_code_spans,
    flow_candidates,
    interesting_ranges,
    parse_headings,
    split_attr_list,
)
from scriptorium.text.slugs import SlugAllocator, github_slug, strip_inline_markup
from scriptorium_plugins.markdown.extractor import MarkdownExtractor
from scriptorium_plugins.markdown.frontmatter import parse_front_matter
from scriptorium_plugins.markdown.source import MarkdownSource
from tests.support.daemon import CORPUS

DOCS = CORPUS / "docs"


def lines_of(text: str) -> list[str]:
    return text.strip("\n").splitlines()


def heading_summary(text: str) -> list[tuple[int, int, str, str | None]]:
    return [(h.line_no, h.level, h.text, h.custom_id) for h in parse_headings(lines_of(text))]


# -- slugs ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello, World!", "hello-world"),
        ("Check the `openapi.json`", "check-the-openapijson"),
        ("Type hints in **FastAPI**", "type-hints-in-fastapi"),
        ("See [the guide](https://example.com/guide) now", "see-the-guide-now"),
        ('<abbr title="Application Programming Interface">API</abbr> docs', "api-docs"),
        ("`__init__.py` files", "__init__py-files"),
        ("snake_case _stays_", "snake_case-stays"),
        ("Web- and internal links", "web--and-internal-links"),
        ("手順 1: 準備", "手順-1-準備"),
        ("快速上手（入门）", "快速上手入门"),
        ("Émile's Café", "émiles-café"),
        ("Deploy 🚀 now", "deploy--now"),
        # An emoji's variation selector (U+FE0F) goes with it, as on GitHub.
        ("\u26a0\ufe0f Caveats", "-caveats"),
        ("Read this \u2764\ufe0f", "read-this-"),
        ("\u2705\ufe0f Done \u2705\ufe0e", "-done-"),
    ],
)
def test_github_slug(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


def test_strip_inline_markup_keeps_code_span_contents() -> None:
    assert strip_inline_markup("Use `**kwargs` and *emphasis*") == "Use **kwargs and emphasis"
    assert strip_inline_markup("![logo](x.png) \\*literal\\*") == "logo *literal*"


def test_slug_allocator_numbers_repeats_like_github() -> None:
    allocator = SlugAllocator()
    assert [allocator.allocate("Usage") for _ in range(3)] == ["usage", "usage-1", "usage-2"]
    assert allocator.allocate("Usage 1") == "usage-1-1"  # "usage-1" is already taken
    assert allocator.allocate("使い方") == "使い方"
    assert allocator.allocate("使い方") == "使い方-1"


def test_slug_allocator_custom_ids_are_verbatim_and_reserved() -> None:
    allocator = SlugAllocator()
    allocator.reserve("setup")
    assert allocator.allocate("Setup") == "setup-1"
    assert allocator.allocate("setup", custom=True) == "setup"
    assert allocator.allocate("My_Custom.Id", custom=True) == "My_Custom.Id"


# -- fences and headings ----------------------------------------------------------------------


def test_headings_inside_fences_are_ignored() -> None:
    text = """
# Real

```bash
# not a heading
```

~~~
## nor this
```
### still code: a backtick line cannot close a tilde fence
~~~

````markdown
```
# nested fence text
```
````

   ```
# indented fence body
   ```

## Also real
"""
    assert [h[2] for h in heading_summary(text)] == ["Real", "Also real"]


def test_unclosed_fence_runs_to_the_end() -> None:
    lines = lines_of("# A\n```\n# hidden\n## hidden")
    assert fenced_code_spans(lines) == [(1, 3)]
    assert [h.text for h in parse_headings(lines)] == ["A"]


def test_admonitions_are_not_code_and_deep_indents_are_not_fences() -> None:
    text = """
/// tip

## Inside a tip

///

    ```
# After an indented pseudo-fence
    ```
"""
    assert [h[2] for h in heading_summary(text)] == [
        "Inside a tip",
        "After an indented pseudo-fence",
    ]


def test_atx_headings_custom_ids_and_closing_hashes() -> None:
    text = """
# First Steps { #first-steps }
## Check it {#check-it}
### Styled { #styled .wide data-x="1" }
#### Colon form {: #colon }
## Closed ##
## Uses {placeholder} braces
#hashtag is not a heading
    # indented code is not a heading
###### Six
####### Seven is too many
"""
    assert heading_summary(text) == [
        (1, 1, "First Steps", "first-steps"),
        (2, 2, "Check it", "check-it"),
        (3, 3, "Styled", "styled"),
        (4, 4, "Colon form", "colon"),
        (5, 2, "Closed", None),
        (6, 2, "Uses {placeholder} braces", None),
        (9, 6, "Six", None),
    ]


def test_split_attr_list_leaves_non_attribute_braces() -> None:
    assert split_attr_list("Title { #t }") == ("Title", "t")
    assert split_attr_list("Title { .only-class }") == ("Title", None)
    assert split_attr_list("Dict {key: value}") == ("Dict {key: value}", None)


def test_setext_headings() -> None:
    text = """
Main Title
==========

A wrapped
section title { #wrapped }
--------------

- a list item
---

plain paragraph

---

```
code
---
```
"""
    headings = parse_headings(lines_of(text))
    assert [(h.line_no, h.level, h.text, h.custom_id, h.line_count) for h in headings] == [
        (1, 1, "Main Title", None, 2),
        (4, 2, "A wrapped section title", "wrapped", 3),
    ]


def test_parse_headings_offsets_line_numbers() -> None:
    headings = parse_headings(["", "## Later"], first_line_no=40)
    assert [(h.line_no, h.text) for h in headings] == [(41, "Later")]


# -- interesting ranges -----------------------------------------------------------------------

SECTION = """
## Install { #install }

Intro paragraph.

1. Create a folder.
   Continue the first step.
2. Enter it:

    ```bash
    cd folder
    ```

3. Done.

* apple
* banana
    * nested banana

### Details

手順1: 準備する
説明の続き。

手順 2：実行する

```python
print("hi")
```
"""


def test_interesting_ranges_mark_lists_headings_steps_and_code() -> None:
    ranges = interesting_ranges(lines_of(SECTION), 10)
    assert ranges == [
        (14, 22, "ordered-list"),
        (18, 20, "code-block"),
        (24, 26, "bullet-list"),
        (28, 28, "nested-heading"),
        (30, 31, "labelled-step"),
        (33, 37, "labelled-step"),
        (35, 37, "code-block"),
    ]
    for reason in {r for _, _, r in ranges}:
        spans = [(s, e) for s, e, r in ranges if r == reason]
        assert all(prev[1] < nxt[0] for prev, nxt in itertools.pairwise(spans))


def test_interesting_ranges_split_lists_of_different_kinds() -> None:
    lines = ["# T", "1. one", "2. two", "- dash", "- dash", "", "Para", "1) again"]
    assert interesting_ranges(lines, 1) == [
        (2, 3, "ordered-list"),
        (4, 5, "bullet-list"),
        (8, 8, "ordered-list"),
    ]


def test_interesting_ranges_do_not_take_thematic_breaks_for_bullets() -> None:
    assert interesting_ranges(["# T", "* * *", "- - -", "***"], 1) == []


# -- flow candidates --------------------------------------------------------------------------


def test_numbered_steps_beat_everything_else() -> None:
    flow = flow_candidates(lines_of(SECTION), 10)
    assert [item.origin for item in flow] == ["numbered"] * 3
    assert [item.title for item in flow] == ["Create a folder.", "Enter it:", "Done."]
    assert flow[0].description == "Create a folder. Continue the first step."
    assert flow[1].description == "Enter it:"  # fenced code is not prose
    assert [item.line_no for item in flow] == [14, 16, 22]


def test_labelled_steps_when_there_are_no_numbered_steps() -> None:
    text = """
## 手順

- 補足
- 補足その二

**手順1**: 環境を用意します。詳しくは後述します。
続きの説明。

手順 2：アプリを起動する

## Step 3 wrap up { #step-3 }

Closing words.
"""
    flow = flow_candidates(lines_of(text), 1)
    assert [item.origin for item in flow] == ["labelled"] * 3
    assert flow[0].title == "手順1: 環境を用意します。"
    assert flow[0].description == "手順1: 環境を用意します。詳しくは後述します。 続きの説明。"
    assert flow[1].title == "手順 2：アプリを起動する"
    assert flow[2].title == "Step 3 wrap up"
    assert flow[2].description == "Step 3 wrap up. Closing words."
    assert [item.line_no for item in flow] == [6, 9, 11]


def test_chinese_step_labels_and_prose_that_only_looks_like_one() -> None:
    text = "第一步是设置项目。\n\n第1步：安装\n\n步骤2 运行\n"
    flow = flow_candidates(lines_of(text), 1)
    assert [(item.origin, item.line_no) for item in flow] == [("labelled", 3), ("labelled", 5)]


def test_one_numbered_item_falls_through_to_bullets() -> None:
    lines = ["# T", "1. only one", "", "Text.", "", "- first bullet", "- second bullet"]
    flow = flow_candidates(lines, 1)
    assert [(item.origin, item.title) for item in flow] == [
        ("bullet", "first bullet"),
        ("bullet", "second bullet"),
    ]


def test_nested_headings_when_there_are_no_lists() -> None:
    lines = ["# Top", "Intro.", "## One", "Body one.", "## Two", "Body two."]
    flow = flow_candidates(lines, 1)
    assert [(item.origin, item.title, item.line_no) for item in flow] == [
        ("heading", "One", 3),
        ("heading", "Two", 5),
    ]
    assert flow[0].description == "One. Body one."


def test_paragraph_fallback_takes_first_sentences_of_at_most_eight() -> None:
    paragraphs = [f"Paragraph **{n}** says something. Then more." for n in range(10)]
    lines = ["# Only prose", ""]
    for paragraph in paragraphs:
        lines += [paragraph, ""]
    flow = flow_candidates(lines, 1)
    assert len(flow) == 8
    assert {item.origin for item in flow} == {"paragraph"}
    assert flow[0].title == "Paragraph 0 says something."
    assert flow[0].description == "Paragraph 0 says something. Then more."
    assert flow[7].line_no == 17


def test_titles_and_descriptions_are_capped() -> None:
    long_item = "word " * 200
    flow = flow_candidates(["1. " + long_item, "2. " + long_item], 1)
    assert all(len(item.title) <= 81 and item.title.endswith("…") for item in flow)
    assert all(len(item.description) <= 301 for item in flow)


def test_flow_is_deterministic_on_real_documents(fastapi_corpus) -> None:
    lines = (DOCS / "en/docs/tutorial/first-steps.md").read_text("utf-8").splitlines()
    recap = next(i for i, line in enumerate(lines) if line.startswith("## Recap, step by step"))
    block = lines[recap:]
    first = flow_candidates(block, recap + 1)
    assert first == flow_candidates(block, recap + 1)
    assert [item.title for item in first[:2]] == [
        "Step 1: import FastAPI",
        'Step 2: create a FastAPI "instance"',
    ]
    assert all(item.origin == "labelled" for item in first)


# -- front matter -----------------------------------------------------------------------------


def test_front_matter_keys() -> None:
    text = """---
title: Install guide
search:
  boost: 2.5
superseded_by: guide/install-v2.md
effective_from: 2024-01-15
effective_to: "2025-06-01T12:00:00+02:00"
moved_from: old/install.md
class: Ledger
canonical: install
---
# Heading
"""
    meta, skipped, raw = parse_front_matter(text)
    assert skipped == 11
    assert raw["title"] == "Install guide"
    assert meta.title == "Install guide"
    assert meta.boost == 2.5
    assert meta.superseded_by == "guide/install-v2.md"
    assert meta.effective_from == datetime(2024, 1, 15, tzinfo=UTC)
    assert meta.effective_to == datetime(2025, 6, 1, 10, 0, tzinfo=UTC)
    assert meta.moved_from == ("old/install.md",)
    assert meta.source_class == "ledger"
    assert meta.canonical_key == "install"
    assert meta.parse_confidence == 1.0


def test_front_matter_alternative_spellings() -> None:
    text = """---
"search.boost": 3
moved_from: [a.md, b.md, 7]
source_class: archive
canonical_key: k1
effective_from: 2024-03-01 08:30:00
...
body
"""
    meta, skipped, _ = parse_front_matter(text)
    assert skipped == 7
    assert meta.boost == 3.0
    assert meta.moved_from == ("a.md", "b.md", "7")
    assert meta.source_class == "archive"
    assert meta.canonical_key == "k1"
    assert meta.effective_from == datetime(2024, 3, 1, 8, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "boost"),
    [(".nan", 0.0), ("-2", 0.0), (".inf", 0.0), ("hello", 1.0), ("true", 1.0), ("'1.5'", 1.5)],
)
def test_boost_is_clamped_or_ignored(value: str, boost: float) -> None:
    meta, _, _ = parse_front_matter(f"---\nsearch:\n  boost: {value}\n---\n")
    assert math.isclose(meta.boost, boost)


def test_unknown_class_and_bad_dates_are_dropped() -> None:
    meta, _, _ = parse_front_matter("---\nclass: gospel\neffective_from: someday\n---\n")
    assert meta.source_class is None
    assert meta.effective_from is None
    assert meta.parse_confidence == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\n---\n# Body\n",
        "---\n- just\n- a list\n---\n# Body\n",
        "---\n\tbad: tab\n---\n# Body\n",
    ],
)
def test_broken_front_matter_lowers_confidence_but_is_skipped(text: str) -> None:
    meta, skipped, raw = parse_front_matter(text)
    assert (meta.parse_confidence, raw) == (0.5, {})
    assert text.splitlines()[skipped - 1] == "---"
    assert text.splitlines()[skipped] == "# Body"


def test_no_front_matter() -> None:
    assert parse_front_matter("# Title\n---\n")[1] == 0
    assert parse_front_matter("---\nnever closed\n")[1] == 0
    meta, skipped, _ = parse_front_matter("\ufeff---\n---\nbody")
    assert (meta.parse_confidence, skipped) == (1.0, 2)


# -- extractor --------------------------------------------------------------------------------

DOCUMENT = """---
title: Guide
---
Preamble text.

# Guide Title

Intro.

## Usage

Use it.

```python
# a comment, not a heading
```

### Details { #deep }

Fine print.

## Usage

Again.
"""


def test_extractor_blocks() -> None:
    extraction = MarkdownExtractor().extract("docs/guide.md", DOCUMENT)
    assert extraction.front_matter_lines == 3
    assert extraction.meta.title == "Guide"
    summary = [
        (b.start_line, b.end_line, b.level, b.anchor, b.title, b.section_path)
        for b in extraction.blocks
    ]
    assert summary == [
        (4, 5, 0, "", "Guide", ()),
        (6, 24, 1, "guide-title", "Guide Title", ("Guide Title",)),
        (10, 21, 2, "usage", "Usage", ("Guide Title", "Usage")),
        (18, 21, 3, "deep", "Details", ("Guide Title", "Usage", "Details")),
        (22, 24, 2, "usage-1", "Usage", ("Guide Title", "Usage")),
    ]
    blocks = extraction.blocks
    assert all(b.kind is RefKind.DOC for b in blocks)
    assert blocks[0].body == "Preamble text.\n"
    assert blocks[2].body.startswith("## Usage\n\nUse it.")
    assert "# a comment, not a heading" in blocks[2].body
    assert "Fine print" not in blocks[2].body
    assert blocks[3].body == "### Details { #deep }\n\nFine print.\n"
    lines = DOCUMENT.splitlines()
    for block in blocks[1:]:
        assert lines[block.start_line - 1].lstrip("#").strip().startswith(block.title)


def test_extractor_title_defaults() -> None:
    extractor = MarkdownExtractor()
    assert extractor.extract("a/b.md", "intro\n\n# Heading One\n").meta.title == "Heading One"
    no_h1 = extractor.extract("a/notes.md", "## Only a second level\n")
    assert no_h1.meta.title == "notes"
    assert [b.anchor for b in no_h1.blocks] == ["only-a-second-level"]
    assert extractor.extract("empty.md", "").blocks == ()


def test_extractor_without_headings_is_one_preamble_block() -> None:
    blocks = MarkdownExtractor().extract("plain.md", "just text\nmore text").blocks
    assert [(b.start_line, b.end_line, b.anchor, b.title) for b in blocks] == [(1, 2, "", "plain")]


def test_extractor_broken_front_matter_keeps_real_line_numbers() -> None:
    text = "---\ntitle: [oops\n---\n\n## Section\nbody\n"
    extraction = MarkdownExtractor().extract("x.md", text)
    assert extraction.meta.parse_confidence == 0.5
    assert extraction.front_matter_lines == 3
    assert [(b.start_line, b.end_line, b.anchor) for b in extraction.blocks] == [(5, 6, "section")]


def test_extractor_accepts() -> None:
    extractor = MarkdownExtractor()
    assert isinstance(extractor, BlockExtractor)
    assert (extractor.name, extractor.version, extractor.priority) == ("markdown", "3", 100)
    assert extractor.accepts("a/b.md", Corpus.DOCS)
    assert extractor.accepts("a/B.MARKDOWN", Corpus.DOCS)
    assert extractor.accepts("page.mdx", Corpus.DOCS)
    assert not extractor.accepts("a/b.md", Corpus.CODE)
    assert not extractor.accepts("a/b.txt", Corpus.DOCS)


def test_first_steps_from_the_corpus(fastapi_corpus) -> None:
    text = (DOCS / "en/docs/tutorial/first-steps.md").read_text("utf-8")
    extraction = MarkdownExtractor().extract("docs/en/docs/tutorial/first-steps.md", text)
    by_anchor = {b.anchor: b for b in extraction.blocks}
    check = by_anchor["check-it"]
    assert check.section_path[-1] == "Check it"
    assert check.section_path == ("First Steps", "Check it")
    assert text.splitlines()[check.start_line - 1] == "### Check it { #check-it }"
    openapi, schema = by_anchor["openapi"], by_anchor["schema"]
    assert openapi.start_line < schema.start_line <= schema.end_line <= openapi.end_line
    assert '#### "Schema"' not in openapi.body
    assert extraction.meta.title == "First Steps"


def test_every_corpus_document_extracts(fastapi_corpus) -> None:
    extractor = MarkdownExtractor()
    counts: dict[str, int] = {}
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text("utf-8")
        extraction = extractor.extract(path.relative_to(CORPUS).as_posix(), text)
        lines = text.splitlines()
        total = len(lines)
        anchors = [b.anchor for b in extraction.blocks if b.level]
        assert len(anchors) == len(set(anchors)), path
        for block in extraction.blocks:
            assert extraction.front_matter_lines < block.start_line <= block.end_line <= total
            assert block.body.splitlines()[0] == lines[block.start_line - 1]
        language = path.relative_to(DOCS).parts[0]
        counts[language] = counts.get(language, 0) + len(extraction.blocks)
    assert set(counts) == {"en", "ja", "zh"}
    assert min(counts.values()) > 100


def test_japanese_corpus_headings_keep_custom_ids(fastapi_corpus) -> None:
    text = (DOCS / "ja/docs/tutorial/first-steps.md").read_text("utf-8")
    anchors = {b.anchor for b in MarkdownExtractor().extract("first-steps.md", text).blocks}
    assert "check-it" in anchors


# -- source and plugin ------------------------------------------------------------------------


def make_source(root: Path) -> MarkdownSource:
    context = SourceContext(extractors=ExtractorChain([MarkdownExtractor()]))
    return MarkdownSource(SourceConfig(name="fastapi", kind="markdown", root=root), context)


@pytest.fixture
def docs_tree(fastapi_corpus, tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    shutil.copytree(DOCS / "en/docs/tutorial/security", root / "tutorial/security")
    for name in ("first-steps.md", "index.md"):
        shutil.copy(DOCS / "en/docs/tutorial" / name, root / "tutorial" / name)
    shutil.copy(DOCS / "en/docs/index.md", root / "index.md")
    (root / "tutorial/notes.txt").write_text("not markdown", "utf-8")
    (root / ".gitignore").write_text("drafts/\n", "utf-8")
    (root / "drafts").mkdir()
    (root / "drafts/wip.md").write_text("# Draft\n", "utf-8")
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n", "utf-8")
    (root / "leak.md").symlink_to(outside)
    (root / "alias.md").symlink_to(root / "tutorial/first-steps.md")
    return root


def test_markdown_source_lists_only_markdown_inside_the_root(docs_tree: Path) -> None:
    source = make_source(docs_tree)
    paths = [stat.path for stat in source.list_files()]
    assert "tutorial/first-steps.md" in paths
    assert "tutorial/security/oauth2-jwt.md" in paths
    assert "alias.md" in paths
    assert "leak.md" not in paths
    assert "drafts/wip.md" not in paths
    assert "tutorial/notes.txt" not in paths
    assert paths == sorted(paths)


def test_markdown_source_loads_documents(docs_tree: Path) -> None:
    source = make_source(docs_tree)
    doc = source.load("tutorial/first-steps.md")
    assert doc is not None
    assert doc.corpus is Corpus.DOCS
    assert doc.meta.title == "First Steps"
    check = next(b for b in doc.blocks if b.anchor == "check-it")
    assert source.block_location(doc, check, None) == "tutorial/first-steps#check-it"


def test_markdown_source_refuses_escapes(docs_tree: Path) -> None:
    source = make_source(docs_tree)
    with pytest.raises(PathEscapeError):
        source.resolve_path("../secret.md")
    with pytest.raises(PathEscapeError):
        source.resolve_path("leak.md")
    with pytest.raises(PathEscapeError):
        source.load("tutorial/../../secret.md")


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("tutorial/first-steps.md", "tutorial/first-steps"),
        ("tutorial/index.md", "tutorial"),
        ("a/b/index.markdown", "a/b"),
        ("page.mdx", "page"),
        ("index.md", "index"),
        ("README.md", "README"),
        ("guide/reindex.md", "guide/reindex"),
    ],
)
def test_page_location(docs_tree: Path, path: str, location: str) -> None:
    assert make_source(docs_tree).page_location(path) == location


def test_plugin_registers_source_kind_and_extractor() -> None:
    pm = pluggy.PluginManager("scriptorium")
    pm.add_hookspecs(hookspecs)
    pm.register(markdown_plugin, name="markdown")
    pm.check_pending()
    registry = collect(pm)
    assert registry.source_factory("markdown") is MarkdownSource
    assert [e.name for e in registry.extractors] == ["markdown"]
    assert registry.extractor_chain.for_path("x.md", Corpus.DOCS) is not None


def test_includes_skip_pages_without_a_directive_and_find_the_same_as_the_scan(
    fastapi_corpus,
) -> None:
    """The opener test before the scan changes no answer: every page of the corpus, and
    texts that hold an opener without a directive or a directive of each kind."""
    from scriptorium.text.markdown import INCLUDE_DIRECTIVE, _include_tail, includes_in

    def scanned(text: str) -> list[str]:
        return [
            _include_tail(next(g for g in m.groups() if g))
            for m in INCLUDE_DIRECTIVE.finditer(text)
        ]

    pages = [p.read_text("utf-8") for p in sorted((CORPUS / "docs").rglob("*.md"))]
    found = 0
    for text in pages:
        assert includes_in(text) == scanned(text)
        found += bool(includes_in(text))
    assert 0 < found < len(pages)  # pages with and pages without includes were both seen
    samples = [
        "{* ../../docs_src/a/tutorial001.py hl[3] *}",
        "{! ./docs_src/b.py !}",
        '--8<-- "docs_src/c.md"',
        "a set {*} and a dict {!r} and a rule ---8<---",
        "no directive at all",
    ]
    assert [includes_in(t) for t in samples] == [
        ["docs_src/a/tutorial001.py"],
        ["docs_src/b.py"],
        ["docs_src/c.md"],
        [],
        [],
    ]
    assert [includes_in(t) for t in samples] == [scanned(t) for t in samples]
