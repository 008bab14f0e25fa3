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


# -- the reranking seam: [ranking] reranker names a plugin implementing scriptorium_rerank ------


def _pages(root: Path) -> Path:
    """Three pages every "wombat" search ranks Alpha, Beta, Gamma; only Gamma says rerank-me."""
    root.mkdir(parents=True)
    (root / "a.md").write_text("# Alpha\n\nwombat wombat wombat burrow\n", encoding="utf-8")
    (root / "b.md").write_text("# Beta\n\nwombat wombat burrow\n", encoding="utf-8")
    (root / "c.md").write_text("# Gamma\n\nA wombat, rerank-me.\n", encoding="utf-8")
    return root


def _reranked_config(tmp_path: Path, ranking: str) -> Path:
    config = tmp_path / "scriptorium.toml"
    config.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "pages"\nkind = "markdown"\n'
        f'root = "{_pages(tmp_path / "pages")}"\n\n[ranking]\n{ranking}\n',
        encoding="utf-8",
    )
    return config


def _plugin_env(plugin_path: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(plugin_path), os.environ.get("PYTHONPATH", "")])}


def _titles(reply: pb.SearchResponse) -> list[str]:
    return [r.title for r in reply.results]


def test_a_reranker_plugin_reorders_the_best_candidates_and_explain_names_it(tmp_path, plugin_path):
    plain_config = _reranked_config(tmp_path / "plain", "")
    with running(["--config", str(plain_config)], tmp_path / "plain-state") as daemon:
        plain = daemon.stub.Search(pb.SearchRequest(query="wombat", explain=True))
    assert _titles(plain) == ["Alpha", "Beta", "Gamma"]
    assert not any(s.stage.startswith("rerank:") for s in plain.stages)

    config = _reranked_config(tmp_path / "marked", 'reranker = "glossary-marked"')
    env = _plugin_env(plugin_path)
    with running(["--config", str(config)], tmp_path / "marked-state", env=env) as daemon:
        reply = daemon.stub.Search(pb.SearchRequest(query="wombat", explain=True))
        quiet = daemon.stub.Search(pb.SearchRequest(query="wombat"))
    assert _titles(reply) == ["Gamma", "Alpha", "Beta"]
    assert _titles(quiet) == ["Gamma", "Alpha", "Beta"]
    stages = [s.stage for s in reply.stages]
    assert "rerank:glossary-marked" in stages
    assert stages.index("rerank:glossary-marked") < stages.index("dedupe")
    moved = [r for r in reply.results[0].reasons if r.name == "rerank:glossary-marked"]
    assert moved and moved[0].weight == 1.0 and moved[0].detail == "rank 3 -> 1 of 3"
    # The scale stays the pipeline's: the new first result takes the old first score.
    assert reply.results[0].score == plain.results[0].score


def test_a_reranker_that_raises_keeps_the_order_and_logs_a_warning(tmp_path, plugin_path):
    config = _reranked_config(tmp_path, 'reranker = "glossary-broken"\nrerank_depth = 2')
    env = _plugin_env(plugin_path)
    with running(["--config", str(config)], tmp_path / "state", env=env) as daemon:
        reply = daemon.stub.Search(pb.SearchRequest(query="wombat", explain=True))
        log = daemon.full_log()
    assert _titles(reply) == ["Alpha", "Beta", "Gamma"]
    assert "rerank:glossary-broken failed (RuntimeError), order kept" in [
        s.stage for s in reply.stages
    ]
    assert "reranker 'glossary-broken' failed (RuntimeError: the model file is missing)" in log
    assert "Traceback" not in log and "wombat" not in log


def test_a_reranker_no_plugin_implements_is_a_clear_startup_error(tmp_path, plugin_path):
    config = _reranked_config(tmp_path, 'reranker = "nonesuch"')
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "scriptorium", "serve", "--config", str(config)),
            *("--listen", "127.0.0.1:0", "--state-dir", str(tmp_path / "state")),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **_plugin_env(plugin_path)},
    )
    assert proc.returncode == 2, proc.stderr
    assert "nonesuch" in proc.stderr and "glossary-broken, glossary-marked" in proc.stderr
    assert "Traceback" not in proc.stderr
