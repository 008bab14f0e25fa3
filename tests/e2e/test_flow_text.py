"""Flow steps through a real daemon (issue #41): what a step says and the code it carries."""

from __future__ import annotations

import json

import pytest

from tests.support.daemon import cli, running
from tests.support.trees import write_tree

FILES = {
    "docs/timeouts.md": """\
# Timeouts

HTTPX is careful to enforce timeouts everywhere by default.

You can set timeouts for an individual request:

```python
httpx.get('http://example.com/api/v1/example', timeout=10.0)
```

Or disable timeouts for an individual request:

```python
httpx.get('http://example.com/api/v1/example', timeout=None)
```
""",
    "docs/keys.md": """\
# Keys

Declare the kind's own keys as a sequence of `scriptorium.plugin.Key(name, type, default,
help)` (types: `string`, `bool`, `string_table`).

Without a declaration, the keys are not checked.
""",
    "httpish/client.py": """\
class Client:
    def send(self, request, timeout=None):
        self._set_timeout(request, timeout)
        return request

    def _set_timeout(self, request, timeout):
        request.extensions["timeout"] = timeout

    def close(self):
        return None
""",
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):
    root = write_tree(tmp_path_factory.mktemp("httpish") / "repo", FILES)
    with running([str(root)], root.parent / "state") as started:
        yield started


def flow(daemon, location: str) -> list[dict]:
    done = cli(daemon, "--format", "json", "flow", location)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["flow"]


def test_a_step_that_introduces_code_carries_it(daemon):
    steps = {s["title"]: s for s in flow(daemon, "docs/timeouts")}
    setting = steps["You can set timeouts for an individual request:"]
    assert setting["description"].endswith(
        "\n\n```python\nhttpx.get('http://example.com/api/v1/example', timeout=10.0)\n```"
    )
    assert "timeout=None" in steps["Or disable timeouts for an individual request:"]["description"]
    # The text form shows the block as code, indented under its step.
    text = cli(daemon, "flow", "docs/timeouts").stdout
    assert "\n   ```python\n   httpx.get('http://example.com/api/v1/example', timeout=10.0)\n" in (
        text
    )


def test_inline_code_that_wraps_a_line_is_not_mangled(daemon):
    (first, *_) = flow(daemon, "docs/keys")
    assert (
        "scriptorium.plugin.Key(name, type, default, help) (types: string, bool,"
        in (first["description"])
    )
    assert "`" not in first["description"]


def test_a_private_helper_is_not_a_step(daemon):
    titles = [s["title"] for s in flow(daemon, "httpish/client.py")]
    assert titles and not any("_set_timeout" in t for t in titles), titles
    assert any("send" in t for t in titles), titles
