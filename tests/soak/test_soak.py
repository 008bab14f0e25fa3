"""Load against a real daemon: a short run in every ``make test``, a long soak in ``make soak``.

Both mix all six RPCs from concurrent clients while a writer keeps editing one document, so
new index generations are swapped in under load. They assert zero errors other than the
deliberate ones and that resident memory does not keep growing. A third test saturates a
daemon with ``max_concurrent_rpcs = 2`` and checks that the excess is refused cleanly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2

from scriptorium.v1 import retrieval_pb2 as pb
from tests.soak.load import (
    DELIBERATE_CODE,
    RPCS,
    LoadReport,
    LoadSpec,
    check_loopback,
    percentile,
    run_load,
)
from tests.support.daemon import CORPUS, Daemon

SERVICE = "scriptorium.v1.RetrievalService"
SERVING = health_pb2.HealthCheckResponse.SERVING
SOAK_SECONDS = float(os.environ.get("SCRIPTORIUM_SOAK_SECONDS", "240"))
# Caches fill during the first minute or so (measured: RSS plateaus after about 90 s of load).
SOAK_WARMUP = min(90.0, SOAK_SECONDS / 3)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def config_text(docs: Path, code: Path, server: str, include: str = "") -> str:
    return f"""
[server]
{server}

[[sources]]
name = "docs"
kind = "markdown"
root = "{docs}"
default = true

[[sources]]
name = "code"
kind = "code"
root = "{code}"
default = true
{include}
"""


def index_build(config: Path, state: Path) -> None:
    subprocess.run(
        [
            *(sys.executable, "-m", "scriptorium", "index", "build"),
            *("--config", str(config), "--state-dir", str(state)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )


class Churn:
    """Rewrites one document on a fixed period so generations keep changing under load."""

    def __init__(self, path: Path, period: float) -> None:
        self.path = path
        self.period = period
        self.edits = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="churn", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.edits += 1
            write(self.path, f"# Churn\n\n## Revision\n\nThe gryphon revision {self.edits}.\n")

    def __enter__(self) -> Churn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def assert_healthy_run(report: LoadReport, max_growth: float) -> None:
    assert not report.unexpected, report.table()
    for name in RPCS:
        assert report.stats[name].ok >= 1, f"{name} was never exercised:\n{report.table()}"
    assert report.deliberate[DELIBERATE_CODE.name] >= 1, report.table()
    growth = report.rss_growth()
    assert growth is not None, "too few RSS samples"
    assert growth <= max_growth, report.table()


def generation(daemon: Daemon) -> int:
    return daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=10).generation


def service_health(daemon: Daemon) -> int:
    request = health_pb2.HealthCheckRequest(service=SERVICE)
    return daemon.health.Check(request, timeout=5).status


# -- the generator itself --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target", ["127.0.0.1:50051", "localhost:1", "[::1]:2", "ipv4:127.0.0.1:1,127.0.0.2:2"]
)
def test_load_targets_loopback_only(target):
    check_loopback(target)


@pytest.mark.parametrize(
    "target", ["10.0.0.1:50051", "example.com:443", "ipv4:127.0.0.1:1,192.168.1.1:2", "127.0.0.1"]
)
def test_load_refuses_other_targets(target):
    with pytest.raises(ValueError):
        LoadSpec(target=target, seconds=1, max_calls=1)


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([], 0.5) == 0.0


# -- the short run (part of make test) -------------------------------------------------------------


@pytest.fixture(scope="module")
def small_tree(fastapi_corpus, tmp_path_factory) -> Path:
    """The FastAPI tutorial and the ``fastapi`` package, with one prebuilt generation."""
    root = tmp_path_factory.mktemp("soak-small")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "docs" / "tutorial")
    shutil.copytree(CORPUS / "fastapi", root / "code" / "fastapi")
    write(root / "docs" / "churn.md", "# Churn\n\n## Revision\n\nThe gryphon revision 0.\n")
    config = write(root / "build.toml", config_text(root / "docs", root / "code", "watch = false"))
    index_build(config, root / "template")
    return root


def daemon_on(tree: Path, work: Path, server: str) -> Daemon:
    state = work / "state"
    shutil.copytree(tree / "template", state)
    config = write(work / "scriptorium.toml", config_text(tree / "docs", tree / "code", server))
    return Daemon(["--config", str(config)], state)


class Revisions:
    """Rewrites one document ``count`` times, each time once the daemon serves the previous
    revision: new generations are swapped in under load, however fast the machine is."""

    def __init__(self, path: Path, daemon: Daemon, count: int) -> None:
        self.path, self.daemon, self.count = path, daemon, count
        self.served = 0
        self.error = ""
        self.finished = threading.Event()
        self._thread = threading.Thread(target=self._run, name="revisions", daemon=True)

    def _serves(self, text: str) -> bool:
        try:
            reply = self.daemon.stub.GetContent(pb.GetContentRequest(location="churn"), timeout=30)
        except grpc.RpcError:
            return False
        return text in reply.content

    def _run(self) -> None:
        try:
            for n in range(1, self.count + 1):
                text = f"The gryphon revision {n}."
                write(self.path, f"# Churn\n\n## Revision\n\n{text}\n")
                deadline = time.monotonic() + 120
                while not self._serves(text):
                    if time.monotonic() > deadline:
                        self.error = f"revision {n} was never served"
                        return
                    time.sleep(0.1)
                self.served = n
        finally:
            self.finished.set()

    def __enter__(self) -> Revisions:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join(300)


SHORT_WARMUP = 3.0


def test_short_load_mixes_every_rpc_without_errors(small_tree, tmp_path):
    daemon = daemon_on(small_tree, tmp_path, "watch = true\nwatch_interval = 0.5").start()
    try:
        first = generation(daemon)
        with Revisions(small_tree / "docs" / "churn.md", daemon, 3) as revisions:

            def enough(run) -> bool:
                """Three revisions served, 400 calls, and RSS samples to compare."""
                sampled = sum(1 for t, _ in run.rss if t >= SHORT_WARMUP)
                return revisions.finished.is_set() and run.issued >= 400 and sampled >= 16

            spec = LoadSpec(
                target=daemon.address,
                seconds=600.0,  # a bound only: the run ends on ``enough``
                max_calls=200_000,
                workers=4,
                pid=daemon.proc.pid,
                warmup=SHORT_WARMUP,
                deliberate_every=40,
                until=enough,
            )
            report = run_load(spec)
        print(report.table())
        assert not revisions.error, revisions.error
        assert revisions.served == 3
        assert_healthy_run(report, max_growth=1.5)
        # The edits landed as new generations while the load ran, and the last one serves.
        assert generation(daemon) > first
        assert service_health(daemon) == SERVING
    finally:
        assert daemon.terminate() == 0


# -- the concurrency limit -------------------------------------------------------------------------


@pytest.fixture()
def limited(small_tree, tmp_path) -> Iterator[Daemon]:
    daemon = daemon_on(small_tree, tmp_path, "watch = false\nmax_concurrent_rpcs = 2").start()
    yield daemon
    daemon.terminate()


def _burst(daemon: Daemon, size: int, tag: int) -> Counter[str]:
    stub = daemon.stub
    futures = [
        stub.GuideImplementation.future(
            pb.GuideImplementationRequest(topic=f"oauth2 security scopes dependency {tag} {i}"),
            timeout=60,
        )
        for i in range(size)
    ]
    # Health is exempt from the limit: it answers while the burst holds every slot.
    health = service_health(daemon)
    outcome: Counter[str] = Counter()
    for future in futures:
        try:
            future.result(timeout=60)
            outcome["OK"] += 1
        except grpc.RpcError as err:
            outcome[err.code().name] += 1
            if err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                assert "concurrency limit (2)" in err.details()
    outcome["health-serving"] = int(health == SERVING)
    return outcome


def test_concurrency_limit_refuses_the_excess_and_stays_healthy(limited):
    for tag in range(3):
        outcome = _burst(limited, 16, tag)
        assert outcome["health-serving"] == 1, outcome
        assert outcome["OK"] >= 1, outcome
        assert outcome["RESOURCE_EXHAUSTED"] >= 1, outcome
        assert outcome["OK"] + outcome["RESOURCE_EXHAUSTED"] == 16, outcome
    # Every slot was released: two calls at once (the limit) both succeed, repeatedly.
    stub = limited.stub
    for tag in range(3):
        pair = [
            stub.GuideImplementation.future(
                pb.GuideImplementationRequest(topic=f"request body fields {tag} {i}"), timeout=60
            )
            for i in range(2)
        ]
        assert all(f.result(timeout=60).trace_id for f in pair)
    assert service_health(limited) == SERVING
    assert "refused" in limited.full_log()


# -- the soak (make soak) --------------------------------------------------------------------------


def _soak_selected(config: pytest.Config) -> bool:
    expression = config.getoption("markexpr") or ""
    return "slow" in expression and "not slow" not in expression


@pytest.mark.slow
@pytest.mark.timeout(SOAK_SECONDS + 600)
def test_soak_full_corpus(fastapi_corpus, request, tmp_path):
    if not (_soak_selected(request.config) or os.environ.get("SCRIPTORIUM_SOAK")):
        pytest.skip("the soak runs with `make soak` (pytest -m slow tests/soak)")
    corpus = tmp_path / "fastapi"
    shutil.copytree(CORPUS, corpus)
    docs = corpus / "docs/en/docs"
    write(docs / "churn.md", "# Churn\n\n## Revision\n\nThe gryphon revision 0.\n")
    include = 'include = ["fastapi/**/*.py", "docs_src/**/*.py"]'
    config = write(
        tmp_path / "scriptorium.toml",
        config_text(docs, corpus, "watch = true\nwatch_interval = 0.5", include),
    )
    index_build(config, tmp_path / "state")
    daemon = Daemon(["--config", str(config)], tmp_path / "state").start()
    try:
        with Churn(docs / "churn.md", period=5.0):
            report = run_load(
                LoadSpec(
                    target=daemon.address,
                    seconds=SOAK_SECONDS,
                    max_calls=2_000_000,
                    workers=6,
                    pid=daemon.proc.pid,
                    sample_every=1.0,
                    warmup=SOAK_WARMUP,
                )
            )
        print(report.table())
        assert_healthy_run(report, max_growth=1.3)
        assert service_health(daemon) == SERVING
    finally:
        assert daemon.terminate() == 0
