"""Scale-out: replicas serving one prebuilt generation behind client-side round robin, and the
Kubernetes manifests that deploy them.

Three real daemons share one state directory that ``scriptorium index build`` filled once; with
the watcher off and the roots unchanged, none of them writes to it. A client balances over all
three with gRPC's ``round_robin`` policy and retries UNAVAILABLE by service config, so killing a
replica mid-run costs no call.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from scriptorium.client import Client, ScriptoriumError
from scriptorium.index import leases, statedirs
from scriptorium.settings.config import load_settings
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, REPO, Daemon
from tests.support.trees import docs_and_code_config, write
from tests.support.waiting import wait_for

SERVICE = "scriptorium.v1.RetrievalService"
DEPLOY = REPO / "deploy"
REPLICAS = 3


def tree_listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and mtime: what a writer would change."""
    out = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        out[path.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return out


def balanced_options(addresses: list[str]) -> tuple[str, list[tuple[str, object]]]:
    """A target over every replica with round robin and transparent retries of UNAVAILABLE."""
    config = {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{"service": SERVICE}],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.5s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
    target = "ipv4:" + ",".join(addresses)
    return target, [("grpc.service_config", json.dumps(config)), ("grpc.enable_retries", 1)]


# -- replicas --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_state(
    fastapi_corpus, tmp_path_factory
) -> tuple[Path, Path, float, dict[str, tuple[int, int]]]:
    root = tmp_path_factory.mktemp("replicas")
    shutil.copytree(CORPUS / "docs/en/docs/tutorial", root / "docs" / "tutorial")
    shutil.copytree(CORPUS / "fastapi", root / "code" / "fastapi")
    config = docs_and_code_config(root / "scriptorium.toml", root / "docs", root / "code")
    state = root / "state"
    built_after = time.time()
    subprocess.run(
        [
            *(sys.executable, "-m", "scriptorium", "index", "build"),
            *("--config", str(config), "--state-dir", str(state)),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return config, state, built_after, tree_listing(state)


@pytest.fixture()
def replicas(shared_state, tmp_path):
    config, state, _, _ = shared_state
    daemons = [
        Daemon(
            ["--config", str(config), "--log-level", "debug"],
            state,
            log_path=tmp_path / f"replica-{i}.log",
        )
        for i in range(REPLICAS)
    ]
    try:
        with ThreadPoolExecutor(REPLICAS) as pool:
            list(pool.map(lambda d: d.start(), daemons))
        # Each serves the prebuilt generation at once and compares it with the roots after;
        # until that lands its sources say they are catching up.
        for daemon in daemons:
            daemon.wait_caught_up()
        yield daemons
    finally:
        for daemon in daemons:
            if daemon.proc is not None:
                daemon.terminate()


def test_replicas_share_one_generation_without_writing_to_it(shared_state, replicas):
    _config, state, built_after, as_built = shared_state
    generations = set()
    for daemon in replicas:
        reply = daemon.stub.ListSources(pb.ListSourcesRequest(), timeout=10)
        generations.add(reply.generation)
        for source in reply.sources:
            assert source.state == pb.SOURCE_STATE_READY
            assert source.HasField("indexed_at"), "a prebuilt generation reports when it was built"
            built = source.indexed_at.ToDatetime(tzinfo=UTC)
            assert datetime.fromtimestamp(built_after, UTC) <= built <= datetime.now(UTC)
    assert generations == {1}
    # A ref from one replica resolves on another: refs carry no per-process state.
    first = replicas[0].stub.Search(pb.SearchRequest(query="path parameters"), timeout=10)
    for result in first.results[:5]:
        other = replicas[2].stub.GetContent(pb.GetContentRequest(ref_id=result.ref_id), timeout=10)
        assert other.doc_version == result.doc_version
        assert other.location.split("#")[0] == result.location.split("#")[0]
    # Only the usage record (``state.json``: which process last opened the directory, for
    # ``scriptorium state list``) is rewritten by each start, and each replica's lease (which
    # generation it serves, so a writer never prunes it) comes and goes; the generations are
    # untouched.
    written = {
        path
        for path in tree_listing(state).items() ^ as_built.items()
        if path[0] != statedirs.RECORD and path[0].split("/")[0] != leases.LEASES
    }
    assert not written, f"a replica wrote to the shared state directory: {sorted(written)}"


def _mixed_call(client: Client, n: int) -> None:
    if n % 3 == 0:
        client.guide_implementation("declare path parameters", timeout=30)
    elif n % 3 == 1:
        found = client.search(f"request body {n % 4}", timeout=30)
        if found.results:
            client.get_content(found.results[0].ref_id, timeout=30)
    else:
        client.list_sources(timeout=30)


def served_calls(daemon: Daemon) -> int:
    """Queries this replica has understood (it logs each at debug level)."""
    return daemon.full_log().count("query understood")


def test_round_robin_survives_a_replica_killed_mid_run(replicas):
    target, options = balanced_options([d.address for d in replicas])
    outcomes: Counter[str] = Counter()
    after_kill: Counter[str] = Counter()
    killed, stop = threading.Event(), threading.Event()
    lock = threading.Lock()

    def worker(index: int) -> None:
        with Client(target, options=options, attempts=1, timeout=30) as client:
            for n in range(index, 100_000, 4):
                if stop.is_set():
                    return
                try:
                    _mixed_call(client, n)
                    code = "OK"
                except ScriptoriumError as err:
                    code = err.code.name
                with lock:
                    outcomes[code] += 1
                    if killed.is_set():
                        after_kill[code] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    try:
        # Every replica serves calls before the kill: the balancer spreads them.
        assert wait_for(lambda: all(served_calls(d) >= 5 for d in replicas)), [
            served_calls(d) for d in replicas
        ]
        victim = replicas[1]
        victim.proc.send_signal(signal.SIGKILL)
        assert victim.proc.wait(60) == -signal.SIGKILL
        killed.set()
        # The calls go on against the survivors, none of them failing.
        assert wait_for(lambda: after_kill["OK"] >= 30 or set(outcomes) != {"OK"}), after_kill
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    assert set(outcomes) == {"OK"}, outcomes
    assert after_kill["OK"] >= 30, after_kill
    for daemon in (replicas[0], replicas[2]):
        assert daemon.proc.poll() is None


# -- Kubernetes manifests --------------------------------------------------------------------------


def _manifests() -> dict[str, dict]:
    docs = {}
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text("utf-8")):
            if doc:
                docs[doc["kind"]] = doc
    return docs


def _container(pod_spec: dict, name: str) -> dict:
    return next(c for c in pod_spec["containers"] if c["name"] == name)


def test_deploy_manifests_parse_and_hold_together(tmp_path, monkeypatch):
    docs = _manifests()
    assert {"Deployment", "Service", "ConfigMap"} <= set(docs)
    deployment, service, config_map = docs["Deployment"], docs["Service"], docs["ConfigMap"]

    spec = deployment["spec"]
    assert spec["replicas"] == REPLICAS
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["clusterIP"] == "None", (
        "client-side round robin needs a headless service"
    )
    assert [p["port"] for p in service["spec"]["ports"]] == [50051]

    pod = spec["template"]["spec"]
    server = _container(pod, "scriptorium")
    args = server["args"]
    assert args[:1] == ["serve"]
    assert args[args.index("--listen") + 1] == "0.0.0.0:50051"
    assert server["readinessProbe"]["grpc"] == {"port": 50051, "service": SERVICE}
    assert server["livenessProbe"]["grpc"]["port"] == 50051
    assert server["startupProbe"]["grpc"]["port"] == 50051

    toml_text = config_map["data"]["scriptorium.toml"]
    table = tomllib.loads(toml_text)
    pre_stop = server["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    grace = table["server"]["grace_seconds"] + float(pre_stop[1])
    assert pod["terminationGracePeriodSeconds"] > grace

    (init,) = pod["initContainers"]
    assert init["args"][:2] == ["index", "build"]
    assert init["image"] == server["image"]
    state_mounts = {m["name"]: m["mountPath"] for m in init["volumeMounts"]}
    served_mounts = {m["name"]: m["mountPath"] for m in server["volumeMounts"]}
    assert state_mounts["state"] == served_mounts["state"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in volumes["state"] or "persistentVolumeClaim" in volumes["state"]
    assert volumes["config"]["configMap"]["name"] == config_map["metadata"]["name"]
    assert table["server"]["state_dir"] == state_mounts["state"]
    assert table["server"]["watch"] is False

    # The configuration itself loads (the token comes from the environment, as in the pod).
    env_names = {e["name"] for e in server.get("env", [])}
    token_env = table["server"].get("auth_token_env")
    if token_env:
        assert token_env in env_names
        assert token_env in {e["name"] for e in init.get("env", [])}
        monkeypatch.setenv(token_env, "test-token")
    path = write(tmp_path / "scriptorium.toml", toml_text)
    settings = load_settings(path)
    assert settings.sources and settings.grace_seconds == table["server"]["grace_seconds"]


def test_deploy_readme_covers_tls_probes_and_sizing():
    text = (DEPLOY / "README.md").read_text("utf-8")
    assert "scriptorium health" in text and "--tls-ca" in text
    assert "make bench" in text
