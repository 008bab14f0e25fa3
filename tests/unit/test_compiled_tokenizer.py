"""The compiled tokenizer (``native/``) against the Python rules it stands in for.

The Python tokenizer is the reference: every text here is tokenized both ways, with every
option combination, and the token lists must be equal. The corpus is every Markdown and
Python file of the FastAPI corpus (English, Japanese and Chinese pages); the adversarial
texts are where Python's Unicode rules (``\\w``, ``str.casefold``, NFKC, the case
predicates) and anything written in Rust could part ways.
"""

from __future__ import annotations

import importlib
import itertools
import os
import random
import sys
import unicodedata
from concurrent.futures import ThreadPoolExecutor

import pytest

from scriptorium.text import compiled, features
from tests.support.daemon import CORPUS

tok = importlib.import_module("scriptorium.text.tokenize")
normalize = importlib.import_module("scriptorium.text.normalize")

COMBOS = list(itertools.product((True, False), repeat=4))  # drop, stem, split, bigrams
DEFAULT = (True, True, True, True)

ADVERSARIAL = [
    # casefold specials and titlecase letters
    "ß straße STRASSE Straße ẞ",
    "İstanbul İ ı I i İİ iİ",
    "ǅungla ǈ ǲ ᾈ ᾼ Ǆ ΣΑΣ σας ς ſ K Å µ ǰ ﬆ ὒ ﬓ",
    "x\u0345 \u0345x ͅ",
    # NFKC-sensitive characters
    "ﬁle ﬀ ﬃ Ｆｕｌｌｗｉｄｔｈ ＡＰＩ＿ｋｅｙ ① ②③ x² ⅻ Ⅻ ㍿ ℃ № ʰ ª ™ ½ ﹏ ＿",
    "e\u0301 cafe\u0301 café Å Å ñ n\u0303 a\u0300b \u0300a",
    "𝟘𝟙𝟚 𝐀𝐁𝐂 𝓍 ｶﾀｶﾅ ﾊﾟﾝ",
    # digits of other scripts, numbers of other kinds
    "٣٤٥ ١٢abc १२३ ๑๒ ໑ ௧ ፩ ⁵ ₅ ⓵ 〡〢 𐄇",
    "x٣ ٣x get٣Value v२.० abc_١٢",
    # CJK and their edges
    "検索エンジン ー 々 〆 〇 〻 ゝゞ ヽヾ ・ 한국어 ᄀᄁ ㄱㄴ 𠀋𠂢 龜 豈 ꥠ ힰ ｶﾞ",
    "日本語のテキストとEnglish混在、API_keyを設定する。Python3で動く",
    "中文文档：使用FastAPI构建API，支持OAuth2认证。",
    "検a索 a検 検_a a_検 検.a a.検 a::検",
    # emoji, joiners, invisible characters
    "👍🏽 👨‍👩‍👧 🇯🇵 a\u200db a\u200cb a\u200bb a\ufeffb a\u00adb \u00a0x\u3000y",
    # other scripts with combining marks
    "नमस्ते दुनिया ภาษาไทย தமிழ் مرحبا بالعالم שָׁלוֹם Ελληνικά Кириллица ĀĒĪ",
    "getÜber ÄBCdef x1ß naïve::Type über-cool café.au_lait ΑΒΓδε ÉcoleNormale",
    "HTTPΣrror XMLΑpi aΣb ΣΣa Ǆa aǅb",
    # word edge cases of \w and the connectors
    "__init__ a__.b a._b a_.b a::b::c ::: a:b a- -a 1.2.3 v2.0-beta a/b/c a.-b a..b",
    "foo_bar.bazQux/quux-1 x_x_ _x x_ __ a___b a::_b a_::b a:::b a.::b",
    "HTTPException OAuth2PasswordBearer utf8 IPv4 Base64 getUserName ABCDef ABCdef AbC",
    "the The THE is_active a.b.c A I i an AN is_a the_end",
    "a" * 70 + " " + "b_" * 40 + "c " + "x" * 64 + " " + "Y" * 65 + "z",
    "api" + "_sub" * 20 + " " + "Get" * 30 + " " + "k9" * 40,
    "tabs\tand\nnew\r\nlines\x0bform\x0cfeed\x1cseparators\u2028line\u2029para",
    # data URIs: the payload is blanked before either tokenizer reads the text
    "![x](data:image/png;base64,iVBORw0K+Gg/oA==) après;base64, ;base64,== data:;base64,x_y",
    "",
    " ",
    "_",
    "..",
]

# Characters random texts are drawn from: the adversarial ones, ASCII and the connectors.
POOL = sorted(set("".join(ADVERSARIAL)) | set("aZ09_./-:: \n\tAbcXyz"))


@pytest.fixture(scope="module")
def compiled_tokenizer():
    if os.environ.get("SCRIPTORIUM_PURE_PYTHON"):
        pytest.skip("SCRIPTORIUM_PURE_PYTHON is set: only the Python tokenizer runs")
    native = tok._load_native()
    assert native is not None, f"the compiled tokenizer should be installed: {tok._native[1]}"
    return native


def _both(text: str, combo: tuple[bool, bool, bool, bool]) -> tuple[list[str], list[str]]:
    """The compiled tokens and the reference's; the compiled joined form (made without a
    Python string per token) is checked against the reference here too."""
    drop, stem, split, bigrams = combo
    options = dict(drop_stopwords=drop, stem=stem, split_identifiers=split, cjk_bigrams=bigrams)
    fast = tok.tokenize(text, **options)
    reference = tok.python_tokenize(text, drop, stem, split, bigrams)
    assert tok.joined_tokens(text, **options) == " ".join(reference), (text, combo)
    return fast, reference


def _corpus_texts() -> list[tuple[str, str]]:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".md", ".py") and p.is_file())
    return [(str(p.relative_to(CORPUS)), p.read_text("utf-8", errors="replace")) for p in files]


def test_the_corpus_gives_the_same_tokens(fastapi_corpus, compiled_tokenizer):
    texts = _corpus_texts()
    assert len(texts) > 800  # en/ja/zh pages and the package's Python
    assert any("/ja/" in name for name, _ in texts) and any("/zh/" in name for name, _ in texts)
    for name, text in texts:
        for piece in (text, *text.split("\n\n")):  # whole files, then paragraph-sized blocks
            fast, reference = _both(piece, DEFAULT)
            assert fast == reference, name
    for combo in COMBOS:
        for name, text in texts:
            fast, reference = _both(text, combo)
            assert fast == reference, (name, combo)


@pytest.mark.parametrize("combo", COMBOS)
def test_adversarial_unicode_gives_the_same_tokens(compiled_tokenizer, combo):
    for text in ADVERSARIAL:
        for variant in (text, f"pre_{text}_post", f"x.{text}.y", text.upper(), text.lower()):
            fast, reference = _both(variant, combo)
            assert fast == reference, (variant, combo)
    fast, reference = _both("\n".join(ADVERSARIAL), combo)
    assert fast == reference


def test_stems_stay_the_references_across_the_memos_turnovers(compiled_tokenizer):
    """More one-off words than the stem memo holds (base64 in a page does this), between
    common words: the memo turns over several times, and every stem stays Python's. A
    tokenizer of its own, so the shared one's memos are left as the other tests find them."""
    fresh, _ = compiled.load(
        tok.TOKENIZER_VERSION, tok.STOPWORDS, tok.MAX_TOKEN_CHARS, tok.CJK_CHARS
    )
    analyse = tok._fallbacks[True, True, True, True]
    rng = random.Random(43)
    letters = "abcdefghijklmnopqrstuvwxyz"
    common = ["running", "configured", "settings", "parameters", "requests", "generously"]
    for _ in range(3):
        words = []
        for i in range(70_000):
            words.append("".join(rng.choice(letters) for _ in range(rng.randint(5, 12))))
            if i % 7 == 0:
                words.append(rng.choice(common))
        text = " ".join(words)
        fast = fresh.tokenize(text, True, True, True, analyse, tok._stem_word)
        assert fast == tok.python_tokenize(text, True, True, True, True)
        assert "run" in fast and "configur" in fast
        assert fresh.joined(text, True, True, True, analyse, tok._stem_word) == " ".join(fast)


def test_random_mixtures_give_the_same_tokens(compiled_tokenizer):
    rng = random.Random(20)
    for _ in range(4000):
        text = "".join(rng.choice(POOL) for _ in range(rng.randint(1, 40)))
        for combo in (DEFAULT, (False, False, True, True), (True, True, False, False)):
            fast, reference = _both(text, combo)
            assert fast == reference, (text, combo)


def test_compiled_nfkc_is_pythons_for_every_code_point_in_context(compiled_tokenizer):
    """Each character alone on a line, between letters, after a Hangul consonant and before
    a combining mark of a low class, and each canonical pair as its two characters, one
    context a line and then all of them run together: the compiled NFKC, which normalises
    only the runs NFKC may change, is Python's NFKC of the whole text."""
    chars = [chr(c) for c in range(0x80, normalize.DECOMPOSED_BELOW) if not 0xD800 <= c <= 0xDFFF]
    pairs = [
        "".join(chr(int(part, 16)) for part in unicodedata.decomposition(c).split())
        for c in chars
        if unicodedata.decomposition(c)[:1] not in ("", "<")
    ]
    contexts = ("{c}", "a{c}x", "\u1100{c}", "a{c}\u0316", "{c}\u0316", "{c}{c}\u0301")
    lines = [form.format(c=c) for c in chars for form in contexts]
    text = "\n".join([*lines, *pairs, "\u1100\u1161", "\uac00\u11a8", "\u0cc6\u0cd5"])
    for piece in (text, text.replace("\n", "")):
        made = compiled_tokenizer.nfkc(piece, normalize.kept_by_nfkc, normalize.nfkc)
        assert made == unicodedata.normalize("NFKC", piece)
    assert tok._native_nfkc(compiled_tokenizer, "x\ud800 ｆｕｌｌ") == "x\ud800 full"
    plain = "検索、日本語\nplain"
    assert compiled_tokenizer.nfkc(plain, normalize.kept_by_nfkc, normalize.nfkc) is plain


def test_no_character_past_the_scanned_tables_composes():
    """:func:`normalize.composing_seconds` reads the tables below ``DECOMPOSED_BELOW``; a
    Unicode version that decomposes a character past it must move the bound."""
    everything = normalize.composing_seconds.__wrapped__(sys.maxunicode + 1)
    assert everything == normalize.composing_seconds()
    assert 0x0301 in everything and 0x1161 in everything and 0x0CD5 in everything


def test_text_it_cannot_read_goes_to_python(compiled_tokenizer):
    # A lone surrogate cannot be handed to Rust as UTF-8; the Python path tokenizes it.
    text = "abc \ud800 getUser"
    assert compiled_tokenizer.tokenize(text, True, True, True, tok._fallbacks[DEFAULT]) is None
    tokens = tok.tokenize(text, stem=True)
    assert tokens == tok.python_tokenize(text, *DEFAULT)
    assert tokens[0] == "abc" and tokens[-2:] == ["get", "user"]


def test_the_daemon_says_which_tokenizer_runs(compiled_tokenizer):
    assert tok.implementation() == (True, "compiled (scriptorium_native)")


def test_an_extension_for_other_rules_is_not_used():
    found, why = compiled.load("0-other", frozenset(), 64, "")
    assert found is None
    assert "rules" in why and "Python tokenizer is used" in why


def test_pure_python_can_be_asked_for(monkeypatch):
    monkeypatch.setenv("SCRIPTORIUM_PURE_PYTHON", "1")
    found, why = compiled.load(tok.TOKENIZER_VERSION, frozenset(), 64, "")
    assert found is None and "SCRIPTORIUM_PURE_PYTHON" in why


def test_class_ranges_read_the_cjk_class():
    assert compiled.class_ranges("a-cx") == [(ord("a"), ord("c") + 1), (ord("x"), ord("x") + 1)]
    ranges = compiled.class_ranges(tok.CJK_CHARS)
    inside = [chr(c) for lo, hi in ranges for c in range(lo, hi)]
    assert all(tok._CJK_START_RE.match(c) for c in inside)
    assert not any(tok._CJK_START_RE.match(chr(lo - 1)) for lo, _ in ranges)


DIRECTIVE_BODIES = [
    "::: fastapi.FastAPI",
    "text\n:::\tfastapi.security.OAuth2\nmore",
    "::: _private",
    ":::  9not",
    " ::: indented",
    "a ::: b",
    "::: ",
    ":::",
    "x\r\n::: y.z\r\n",
    "::::: four",
]


def test_features_are_the_same_bytes(fastapi_corpus, compiled_tokenizer):
    options = tuple(
        sorted(
            dict(
                zip(
                    ("drop_stopwords", "stem", "split_identifiers", "cjk_bigrams"),
                    DEFAULT,
                    strict=True,
                )
            ).items()
        )
    )
    kwargs = dict(options)
    bodies = [b for _, text in _corpus_texts() for b in text.split("\n\n")]
    bodies += DIRECTIVE_BODIES + ADVERSARIAL
    section, path = ("Security", "OAuth2 with Password"), "docs/tutorial/security/oauth2.md"
    rest = tok.tokenize(f"{' '.join(section)}\n{path}", **kwargs)
    compared = unicode = 0
    for body in bodies:
        joined = tok.joined_tokens(body, **kwargs)
        assert joined == " ".join(tok.python_tokenize(body, *DEFAULT))
        expected = features.encode_features(
            body, section, path, options, joined.split(" ") if joined else (), rest
        )
        assert features.block_features(body, section, path, options, joined, rest) == expected
        body = tok.readable(body)  # what the extension is handed
        # The extension sets every flag but the deprecation one, which Python adds.
        made = compiled_tokenizer.features(body, joined, rest, str.casefold)
        assert features.with_deprecated_flag(made, body) == expected, body
        compared += 1
        if body.isascii():
            # An ASCII body needs no Unicode table, so no casefold either.
            made = compiled_tokenizer.features(body, joined, rest)
            assert features.with_deprecated_flag(made, body) == expected, body
        else:
            unicode += 1
            assert compiled_tokenizer.features(body, joined, rest) is None
    assert compared > 5000
    assert unicode > 1000  # the Japanese and Chinese pages, the adversarial texts


# Where the CJK flag's class starts and ends, and the 400th character it looks at.
CJK_FLAG_EDGES = [
    f"{before}{edge} x"
    for edge in "\u303f\u3040\u30ff\u3100\u33ff\u3400\u4dbf\u4dc0\u4dff\u4e00\u9fff"
    "\ua000\uabff\uac00\ud7af\ud7b0"
    for before in ("", "é" * 399, "é" * 400, "a" * 399)
]


def test_unicode_features_follow_pythons_tables(compiled_tokenizer):
    # Characters that fold to several (ß, ﬃ, ǰ), to ASCII (K Kelvin, ſ), that fold to a
    # character \w does not match or the reverse, and the CJK flag's edges.
    texts = (
        ADVERSARIAL
        + CJK_FLAG_EDGES
        + [
            "Straße ẞ ﬃ ǰ \u212a \u017f ΣΑΣ ς \u0345 \u1e9e \u0130x",
            "".join(chr(c) for c in range(0x80, 0x2000)),
            "".join(chr(c) for c in range(0x1E00, 0x2200)),
            "\U0001d400\U0001d7ce \U00010400\U00010428 \U0001e900\U0001e922",
        ]
    )
    rng = random.Random(21)
    texts += ["".join(rng.choice(POOL) for _ in range(rng.randint(1, 60))) for _ in range(3000)]
    options = tuple(
        sorted(
            dict(
                zip(
                    ("drop_stopwords", "stem", "split_identifiers", "cjk_bigrams"),
                    DEFAULT,
                    strict=True,
                )
            ).items()
        )
    )
    for body in texts:
        joined = tok.joined_tokens(body)
        expected = features.encode_features(
            body, (), "p.md", options, joined.split(" ") if joined else (), ["p", "md"]
        )
        made = compiled_tokenizer.features(tok.readable(body), joined, ["p", "md"], str.casefold)
        assert made == expected, body


def test_a_body_it_cannot_read_gets_its_features_from_python(compiled_tokenizer):
    body = "abc \ud800 Straße"
    assert compiled_tokenizer.features(body, "abc strass", [], str.casefold) is None
    options = tuple(
        sorted(
            dict(
                zip(
                    ("drop_stopwords", "stem", "split_identifiers", "cjk_bigrams"),
                    DEFAULT,
                    strict=True,
                )
            ).items()
        )
    )
    expected = features.encode_features(body, (), "p.md", options, ["abc"], [])
    assert features.block_features(body, (), "p.md", options, "abc", []) == expected


def test_compiled_tokens_share_one_string_object(compiled_tokenizer):
    tokens = tok.tokenize("pool_probe getPoolProbe 検索エンジン 索エ pool")
    assert tokens[:3] == ["pool_probe", "pool", "probe"]
    assert tokens[1] is tokens[-1]  # one string object per distinct token
    assert tokens.count("索エ") == 2 and len({id(t) for t in tokens if t == "索エ"}) == 1


def test_threads_tokenizing_at_once_get_the_reference_tokens(fastapi_corpus, compiled_tokenizer):
    # A thread that finds the memo in use by another (one calling back into Python) takes
    # the Python path: every thread still gets the reference tokens, and none waits forever.
    texts = [text for _, text in _corpus_texts()[:120]]
    expected = [tok.python_tokenize(text, *DEFAULT) for text in texts]

    def run(offset: int) -> bool:
        order = texts[offset:] + texts[:offset]
        want = expected[offset:] + expected[:offset]
        return all(tok.tokenize(t, stem=True) == w for t, w in zip(order, want, strict=True))

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert all(pool.map(run, range(0, 120, 15), timeout=120))


def test_an_extension_that_did_not_build_leaves_the_python_tokenizer(monkeypatch):
    monkeypatch.delenv("SCRIPTORIUM_PURE_PYTHON", raising=False)
    monkeypatch.setitem(sys.modules, "scriptorium_native", None)  # import fails as if absent
    found, why = compiled.load(tok.TOKENIZER_VERSION, frozenset(), 64, "")
    assert found is None
    assert why.startswith("not installed (") and "the Python tokenizer is used" in why
