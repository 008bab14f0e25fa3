"""Reading in the web console, in a real browser (issue #41): a definition opens as the CLI
cuts it, doc sections render as Markdown (vendored marked + DOMPurify, served by the daemon)
with a switch to their numbered source, explain folds the stages and says what decided the
rank, a miss shows no empty box, and long lines stay inside the page.

Screenshots of every state go to ``tests/artefacts/browser/reading/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.browser.test_console_browser import ARTEFACTS, browser_available, config, drive
from tests.support.daemon import CORPUS
from tests.support.http import HttpDaemon
from tests.support.trees import write_tree

__all__ = ["browser_available"]  # the module's autouse fixture: skip without a browser

LONG = "x" * 700
READING = """\
# Reading

## Timeouts

Set `timeout=10.0` on the request, or **disable** it:

```python
httpx.get("http://example.com/api/v1/example", timeout=10.0)
```

### Pools

The pool keeps *idle* connections.
"""
UNSAFE = """\
# Unsafe

<script>window.__alerted = true</script>
<img src="/nowhere.png" onerror="window.__alerted = true" alt="a picture">
![a diagram](/diagram.png)

[click](javascript:window.__alerted=true) and [the reading page](reading.md#pools) and
[elsewhere](https://example.com/page).
"""
LONG_PAGE = f"""\
# Long lines

A word without a break: {LONG}

```text
{LONG}
```

| column | another |
| --- | --- |
| {LONG} | short |
"""


@pytest.fixture(scope="module")
def reading_tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("console-reading")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "docs/tutorial")
    shutil.copytree(CORPUS / "fastapi", root / "code/fastapi")
    write_tree(
        root / "docs/console",
        {"reading.md": READING, "unsafe.md": UNSAFE, "long.md": LONG_PAGE},
    )
    return root


def test_reading_definitions_sections_explain_misses_and_long_lines(reading_tree):
    definition = "fastapi/encoders.py#decimal_encoder"
    with HttpDaemon(["--config", str(config(reading_tree))], reading_tree / "state") as daemon:
        with daemon.client() as http:
            # What `scriptorium get` asks for: the location, every other field its default.
            cut = http.post("/v1/GetContent", json={"location": definition}).json()
        seen = drive(
            "reading",
            daemon.base,
            definition,
            "console/reading#timeouts",
            "console/unsafe",
            "console/long",
            # The misses' 404s, which the browser logs as failed loads.
            expected_error="status of 404",
        )
    out = ARTEFACTS / "reading"
    for name in (
        "definition",
        "rendered",
        "source",
        "sanitised",
        "explain",
        "explain-open",
        "not-found",
        "not-found-from-results",
        "long-rendered",
        "long-source",
        "long-source-narrow",
    ):
        assert (out / f"{name}.png").stat().st_size > 1000, name

    # The definition opens as `scriptorium get` cuts it: its lines, numbered from its first,
    # highlighted as one definition (not every def of the file), with the file a link away.
    shown = seen["definition"]
    start, end = int(cut["startLine"]), int(cut["endLine"])
    assert start > 1 and f"lines {start}–{end}" in shown["meta"], (cut["startLine"], shown)
    assert (shown["firstNumber"], shown["lastNumber"]) == (str(start), str(end))
    assert shown["lines"] == end - start + 1
    assert set(shown["marks"]) == {"definition"}
    assert "def decimal_encoder(" in shown["text"]
    assert shown["links"] == ["Whole file"] and not shown["rendered"]

    # A section renders as Markdown; "Source" shows its numbered lines, and back.
    rendered = seen["rendered"]
    assert not rendered["sourceVisible"] and rendered["pressed"] == "false"
    assert rendered["headings"] == ["Timeouts", "Pools"]
    assert rendered["codeBlocks"] == 1 and rendered["inlineCode"] >= 1
    assert "```" not in rendered["text"] and "**" not in rendered["text"]
    source = seen["source"]
    assert not source["renderedVisible"] and source["pressed"] == "true"
    assert source["firstNumber"] == "3" and "**disable**" in source["text"]

    # Sanitised: no script, image or handler survives, nothing ran, no javascript: link;
    # links to other pages open in the console, others leave it.
    unsafe = seen["unsafe"]
    assert unsafe["scripts"] == 0 and unsafe["handlers"] == 0 and not unsafe["alerted"]
    assert "/?location=console%2Freading%23pools" in unsafe["hrefs"], unsafe["hrefs"]
    assert "https://example.com/page" in unsafe["hrefs"]
    assert not any(h and h.lower().startswith("javascript:") for h in unsafe["hrefs"])
    assert "a diagram" in unsafe["text"]
    assert all(url.startswith(daemon.base) for url in seen["requests"]), seen["requests"]
    assert f"{daemon.base}/console/marked.umd.js" in seen["requests"]

    # Explain: one folded line for the stages, one for what decided the rank.
    explain = seen["explain"]
    assert explain["folds"] == 1 and explain["visibleStages"] == 0
    assert explain["summary"] == f"Kept by all {len(explain['stages'])} stages"
    assert explain["openedStages"] == len(explain["stages"]) >= 3
    assert explain["decided"].startswith("Rank decided by bm25"), explain["decided"]
    assert "lexical " in explain["decided"]
    assert "`" not in explain["previewText"]

    # A miss: the message, no empty box, and a way back that fits how the page was reached.
    for name, back in (
        ("not-found", "← Search"),
        ("not-found-from-results", "← Back to the results"),
    ):
        miss = seen[name]
        assert "NOT_FOUND" in miss["status"], miss
        assert not (miss["contentVisible"] or miss["renderedVisible"] or miss["sourceButton"])
        assert miss["back"] == back
    assert seen["not-found-from-results"]["backHref"] == "/?q=declare+path+parameters"

    # Long lines wrap inside the page, rendered or as source, wide or narrow.
    for state in ("rendered", "source", "narrow"):
        box = seen["long"][state]
        assert box["scrollWidth"] <= box["clientWidth"], (state, box)
        assert box["widest"] <= box["mainRight"] + 1, (state, box)
