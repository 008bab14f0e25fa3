"""Build helpers through a real daemon: the same index as a one-process build, and no fallback."""

from __future__ import annotations

import pytest

from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, running, write_fastapi_config

pytestmark = pytest.mark.e2e

QUERIES = ["declare path parameters with types", "OAuth2PasswordBearer", "パスパラメータ"]


def answers(daemon) -> dict[str, list[tuple[str, float, str]]]:
    out = {}
    for query in QUERIES:
        response = daemon.stub.Search(pb.SearchRequest(query=query, top_k=10), timeout=30)
        out[query] = [(r.ref_id, round(r.score, 6), r.preview) for r in response.results]
    return out


def test_a_daemon_building_with_helpers_serves_what_a_one_process_build_serves(tmp_path):
    config = write_fastapi_config(tmp_path / "c.toml", CORPUS)  # 912 files: helpers start
    with running(["--config", str(config), "--build-workers", "2"], tmp_path / "two") as spread:
        with_helpers = answers(spread)
        log = spread.log()
    assert "index generation 1: 912 documents" in log
    assert "without helper processes" not in log, log
    with running(["--config", str(config), "--build-workers", "1"], tmp_path / "one") as serial:
        assert answers(serial) == with_helpers
    assert all(with_helpers.values())
