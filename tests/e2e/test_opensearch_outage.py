"""An unreachable cluster: the chain falls through to the local pages, the cluster source cools
down, and health says which source is degraded and why. No cluster is needed: the source's
hosts name a loopback port nothing listens on.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, Daemon, free_port


def test_an_unreachable_cluster_falls_through_cools_down_and_degrades_health(
    fastapi_corpus,
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    shutil.copyfile(CORPUS / "docs/en/docs/tutorial/cors.md", notes / "cors.md")
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        "[server]\nwatch = false\n\n"
        f'[[sources]]\nname = "cluster"\nkind = "opensearch"\nhosts = ["127.0.0.1:{free_port()}"]\n'
        "order = 50\ntimeout_seconds = 30\nretry_cooldown_seconds = 3600\n\n"
        f'[[sources]]\nname = "notes"\nkind = "markdown"\nroot = "{notes}"\ndefault = true\n',
        "utf-8",
    )
    with Daemon(["--config", str(cfg)], tmp_path / "state") as daemon:
        first = daemon.stub.Search(pb.SearchRequest(query="cors origins"), timeout=60)
        assert first.results and first.provider == "local"
        failures = {f.source: f.detail for f in first.failed_sources}
        assert "cluster unreachable" in failures["cluster"]
        # Cooled down: the next search does not try the cluster again.
        second = daemon.stub.Search(pb.SearchRequest(query="cors origins"), timeout=60)
        assert second.provider == "local"
        assert "retrying in" in {f.source: f.detail for f in second.failed_sources}["cluster"]
        # A location falls through to the local pages as well.
        page = daemon.stub.GetContent(pb.GetContentRequest(location="cors"), timeout=60)
        assert page.provider == "local" and page.content
        reports = {s.name: s for s in daemon.stub.ListSources(pb.ListSourcesRequest()).sources}
        assert reports["cluster"].state == pb.SOURCE_STATE_FAILED
        assert "cluster unreachable" in reports["cluster"].last_error
        health = subprocess.run(
            [sys.executable, "-m", "scriptorium", "health", "--target", daemon.address],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert health.stdout.splitlines()[0] == "SERVING"
        assert "cluster: failed: cluster unreachable" in health.stdout


def _push(cfg: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium", "index", "push", "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_push_to_an_unreachable_cluster_or_a_bad_source_says_so_in_one_sentence(
    fastapi_corpus,
    tmp_path: Path,
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    shutil.copyfile(CORPUS / "docs/en/docs/tutorial/cors.md", root / "cors.md")
    cases = {
        f'hosts = ["127.0.0.1:{free_port()}"]\nroot = "{root}"': (
            1,
            "push of 'docs' failed: no node of 127.0.0.1:",
        ),
        f'root = "{root}"': (2, "hosts (host:port of the cluster's nodes) is required"),
        f'hosts = ["127.0.0.1:{free_port()}"]': (1, "a push needs root"),
    }
    for keys, (code, message) in cases.items():
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[[sources]]\nname = "docs"\nkind = "opensearch"\n{keys}\n', "utf-8")
        done = _push(cfg)
        assert done.returncode == code, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    cfg.write_text(f'[[sources]]\nname = "docs"\nkind = "markdown"\nroot = "{root}"\n', "utf-8")
    done = _push(cfg)
    assert done.returncode == 2 and "no pushable source" in done.stderr
