"""A third-party plugin distribution, installed from tests/, is discovered and used by a daemon."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import running

pytestmark = pytest.mark.e2e
DIST = Path(__file__).resolve().parents[1] / "fixtures" / "plugin_dist"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    """Install the plugin distribution with pip into a private target directory."""
    target = tmp_path_factory.mktemp("site")
    # Build from a copy so the build leaves nothing behind in the repository.
    source = tmp_path_factory.mktemp("dist") / "plugin_dist"
    shutil.copytree(DIST, source)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
    )
    assert any(p.name.startswith("scriptorium_glossary-") for p in target.iterdir())
    return target


def test_plugin_source_kind_and_mode_are_used_by_a_running_daemon(tmp_path, plugin_path):
    gloss = tmp_path / "gloss"
    gloss.mkdir()
    (gloss / "terms.gloss").write_text(
        "Burrow: a wombat burrow is dug by a wombat, and every wombat burrow has many rooms\n"
        "Wombat: an animal\n",
        encoding="utf-8",
    )
    config = tmp_path / "scriptorium.toml"
    config.write_text(f'[[sources]]\nname = "terms"\nkind = "glossary"\nroot = "{gloss}"\n')
    env = {"PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")])}
    with running(["--config", str(config)], tmp_path / "state", env=env) as daemon:
        stub = daemon.stub
        sources = stub.ListSources(pb.ListSourcesRequest()).sources
        assert [(s.name, s.kind, s.state) for s in sources] == [
            ("terms", "glossary", pb.SOURCE_STATE_READY)
        ]
        plain = stub.Search(pb.SearchRequest(query="wombat burrow"))
        assert [r.title for r in plain.results] == ["Burrow", "Wombat"]
        ranked = stub.Search(
            pb.SearchRequest(query="wombat burrow", mode="shortest-first", explain=True)
        )
        assert [r.title for r in ranked.results] == ["Wombat", "Burrow"]
        assert any(reason.name == "short-block" for reason in ranked.results[0].reasons)
        fetched = stub.GetContent(pb.GetContentRequest(ref_id=ranked.results[0].ref_id))
        assert fetched.content == "Wombat: an animal"


def test_unknown_source_kind_is_a_clear_startup_error(tmp_path):
    config = tmp_path / "scriptorium.toml"
    config.write_text(f'[[sources]]\nname = "x"\nkind = "nonesuch"\nroot = "{tmp_path}"\n')
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scriptorium",
            "serve",
            "--config",
            str(config),
            "--listen",
            "127.0.0.1:0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "nonesuch" in proc.stderr and "markdown" in proc.stderr and "code" in proc.stderr
