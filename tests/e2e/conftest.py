"""End-to-end fixtures: a real daemon over a copy of the FastAPI corpus, on loopback."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.daemon import CORPUS, Daemon, write_fastapi_config


@pytest.fixture(scope="session")
def corpus_copy(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("corpus") / "fastapi"
    shutil.copytree(CORPUS, target)
    return target


@pytest.fixture(scope="session")
def fastapi_daemon(corpus_copy: Path, tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("fastapi-daemon")
    config = write_fastapi_config(work / "scriptorium.toml", corpus_copy)
    daemon = Daemon(["--config", str(config)], work / "state")
    daemon.start()
    yield daemon
    daemon.terminate()


@pytest.fixture(scope="session")
def stub(fastapi_daemon: Daemon):
    return fastapi_daemon.stub
