"""A build helper process imports the extraction path only, not the server.

Helpers are spawned interpreters that re-run the console script (``from scriptorium.cli import
main``) as their main module, then load every plugin; each pays for whatever those import
before it cuts a file. The script below does what the console script and ``index build`` do: it
imports the command line, starts a real helper through the build's pool with a Markdown source
and has it cut and tokenize a real page, then reports the modules the helper holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.daemon import CORPUS

# What serving needs and cutting files does not: the wire, the RPC runtime, the index engine,
# telemetry, the event loop, HTTP.
SERVER_ONLY = ("grpc", "google", "tantivy", "opentelemetry", "asyncio", "aiohttp", "httpx")

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path

    from scriptorium.cli import main  # what the console script imports


    def probe(_):
        return sorted(sys.modules)


    if __name__ == "__main__":
        from scriptorium.index import parallel
        from scriptorium.plugins import load_registry
        from scriptorium.sources.base import SourceConfig

        root = Path(sys.argv[1])
        config = SourceConfig(name="docs", kind="markdown", root=root)
        fingerprint = load_registry().extractor_chain.fingerprint
        pool = parallel.ProcessPoolExecutor(
            max_workers=1,
            mp_context=parallel.multiprocessing.get_context("spawn"),
            initializer=parallel._start_helper,
            initargs=([config], {}, load_registry, fingerprint, str(root.parent), os.getpid()),
        )
        try:
            chunk = pool.submit(parallel._load_chunk, [("docs", "index.md")], True)
            loaded = parallel._Helpers.result(chunk)  # the results come back through a file
            modules = pool.submit(probe, 0).result()
        finally:
            pool.shutdown()
        print(json.dumps({"blocks": len(loaded[0].doc.blocks), "tokens": len(loaded[0].tokens),
                          "modules": modules}))
    """
)


def test_a_build_helper_imports_no_server_module(fastapi_corpus, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "index.md").write_text(
        (CORPUS / "docs/en/docs/tutorial/first-steps.md").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    script = tmp_path / "console_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["blocks"] > 3 and report["tokens"] == report["blocks"]
    loaded = sorted(
        {m for m in report["modules"] if m.split(".")[0] in SERVER_ONLY},
        key=lambda m: m.split(".")[0],
    )
    roots = sorted({m.split(".")[0] for m in loaded})
    assert not roots, f"a build helper imported server modules: {roots} ({loaded[:10]})"


def test_every_plugin_api_name_resolves() -> None:
    """The names ``scriptorium.plugin`` loads on first use are there and are the real ones."""
    import scriptorium.plugin as api
    import scriptorium.plugin.unstable as unstable
    from scriptorium.content.cut import cut_doc
    from scriptorium.grpc import convert
    from scriptorium.sources.remote import RemoteSource

    assert [name for name in api.__all__ if not hasattr(api, name)] == []
    assert api.cut_doc is cut_doc and api.RemoteSource is RemoteSource
    assert [name for name in unstable.__all__ if not hasattr(unstable, name)] == []
    assert unstable.wire is convert
