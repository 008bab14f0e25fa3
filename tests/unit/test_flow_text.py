"""Flow step text (issue #41): wrapped code spans, the code a sentence introduces, private
helpers."""

from __future__ import annotations

from scriptorium.text.code.flow import code_flow_candidates
from scriptorium.text.markdown import flow_candidates

TIMEOUTS = """\
## Timeouts

HTTPX is careful to enforce timeouts everywhere by default.

You can set timeouts for an individual request:

```python
# Using the top-level API:
httpx.get('http://example.com/api/v1/example', timeout=10.0)
```

Or disable timeouts for an individual request:

```python
httpx.get('http://example.com/api/v1/example', timeout=None)
```

The default is five seconds.

```python
DEFAULT_TIMEOUT = 5.0
```
"""


def test_a_code_span_that_wraps_a_line_reads_as_one_span() -> None:
    lines = [
        "Declare keys as a sequence of `scriptorium.plugin.Key(name, type, default,",
        "help)` (types: `string`, `bool`, `string_table`; optional `choices`).",
    ]
    (item,) = flow_candidates(lines, 1)
    assert item.description == (
        "Declare keys as a sequence of scriptorium.plugin.Key(name, type, default, help) "
        "(types: string, bool, string_table; optional choices)."
    )


def test_a_step_carries_the_code_its_sentence_introduces() -> None:
    items = {i.title: i for i in flow_candidates(TIMEOUTS.splitlines(), 1)}
    setting = items["You can set timeouts for an individual request:"]
    assert setting.code == (
        "```python\n# Using the top-level API:\n"
        "httpx.get('http://example.com/api/v1/example', timeout=10.0)\n```"
    )
    assert "timeout=None" in items["Or disable timeouts for an individual request:"].code
    # Only a sentence that introduces code (a colon) takes the block after it.
    assert items["HTTPX is careful to enforce timeouts everywhere by default."].code == ""
    assert items["The default is five seconds."].code == ""


def test_private_helpers_are_steps_only_when_nothing_else_explains_the_topic() -> None:
    code = [
        "class Client:",
        "    def send(self, request, timeout=None):",
        "        self._set_timeout(request, timeout)",
        "",
        "    def _set_timeout(self, request, timeout):",
        "        request.extensions['timeout'] = timeout",
        "",
        "    def __init__(self):",
        "        pass",
    ]
    titles = [title for _, _, title, _ in code_flow_candidates(code, "python")]
    assert not any("_set_timeout" in t for t in titles), titles
    assert any("send" in t for t in titles) and any("__init__" in t for t in titles), titles
    alone = ["def _set_timeout(request, timeout):", "    request.timeout = timeout"]
    assert [t for _, _, t, _ in code_flow_candidates(alone, "python")] == ["function _set_timeout"]
