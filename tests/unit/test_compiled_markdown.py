"""The compiled Markdown line loops (``native/``) against the Python loops they stand in for.

``text/markdown.py`` keeps the Python loops as the reference: the fenced-code spans and the
heading pass must come out the same from both, over every Markdown file of the FastAPI corpus
(English, Japanese and Chinese pages, as written and with CRLF endings), over adversarial
inputs (tabs, CRLF, setext headings, unclosed and nested fences, ``~~~`` against backticks,
indented fences, Unicode whitespace and digits, front matter) and over random mixtures.
"""

from __future__ import annotations

import os
import random
import sys

import pytest

from scriptorium.text import markdown as md
from scriptorium.text.normalize import split_lines
from tests.support.daemon import CORPUS

ADVERSARIAL = [
    "# Title\n\ntext\n\n```python\ncode\n```\n\n## Next {#custom .cls}\n",
    "```\nunclosed fence\n# not a heading\n",
    "~~~\ntilde ``` inside\n```\nstill code\n~~~\n# after\n",
    "````\n```\nnested shorter\n```\n````\n## out\n",
    "```js ` tick in info\nnot a fence\n```\n",
    "   ```\n    three spaces open\n      ```\n# h\n    ```\nfour spaces: no fence\n",
    "- item\n\n    ```\n    fence in a list\n    ```\n\nback\n\n\t```\ntab fence\n```\n",
    "1. one\n2) two\n１. fullwidth\n١٢. arabic digits\n1234567890. ten digits\n123456789. nine\n",
    "Title\n=====\n\nSub\n---\n\n- item\n---\n> quote\n---\n<div>\n---\npara\n  ===  \n",
    "Multi\nline\nsetext\n===\n    indented\n---\n",
    "#no space\n####### seven\n###### six\n# \n#\n#\tTab\n   # three\n    # four\n",
    "## closing ##\n## trailing #hash\n## attrs { #id }\n## braces {not attrs}\n",
    "\u3000# ideographic space\n\u00a0# nbsp\n\u2003text\n\x1c# separator\n\x0b\x0c\n",
    "# 日本語の見出し\n本文\n## 中文标题 {#zh-id}\n第一步\n===\n",
    "***\n* * *\n_ _ _\n- - -\n--\n**\n___ x\n",
    "| a | b |\n---\n/// x\n===\n![i](p)\n---\ntext\n---\n",
    "/// tip\n!!! note\n??? more\n{* ../src.py *}\n{! x !}\n| a | b |\n![img](x.png)  \n![a]b\n",
    "---\ntitle: front\n---\n# After front matter\n",
    "line\r\n```\r\ncode\r\n```\r\n# crlf heading\r\nSetext\r\n===\r\n",
    "\t\t```\n\t# tab heading\n \t- mixed\n+ plus\n+no space\n-\tx\n*\u00a0nbsp\n",
    "<details>\n# inside\n</details>\n<!-- c -->\ntext\n",
    "```\ncode\n```python\nstill code\n``` \t\n# out\n",
    "١. item\nnot setext\n---\n\n١٢) item\n    ```\n    listed fence\n    ```\n# out\n",
    "２. item\n    ```\n    # in code\n    ```\n\ntext\n===\n",
    "",
    "\n\n\n",
    "```",
    "x\n===",
]

POOL = list("#=-*+_>/!?<{|}[]()`~ \t\r.:1２٣aZ日\u3000\u00a0\x1c\u2028é")


def _python(lines):
    mask = [False] * len(lines)
    for start, end in md._fenced_code_spans(lines):
        for i in range(start, end + 1):
            mask[i] = True
    return md._fenced_code_spans(lines), md._py_parse_headings(lines, 1, mask), mask


def _compiled(lines, mask):
    spans = md._native.fenced_code_spans(lines)
    marks = md._native.heading_marks(lines, mask)
    assert spans is not None and marks is not None
    return [tuple(s) for s in spans], md._headings_from(marks, lines, 1)


def _same(text: str) -> None:
    lines = split_lines(text)
    spans, headings, mask = _python(lines)
    assert _compiled(lines, mask) == (spans, headings), text[:200]
    assert md.parse_headings(lines) == md._py_parse_headings(lines, 1, mask)


@pytest.fixture(scope="module", autouse=True)
def compiled_loops():
    if os.environ.get("SCRIPTORIUM_PURE_PYTHON"):
        pytest.skip("SCRIPTORIUM_PURE_PYTHON is set: only the Python loops run")
    assert md._native is not None, "the compiled Markdown loops should be installed"


def test_whitespace_is_pythons() -> None:
    import scriptorium_native

    python = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}
    assert set(scriptorium_native.markdown_spaces()) == python


def test_every_corpus_page_agrees(fastapi_corpus) -> None:
    pages = sorted((CORPUS / "docs").rglob("*.md"))
    assert len(pages) > 400
    for page in pages:
        text = page.read_text(encoding="utf-8")
        _same(text)
        _same(text.replace("\n", "\r\n"))
        _same(text.replace("    ", "\t"))


@pytest.mark.parametrize("text", ADVERSARIAL)
def test_adversarial_inputs_agree(text: str) -> None:
    _same(text)


def test_random_mixtures_agree() -> None:
    rng = random.Random(20)
    for _ in range(4000):
        count = rng.randint(1, 12)
        lines = ["".join(rng.choices(POOL, k=rng.randint(0, 12))) for _ in range(count)]
        _same("\n".join(lines))


def test_a_line_python_cannot_encode_falls_back() -> None:
    lines = ["# heading \udc80", "```", "code"]
    assert md._native.fenced_code_spans(lines) is None
    assert md.fenced_code_spans(lines) == md._fenced_code_spans(lines) == [(1, 2)]
    assert md.parse_headings(lines)[0].line_no == 1
