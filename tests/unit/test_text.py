"""The shared text pipeline: normalisation, tokenization, previews, snippets and budgets."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from scriptorium.text import (
    MAX_QUERY_TERMS,
    STOPWORDS,
    best_line,
    code_snippet,
    collapse_whitespace,
    doc_snippet,
    estimate_tokens,
    normalize,
    preview,
    query_terms,
    split_lines,
    tokenize,
    trim_to_tokens,
)
from scriptorium.text.preview import prepare
from scriptorium.text.tokenize import _ASCII_RUN_RE, _RUN_RE
from tests.support.daemon import CORPUS

JA_FIRST_STEPS = CORPUS / "docs" / "ja" / "docs" / "tutorial" / "first-steps.md"
PY_SAMPLE = CORPUS / "fastapi" / "security" / "oauth2.py"


@pytest.fixture
def ja_first_steps(fastapi_corpus, tmp_path: Path) -> str:
    target = tmp_path / "first-steps.md"
    shutil.copyfile(JA_FIRST_STEPS, target)
    return target.read_text("utf-8")


@pytest.fixture
def oauth2_source(fastapi_corpus, tmp_path: Path) -> str:
    target = tmp_path / "oauth2.py"
    shutil.copyfile(PY_SAMPLE, target)
    return target.read_text("utf-8")


# -- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("FastAPI", "fastapi"),
        ("ＦａｓｔＡＰＩ", "fastapi"),  # full-width Latin
        ("ｶﾀｶﾅ", "カタカナ"),  # half-width katakana
        ("Straße", "strasse"),  # casefold, not lower
        ("ﬁle", "file"),  # ligature
        ("", ""),
    ],
)
def test_normalize_is_nfkc_then_casefold(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  a \t\tb\r\n\r\nc\u00a0\u00a0d\f e  ", "a b c d e"),
        ("one\u2003two\u3000three\vfour", "one two three four"),
        ("\n\t \u00a0", ""),
        ("", ""),
        ("already clean", "already clean"),
    ],
)
def test_collapse_whitespace(raw: str, expected: str) -> None:
    assert collapse_whitespace(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\n", ["a", ""]),
        ("\n", [""]),
        ("a\r\nb\r\n", ["a", "b"]),
        ("a\r\nb", ["a", "b"]),
        ("a\rb\nc\r", ["a\rb", "c"]),  # only a carriage return ending a line goes
        ("x\fy\u2028z\n", ["x\fy\u2028z"]),  # form feeds and U+2028 do not split
    ],
)
def test_split_lines_counts_lines_as_editors_do(raw: str, expected: list[str]) -> None:
    assert split_lines(raw) == expected


# -- tokenize ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("検索エンジン", ["検索", "索エ", "エン", "ンジ", "ジン"]),
        ("getUserName", ["getusername", "get", "user", "name"]),
        ("get_user_name", ["get_user_name", "get", "user", "name"]),
        ("a.b.c", ["a.b.c", "a", "b", "c"]),
        ("kebab-case", ["kebab-case", "kebab", "case"]),
        ("HTTPException", ["httpexception", "http", "exception"]),
        ("APIRouter", ["apirouter", "api", "router"]),
        ("DEC-0054", ["dec-0054", "dec", "0054"]),
        (
            "OAuth2PasswordBearer",
            ["oauth2passwordbearer", "oauth2", "oauth", "password", "bearer"],
        ),
        (
            "fastapi/security/oauth2.py",
            ["fastapi/security/oauth2.py", "fastapi", "security", "oauth2", "oauth", "py"],
        ),
        ("std::vec::Vec", ["std::vec::vec", "std", "vec", "vec"]),
        ("IPv4Address", ["ipv4address", "ipv4", "ipv", "address"]),
        ("Base64", ["base64", "base"]),
        ("utf8", ["utf8", "utf"]),
        ("XMLHttpRequest", ["xmlhttprequest", "xml", "http", "request"]),
        ("ＧＥＴ", ["get"]),
        ("router Router ROUTER", ["router", "router", "router"]),
    ],
)
def test_tokenize_examples(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_mixed_latin_and_cjk() -> None:
    tokens = tokenize("FastAPIのパス")
    assert tokens[0] == "fastapi"
    assert tokens[-2:] == ["のパ", "パス"]


def test_cjk_single_character_run_and_prolonged_sound_mark() -> None:
    assert tokenize("a 検 b", drop_stopwords=False) == ["a", "検", "b"]
    assert tokenize("サーバー") == ["サー", "ーバ", "バー"]
    # The katakana middle dot separates runs rather than joining them.
    assert tokenize("テスト・ケース") == ["テス", "スト", "ケー", "ース"]
    assert tokenize("ｻｰﾊﾞｰ") == tokenize("サーバー")  # half-width forms normalise first


def test_camel_case_splits_on_original_casing() -> None:
    # Casefolding first would leave nothing to split.
    assert "user" in tokenize("getUserName")
    assert "user" not in tokenize("getusername")
    assert tokenize("ÜberSchrift") == ["überschrift", "über", "schrift"]


def test_identifier_used_as_attribute_keeps_its_own_whole_form() -> None:
    tokens = tokenize("user = self.getUserName()")
    assert "self.getusername" in tokens
    assert "getusername" in tokens
    assert tokens.count("user") == 2


def test_oauth2_password_bearer_meets_both_query_spellings() -> None:
    document = set(tokenize("scheme = OAuth2PasswordBearer(tokenUrl='token')"))
    for query in ("oauth2 password bearer", "OAuth2PasswordBearer", "OAuth password bearer"):
        terms = query_terms(query)
        assert terms
        assert set(terms) <= document, query


def test_documents_and_queries_share_tokens() -> None:
    for phrase in ("APIRouter", "get_user_name", "検索エンジン", "DEC-0054"):
        assert query_terms(phrase) == list(dict.fromkeys(tokenize(phrase)))


def test_overlong_tokens_and_punctuation_are_dropped() -> None:
    assert tokenize("x" * 10_000) == []
    assert tokenize("prefix_" + "y" * 100) == ["prefix"]
    assert tokenize("--- !!! ... :: // __ ~~~") == []
    assert all(len(t) <= 64 for t in tokenize(("ab" * 40 + " ") * 5))


def test_stopwords_drop_only_standalone_words() -> None:
    assert tokenize("How do I use the router") == ["use", "router"]
    assert tokenize("How do I use the router", drop_stopwords=False) == [
        "how",
        "do",
        "i",
        "use",
        "the",
        "router",
    ]
    assert tokenize("is_active") == ["is_active", "is", "active"]
    assert {"the", "a", "to", "of", "how", "what"} <= STOPWORDS
    assert 30 <= len(STOPWORDS) <= 60


def test_stemming_is_optional() -> None:
    assert tokenize("running dependencies") == ["running", "dependencies"]
    assert tokenize("running dependencies", stem=True) == ["run", "depend"]
    # Only ASCII alphabetic tokens are stemmed.
    assert tokenize("café_items", stem=True)[0] == "café_items"
    assert tokenize("検索エンジン", stem=True) == tokenize("検索エンジン")


def test_a_data_uris_payload_gives_no_tokens() -> None:
    """An image inlined in a page: its base64 payload is not words, what surrounds it is."""
    payload = "iVBORw0KGgoAAAANSUhEUgAAAUAAAADgCAMAAABFJU/CAAAC2VBMVEVHcEzT0+fKzuXV1eg="
    page = f"See the ![Plot example](data:image/png;base64,{payload}) for matplotlib_plots"
    blank = "See the ![Plot example](data:image/png;base64, ) for matplotlib_plots"
    for options in ({}, {"stem": True}, {"drop_stopwords": False}, {"split_identifiers": False}):
        assert tokenize(page, **options) == tokenize(blank, **options), options
    assert tokenize(page) == [
        "see", "plot", "example", "data", "image/png", "image", "png", "base64", "base",
        "matplotlib_plots", "matplotlib", "plots",
    ]  # fmt: skip
    # The same letters outside a data URI are words like any other.
    assert "ivborw0kggoaaaansuheugaaauaaaadgcamaaabfju" in tokenize(f"key: {payload}")
    # Two images, with text between and after them; and a page that is not ASCII.
    two = f"a ![](data:image/gif;base64,{payload}) router ![](data:image/png;base64,{payload}) app"
    assert tokenize(two) == tokenize(
        "a ![](data:image/gif;base64,) router ![](data:image/png;base64,) app"
    )
    assert tokenize(f"検索 {page}") == ["検索", *tokenize(blank)]


def test_flags_do_not_share_memoised_results() -> None:
    text = "the router and the app"
    assert tokenize(text) == ["router", "app"]
    assert tokenize(text, drop_stopwords=False) == ["the", "router", "and", "the", "app"]
    assert tokenize(text) == ["router", "app"]


def test_ascii_fast_path_matches_unicode_runs(oauth2_source: str) -> None:
    assert oauth2_source.isascii()
    assert _ASCII_RUN_RE.findall(oauth2_source) == _RUN_RE.findall(oauth2_source)
    # The same text with one non-ASCII character takes the other path and agrees.
    assert tokenize(oauth2_source + " é") == [*tokenize(oauth2_source), "é"]


def test_whole_corpus_tokenizes(fastapi_corpus, tmp_path: Path) -> None:
    copy = shutil.copytree(
        CORPUS,
        tmp_path / "fastapi",
        ignore=lambda _dir, names: [
            n for n in names if "." in n and not n.endswith((".md", ".py"))
        ],
    )
    files = [p for p in Path(copy).rglob("*") if p.is_file() and p.suffix in (".md", ".py")]
    assert len(files) > 500
    total = 0
    cjk_bigrams = 0
    for path in files:
        tokens = tokenize(path.read_text("utf-8", "replace"))
        total += len(tokens)
        cjk_bigrams += sum(1 for t in tokens if len(t) == 2 and "\u4e00" <= t[0] <= "\u9fff")
        assert all(0 < len(t) <= 64 for t in tokens)
    assert total > 100_000
    assert cjk_bigrams > 1_000


# -- query_terms ------------------------------------------------------------------------------


def test_query_terms_dedupes_in_first_seen_order() -> None:
    assert query_terms("Router router APP router") == ["router", "app"]


def test_query_terms_removes_stopwords_unless_nothing_is_left() -> None:
    assert query_terms("how to use the router") == ["use", "router"]
    assert query_terms("how to") == ["how", "to"]
    assert query_terms("   ") == []


def test_query_terms_cap() -> None:
    words = [f"word{i:03d}" for i in range(200)]
    terms = query_terms(" ".join(words))
    assert len(terms) == MAX_QUERY_TERMS == 64
    assert terms[0] == "word000"
    assert terms[1] == "word"  # the letter run of a letters+digits word
    assert terms[2] == "word001"


def test_query_terms_survives_a_huge_token() -> None:
    assert query_terms("find " + "x" * 10_000) == ["find"]
    assert query_terms("x" * 10_000) == []


def test_query_terms_can_stem() -> None:
    assert query_terms("running routers", stem=True) == ["run", "router"]


# -- preview ----------------------------------------------------------------------------------

FILLER = "lorem ipsum dolor sit amet " * 12  # 324 characters without the letters "to" or "be"


def test_preview_returns_short_text_whole_and_collapsed() -> None:
    assert preview("  short\n\ttext\u00a0here ", "text") == "short text here"


def test_preview_no_match_falls_back_to_leading_characters() -> None:
    text = FILLER + "end"
    result = preview(text, "nothing matches")
    assert result == collapse_whitespace(text)[:200] + "..."


def test_preview_centres_on_a_later_match() -> None:
    text = FILLER + "configure the router here " + FILLER
    result = preview(text, "router")
    assert result.startswith("...")
    assert result.endswith("...")
    assert "configure the router here" in result
    inner = result[3:-3]
    assert len(inner) <= 200
    # The occurrence sits in the front part of the window, not at its edge.
    assert 10 < inner.index("router") < 100


def test_preview_skips_short_terms_when_a_longer_one_exists() -> None:
    # Were "to" kept, its window at the very start would tie with the one for "configure" and
    # win as the earlier one.
    text = "Skip to content. " + FILLER + "Configure things here. " + FILLER
    result = preview(text, "to configure")
    assert "Configure things here" in result
    assert "Skip to content" not in result
    # With only short terms, they are used.
    assert preview(text, "to").startswith("Skip to content")


def test_preview_scores_distinct_terms() -> None:
    text = "alpha alpha alpha " + FILLER + "alpha beta together " + FILLER
    result = preview(text, "alpha beta")
    assert "alpha beta together" in result
    assert result.startswith("...")


def test_preview_ties_go_to_the_earliest_window() -> None:
    text = FILLER + "first gamma mention " + FILLER + "second gamma mention " + FILLER
    result = preview(text, "gamma")
    assert "first gamma" in result
    assert "second gamma" not in result


def test_preview_considers_only_twenty_occurrences_per_term() -> None:
    lone = "".join(f"zeta {FILLER}" for _ in range(21))
    text = lone + "zeta " + "w" * 90 + " omega " + FILLER
    # The 22nd "zeta" is the only one with "omega" inside its window, so it is never scored;
    # every window then holds one distinct term and the earliest wins.
    result = preview(text, "zeta omega")
    assert result.startswith("zeta lorem")
    assert "omega" not in result
    # Within the cap, the shared window wins.
    near = "".join(f"zeta {FILLER}" for _ in range(3)) + "zeta " + "w" * 90 + " omega " + FILLER
    assert "omega" in preview(near, "zeta omega")


def test_preview_ellipses_and_bounds() -> None:
    text = "needle at the start " + FILLER + FILLER
    assert preview(text, "needle").endswith("...")
    assert not preview(text, "needle").startswith("...")
    tail = FILLER + FILLER + "needle at the end"
    result = preview(tail, "needle")
    assert result.startswith("...")
    assert result.endswith("needle at the end")
    assert len(result) <= 203


def test_preview_collapses_whitespace_before_cutting() -> None:
    text = "intro\r\n\r\n\t\t" + ("word\u00a0\u00a0\tspaced\r\n" * 40) + "target phrase here"
    result = preview(text, "target")
    assert "target phrase here" in result
    for bad in ("\r", "\n", "\t", "\u00a0", "  "):
        assert bad not in result


def test_preview_matches_case_insensitively_and_starts_on_a_word() -> None:
    words = " ".join(f"word{i}" for i in range(60))  # no repeated substrings to confuse index()
    text = words + " The FastAPI application object " + words
    result = preview(text, "FASTAPI")
    assert "FastAPI application" in result
    inner = result[3:]
    collapsed = collapse_whitespace(text)
    start = collapsed.index(inner[:40])
    assert collapsed[start - 1] == " "


def test_preview_leaves_an_inlined_images_payload_out() -> None:
    payload = "iVBORw0KGgoAAAANSUhEUgAAAUAAAADgCAMAAABFJU" * 40
    page = f"Intro text. ![Scatter plot](data:image/png;base64,{payload}) Draws a scatter plot."
    for text in (page, prepare(page)):
        shown = preview(text, "scatter plot png")
        assert shown == "Intro text. ![Scatter plot](data:image/png;base64, ) Draws a scatter plot."


def test_preview_respects_max_chars() -> None:
    text = FILLER + "router " + FILLER
    result = preview(text, "router", max_chars=50)
    assert "router" in result
    assert len(result) <= 56
    assert preview(text, "router", max_chars=0) == ""


def test_preview_never_exceeds_206_characters(fastapi_corpus, tmp_path: Path) -> None:
    target = tmp_path / "oauth2.py"
    shutil.copyfile(PY_SAMPLE, target)
    text = target.read_text("utf-8")
    collapsed = collapse_whitespace(text)
    for query in ("OAuth2 password", "scopes token", "a b", "def", "", "Bearer realm", "zzz"):
        result = preview(text, query)
        assert len(result) <= 206
        inner = result.removeprefix("...").removesuffix("...")
        assert len(inner) <= 200
        assert inner in collapsed


def test_preview_japanese_query_on_japanese_text(ja_first_steps: str) -> None:
    result = preview(ja_first_steps, "オペレーション")
    assert "オペレーション" in result
    assert result.startswith("...")
    assert len(result) <= 206
    # The first occurrence is chosen, and a CJK window start is not moved to a space.
    collapsed = collapse_whitespace(ja_first_steps)
    first = collapsed.index("オペレーション")
    inner = result[3:].removesuffix("...")
    assert collapsed.index(inner) == first - 200 // 3


def test_preview_is_deterministic(ja_first_steps: str) -> None:
    assert preview(ja_first_steps, "path operation") == preview(ja_first_steps, "path operation")


# -- best_line --------------------------------------------------------------------------------

CODE_LINES = [
    "import os",
    "",
    "def getUserName(user_id):",
    "    user = load(user_id)",
    "    return user.name",
    "",
    "class Repo:",
    "    name = 'repo'",
]


def test_best_line_counts_distinct_terms_on_identifier_parts() -> None:
    assert best_line(CODE_LINES, ["user", "name"]) == 2
    assert best_line(CODE_LINES, ["load"]) == 3


def test_best_line_ties_go_to_the_earliest_line() -> None:
    assert best_line(CODE_LINES, ["name"]) == 2
    assert best_line(CODE_LINES, ["name"], start=3) == 4


def test_best_line_respects_the_range_and_normalises_terms() -> None:
    assert best_line(CODE_LINES, ["REPO"], 0, 6) is None
    assert best_line(CODE_LINES, ["REPO"], 6) == 6
    assert best_line(CODE_LINES, ["missing"]) is None
    assert best_line(CODE_LINES, []) is None
    assert best_line(CODE_LINES, ["getUserName"]) == 2


# -- snippets ---------------------------------------------------------------------------------

LINES = [f"line {i}" for i in range(1, 41)]


def test_doc_snippet_takes_lines_from_the_block_start() -> None:
    assert doc_snippet(LINES, 5, 15, 3) == ("line 5\nline 6\nline 7", 5, 7)
    text, first, last = doc_snippet(LINES, 5, 7, 10)
    assert (first, last) == (5, 7)
    assert text.splitlines() == ["line 5", "line 6", "line 7"]


def test_doc_snippet_clamps_to_the_file() -> None:
    assert doc_snippet(LINES, 39, 60, 5) == ("line 39\nline 40", 39, 40)
    assert doc_snippet(LINES, 50, 60, 5) == ("", 0, 0)
    assert doc_snippet(LINES, 5, 15, 0) == ("", 0, 0)


@pytest.mark.parametrize(
    ("start", "end", "anchor", "n", "expected"),
    [
        (10, 30, 20, 5, (18, 22)),  # centred
        (10, 30, 11, 5, (10, 14)),  # kept inside the block at its start
        (10, 30, 30, 5, (26, 30)),  # ... and at its end
        (10, 12, 11, 7, (8, 14)),  # a short block borrows context from the file
        (1, 2, 1, 5, (1, 5)),  # ... but never leaves the file
        (38, 40, 40, 6, (35, 40)),
        (10, 30, 20, 8, (17, 24)),
    ],
)
def test_code_snippet_window(
    start: int, end: int, anchor: int, n: int, expected: tuple[int, int]
) -> None:
    text, first, last = code_snippet(LINES, start, end, anchor, n)
    assert (first, last) == expected
    assert text.splitlines() == LINES[first - 1 : last]


def test_code_snippet_small_file_and_degenerate_input() -> None:
    assert code_snippet(LINES[:3], 1, 3, 2, 10) == ("line 1\nline 2\nline 3", 1, 3)
    assert code_snippet([], 1, 1, 1, 5) == ("", 0, 0)
    assert code_snippet(LINES, 1, 40, 99, 2) == ("line 39\nline 40", 39, 40)


# -- budget -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("abcd", 1),
        ("abcde", 2),
        ("検索", 2),
        ("検索abcd", 3),
        ("検索 engine", 4),
        ("最初のステップ。", 8),
        ("é", 1),
    ],
)
def test_estimate_tokens(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


def test_trim_to_tokens_keeps_text_within_budget() -> None:
    assert trim_to_tokens("short", 10) == "short"
    assert trim_to_tokens("hello world this is a long text", 3) == "hello world…"
    assert trim_to_tokens("abcdefghijkl", 1) == "abc…"
    assert trim_to_tokens("anything at all", 0) == ""


def test_trim_to_tokens_on_real_text(ja_first_steps: str, oauth2_source: str) -> None:
    for text in (ja_first_steps, oauth2_source):
        for budget in (1, 2, 7, 50, 333):
            result = trim_to_tokens(text, budget)
            assert estimate_tokens(result) <= budget
            assert result.endswith("…") or result == ""
            assert text.startswith(result.removesuffix("…"))
    words = trim_to_tokens(oauth2_source, 100)
    assert len(words) >= math.floor(100 * 4 * 0.5)
    assert oauth2_source[len(words) - 1].isspace()
