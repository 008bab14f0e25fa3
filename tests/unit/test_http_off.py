"""HTTP costs nothing when it is off: the daemon's modules never load the ASGI stack."""

from __future__ import annotations

import subprocess
import sys

from scriptorium.settings.config import load_settings

PROBE = """
import sys
import scriptorium.cli, scriptorium.cli.local, scriptorium.cli.parser
import scriptorium.daemon, scriptorium.grpc.server, scriptorium.engine.local
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"starlette", "uvicorn"}
                or m.startswith("scriptorium.http"))
print(",".join(loaded))
"""


def test_the_serving_modules_do_not_import_http():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "", result.stdout


def test_http_is_off_unless_configured(tmp_path):
    assert load_settings(None, [str(tmp_path)]).http_listen is None
    on = load_settings(None, [str(tmp_path)], http_listen="127.0.0.1:8080")
    assert on.http_listen == "127.0.0.1:8080"
