"""A code source served from a prebuilt index generation, with the tree gone from disk."""

from __future__ import annotations

import shutil
import subprocess
import sys

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, running


def test_snapshot_code_source_serves_without_its_tree(fastapi_corpus, tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(CORPUS / "fastapi" / "security", tree / "fastapi" / "security")
    state = tmp_path / "state"
    config = tmp_path / "scriptorium.toml"
    config.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "code"\nkind = "code"\nroot = "{tree}"\n'
        "default = true\nsnapshot = true\n",
        encoding="utf-8",
    )
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "scriptorium",
            "--format",
            "json",
            "index",
            "build",
            "--config",
            str(config),
            "--state-dir",
            str(state),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    # The build takes the snapshot: a snapshot source is scanned only while no generation holds it.
    assert build.returncode == 0, build.stderr
    shutil.rmtree(tree)
    with running(["--config", str(config)], state) as daemon:
        stub = daemon.stub
        (status,) = stub.ListSources(pb.ListSourcesRequest()).sources
        assert status.state == pb.SOURCE_STATE_READY and status.document_count > 0
        top = stub.Search(
            pb.SearchRequest(query="OAuth2PasswordBearer", kinds=[pb.CORPUS_CODE])
        ).results[0]
        assert top.location.startswith("fastapi/security/oauth2.py#L")
        content = stub.GetContent(
            pb.GetContentRequest(ref_id=top.ref_id, mode=pb.CONTENT_MODE_FULL)
        )
        assert "class OAuth2PasswordBearer" in content.content
