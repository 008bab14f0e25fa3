"""Short cuts taken while building an index give exactly what the general paths give.

Each case sits on the edge of a short cut: the shape a fast path accepts, and the nearest
shape it must hand back to the general rules.
"""

from __future__ import annotations

import pytest

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.sources.base import SourceConfig, SourceContext
from scriptorium.text.markdown import _heading_text, _indent, fenced_code_spans, parse_headings
from scriptorium.text.slugs import github_slug, strip_inline_markup
from scriptorium.text.tokenize import tokenize
from scriptorium_plugins.markdown.extractor import MarkdownExtractor
from scriptorium_plugins.markdown.frontmatter import parse_front_matter

tokenize_module = __import__("scriptorium.text.tokenize", fromlist=["_word_tokens"])


# -- tokenizer ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "tokens"),
    [
        ("Request3", ("request3", "request")),
        ("FastAPI3", ("fastapi3", "fast", "api3", "api")),
        ("HTTP2Server", ("http2server", "http2", "http", "server")),
        ("getUser2Name", ("getuser2name", "get", "user2", "user", "name")),
        ("ÉcoleNormale2", ("écolenormale2", "école", "normale2", "normale")),
        ("ᗉЏ2", ("ᗉџ2", "ᗉ", "џ2")),
        ("Base64", ("base64", "base")),
        ("X1Y2", ("x1y2", "x1", "y2")),
        ("2024", ("2024",)),
    ],
)
def test_words_without_connectors_split_as_compounds_do(word, tokens):
    assert tuple(tokenize_module._word_tokens(word)) == tokens
    # The same word as one segment of a compound yields the same parts after the compound.
    assert tuple(tokenize_module._word_tokens(f"x.{word}"))[2:] == tokens


def test_fully_cached_and_partly_cached_texts_tokenize_alike(monkeypatch):
    monkeypatch.setattr(tokenize_module, "_caches", {})
    for cut in (tokenize, _python_tokenize):
        first = cut("FastAPI3 runs 検索エンジン app.include_router")
        partly = cut("FastAPI3 runs 検索エンジン app.include_router newword")
        again = cut("FastAPI3 runs 検索エンジン app.include_router")
        assert first == again == partly[:-1]
        assert partly[-1] == "newword"
        assert "検索" in first and "include_router" in first


def _python_tokenize(text: str) -> list[str]:
    return tokenize_module.python_tokenize(text, True, False, True, True)


def test_cached_tokens_share_one_string_object(monkeypatch):
    monkeypatch.setattr(tokenize_module, "_caches", {})
    monkeypatch.setattr(tokenize_module, "_pool", {})
    tokenize_module.python_tokenize("get getUser 検索エンジン 索エ", True, False, True, True)
    young, _old = tokenize_module._caches[(True, False, True, True)]
    assert young["getUser"] == ("getuser", "get", "user")
    assert young["get"][0] is young["getUser"][1]
    assert young["索エ"][0] is young["検索エンジン"][1]


# -- Markdown structure ---------------------------------------------------------------------------


def test_indent_counts_tabs_to_the_next_stop():
    assert _indent(" \t x") == 5
    assert _indent("\tx") == 4
    assert _indent("   x") == 3
    assert _indent("x") == 0


def test_block_patterns_see_through_prose_lines_only():
    lines = [
        "\u3000# not a heading",  # ideographic space: ATX allows only spaces
        "",
        "３. item",  # a full-width digit opens an ordered list
        "---",
        "",
        "١. one",  # Arabic-Indic digits too
        "two",
        "===",
        "",
        "Prose",
        "===",
        "",
        "    # indented code",
        "#no",
    ]
    headings = parse_headings(lines)
    assert [(h.line_no, h.level, h.text, h.line_count) for h in headings] == [(10, 1, "Prose", 2)]


def test_fences_inside_list_items_and_tildes():
    lines = ["- item", "", "    ```py", "    x", "    ```", "after", "~~~", "y", "~~~"]
    assert fenced_code_spans(lines) == [(2, 4), (6, 8)]


def test_heading_text_without_markup_is_only_collapsed():
    assert _heading_text("  Plain   heading  ") == ("Plain heading", None)
    assert _heading_text("Title { #custom } ##") == ("Title", "custom")
    assert _heading_text("Dict {key: value}") == ("Dict {key: value}", None)


def test_plain_text_is_returned_unless_it_holds_markup_or_placeholders():
    assert strip_inline_markup("plain text, (parens) and #hash") == "plain text, (parens) and #hash"
    assert strip_inline_markup("a `b_c` *d*") == "a b_c d"
    # A private-use placeholder character is restored as the general path always did.
    assert strip_inline_markup("x\U000f0041") == "xA"


@pytest.mark.parametrize(
    ("text", "visible"),
    [
        # Each pattern is asked only where its character occurs: every kind of markup, alone
        # and mixed, with escapes parked around code spans and placeholders already present.
        ("Use `Annotated` in the `q` parameter", "Use Annotated in the q parameter"),
        ("\\*not emphasis\\* and `a\\*b`", "*not emphasis* and a\\*b"),
        ("![alt](i.png) [link](u) [ref][r] <https://x.y>", "alt link ref https://x.y"),
        ("<b>bold</b> **strong** __under__ ~~gone~~ *em* _it_", "bold strong under gone em it"),
        ("snake_case_name and 2*3*4", "snake_case_name and 234"),
        ("x\U000f0041 `y\U000f0042`", "xA y\\B"),
    ],
)
def test_inline_markup_of_every_kind_is_stripped(text, visible):
    assert strip_inline_markup(text) == visible


def test_closing_hashes_go_only_where_a_heading_ends_with_them():
    assert _heading_text("Title ##") == ("Title", None)
    assert _heading_text("Title ## { #custom }") == ("Title", "custom")
    assert _heading_text("C# and F#") == ("C# and F#", None)
    assert _heading_text("Issue #12 { #issue }") == ("Issue #12", "issue")


def test_slugs_keep_letters_digits_dashes_and_underscores():
    assert github_slug("Hello, World! 2 — ok_x") == "hello-world-2--ok_x"
    assert github_slug("日本語の\u3000見出し（テスト）") == "日本語の-見出しテスト"
    assert github_slug("`Code` and **bold**") == "code-and-bold"


# -- front matter ---------------------------------------------------------------------------------


def test_front_matter_is_found_only_at_the_very_start():
    meta, lines, raw = parse_front_matter("\ufeff---\ntitle: T\n---\nbody\n")
    assert (meta.title, lines, raw) == ("T", 3, {"title": "T"})
    assert parse_front_matter("body\n---\ntitle: T\n---\n")[1:] == (0, {})
    assert parse_front_matter("----\ntitle: T\n---\n")[1:] == (0, {})


# -- a build's per-document and per-file short cuts ------------------------------------------------


def test_a_documents_tokens_are_each_blocks_own_on_the_fastapi_pages(fastapi_corpus):
    """A build tokenizes a page's path field and repeated heading texts once per document;
    every block must still get exactly what tokenizing it alone gives, features included."""
    from scriptorium.index.fields import (
        block_tokens,
        document_fields,
        document_tokens,
        indexed_fields,
    )
    from scriptorium.settings.ranking import RankingSettings
    from scriptorium_plugins.markdown.source import MarkdownSource
    from tests.support.daemon import CORPUS

    options = RankingSettings().token_options()
    context = SourceContext(extractors=ExtractorChain([MarkdownExtractor()]))
    blocks = 0
    for lang in ("en", "ja", "zh"):
        config = SourceConfig(name=lang, kind="markdown", root=CORPUS / "docs" / lang / "docs")
        source = MarkdownSource(config, context)
        for stat in source.list_files():
            doc = source.load(stat.path)
            if doc is None:
                continue
            page = source.page_location(doc.path)
            expected = tuple(block_tokens(doc, b, page, options) for b in doc.blocks)
            assert document_tokens(doc, page, options) == expected, stat.path
            # ... and the stored ranking features a build worker makes per document too.
            fields = tuple(indexed_fields(doc, b, page, options) for b in doc.blocks)
            assert document_fields(doc, page, options) == fields, stat.path
            blocks += len(expected)
    assert blocks > 4000


@pytest.mark.parametrize("run", ["検索", "検索エンジン", "查询参数的类型", "𠀀𠀁𠀂かな"])
def test_cjk_runs_give_every_two_character_window(run):
    assert tokenize(run) == [run[i : i + 2] for i in range(len(run) - 1)]


def test_the_vitepress_rule_is_remembered_per_folder_not_per_source(tmp_path):
    """Two sites' folders under one root: each page gets its own folder's rule."""
    from scriptorium.text.slugs import github_slug
    from scriptorium_plugins.markdown.mdx import vitepress_slug
    from scriptorium_plugins.markdown.source import MarkdownSource

    (tmp_path / "site/.vitepress").mkdir(parents=True)
    (tmp_path / "site/guide").mkdir()
    (tmp_path / "plain/guide").mkdir(parents=True)
    context = SourceContext(extractors=ExtractorChain([MarkdownExtractor()]))
    source = MarkdownSource(SourceConfig(name="d", kind="markdown", root=tmp_path), context)
    assert source.slug_rule("site/guide/a.md") is vitepress_slug
    assert source.slug_rule("plain/guide/a.md") is github_slug
    assert source.slug_rule("site/guide/b.md") is vitepress_slug
    assert source.slug_rule("plain/guide/b.md") is github_slug
    assert source.slug_rule("top.md") is github_slug
