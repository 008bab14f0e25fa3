"""What a start from an existing generation does not load: parsers only a build needs."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import scriptorium.cli, scriptorium.cli.local, scriptorium.cli.parser
import scriptorium.daemon, scriptorium.grpc.server, scriptorium.engine.local
from scriptorium.plugins import load_registry
registry = load_registry()
assert registry.extractor_chain, "the bundled plugins were not registered"
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] == "yaml")))
"""


def test_serving_with_the_bundled_plugins_does_not_import_yaml():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "", result.stdout


def test_front_matter_still_parses_once_yaml_is_needed():
    from scriptorium_plugins.markdown.frontmatter import parse_front_matter

    meta, lines, raw = parse_front_matter("---\ntitle: Hello\nweight: 3\n---\n# Body\n")
    assert lines == 4 and meta.parse_confidence == 1.0
    assert raw == {"title": "Hello", "weight": 3}


BUILD_PROBE = """
import sys
import scriptorium.cli, scriptorium.cli.local, scriptorium.cli.parser
from scriptorium.cancel import EXIT_INTERRUPTED
from scriptorium.engine.checks import validate_source_kinds
from scriptorium.engine.local import build_index
from scriptorium.plugins import load_registry
load_registry()
print(",".join(sorted(m for m in sys.modules if m.startswith("scriptorium.grpc"))))
"""


def test_index_build_does_not_import_the_grpc_server():
    """``index build`` builds the engine without the transport (scriptorium.daemon serves it)."""
    result = subprocess.run(
        [sys.executable, "-c", BUILD_PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "", result.stdout
