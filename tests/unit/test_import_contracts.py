"""What importing a part of the package costs: the client must not load the server."""

from __future__ import annotations

import subprocess
import sys

SERVER_ONLY = (
    "pluggy",
    "pathspec",
    "tantivy",
    "scriptorium.plugins",
    "scriptorium.engine.local",
    "scriptorium.grpc.convert",
    "scriptorium.domain.model",
    "scriptorium.settings.config",
)


def _loaded_after(statement: str) -> set[str]:
    probe = f"import sys; {statement}; print('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def test_importing_the_client_loads_none_of_the_server():
    loaded = _loaded_after("import scriptorium.client")
    assert not loaded & set(SERVER_ONLY), sorted(loaded & set(SERVER_ONLY))


def test_hookimpl_is_still_reachable_from_the_package_face():
    loaded = _loaded_after("from scriptorium import hookimpl; assert hookimpl")
    assert "pluggy" in loaded


def test_the_plugin_api_names_only_what_it_exports():
    import scriptorium.plugin as api

    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert missing == []


def test_the_client_imports_nothing_of_scriptorium_but_itself_and_the_stubs():
    loaded = _loaded_after("import scriptorium.client")
    ours = {m for m in loaded if m.startswith("scriptorium.")}
    assert all(m.startswith(("scriptorium.client", "scriptorium.v1")) for m in ours), sorted(ours)
