"""A cheap token estimate for response budgets.

Agents pass a token budget; the daemon must respect it without running a real tokenizer in the
hot path. The estimate is deliberately simple and slightly generous:

* each CJK character (the tokenizer's CJK scripts plus CJK punctuation and full-width forms)
  counts as one token, since BPE vocabularies rarely merge them;
* every other character counts a quarter token, rounded up over the whole text (about four
  characters per token for English and code);
* the empty string costs nothing.
"""

from __future__ import annotations

import re

from scriptorium.text.tokenize import CJK_CHARS

__all__ = ["TRUNCATION_MARK", "estimate_tokens", "trim_to_tokens"]

TRUNCATION_MARK = "…"
_CHARS_PER_TOKEN = 4
_CJK_RE = re.compile(f"[{CJK_CHARS}\u3000-\u303f\uff00-\uffef]+")


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``: CJK characters one each, others one per four (ceil)."""
    if text.isascii():
        return -(-len(text) // _CHARS_PER_TOKEN)
    cjk = sum(map(len, _CJK_RE.findall(text)))
    return cjk + -(-(len(text) - cjk) // _CHARS_PER_TOKEN)


def trim_to_tokens(text: str, budget: int) -> str:
    """``text`` shortened so that ``estimate_tokens`` of the result is at most ``budget``.

    Text within budget is returned unchanged. Otherwise the longest prefix that fits with the
    mark is taken; unless it already ends at a word boundary it is cut back to its last
    whitespace (when that keeps at least half of it). Trailing whitespace is removed and
    :data:`TRUNCATION_MARK` appended. A budget too small for any text gives the empty string.
    """
    if estimate_tokens(text) <= budget:
        return text
    if budget <= 0:
        return ""
    # A prefix of length L costs at least L / 4 tokens, so the answer is below 4 * budget.
    low, high = 0, min(len(text), _CHARS_PER_TOKEN * budget)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle] + TRUNCATION_MARK) <= budget:
            low = middle
        else:
            high = middle - 1
    cut = low
    if not text[low].isspace():
        for index in range(low - 1, low // 2 - 1, -1):
            if text[index].isspace():
                cut = index
                break
    head = text[:cut].rstrip()
    return head + TRUNCATION_MARK if head else ""
