"""The ``opensearch`` source against a real three-node cluster started for this session.

Pushes go through ``scriptorium index push`` (a subprocess, as a user runs it), searches and
fetches through real daemons. Mid-load moments are held with the fault pause
``opensearch.push.bulk`` (the first bulk request acknowledged, the rest not yet sent), never
with sleeps. The tree is a dozen tutorial pages, so pushes are small.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from scriptorium.faults import ENV as FAULT_PAUSE
from scriptorium.faults import reached_marker
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS, Daemon, free_port
from tests.support.opensearch_cluster import Cluster
from tests.support.waiting import wait_for

# The module's first test also waits for the cluster to start (a minute or more on a busy
# machine): the bound is generous, never a measurement.
pytestmark = pytest.mark.timeout(900)

PAGES = 8
QUERIES = ("query parameters validation", "path parameters types", "request body model")
MARKERS = "alphamarker betamarker"
# A pasted issue (longer than ``long_query_chars``): the terms of its title weigh more.
PASTED = (
    "Background tasks added in a dependency: in which order do they run?\n\n"
    'My endpoint calls `background_tasks.add_task(write_notification, email, message="hi")`'
    " and returns at once, as expected, but I cannot tell whether the task ran after the"
    " response was sent. I declared the parameter as `background_tasks: BackgroundTasks` in"
    " the path operation function, next to a dependency that also adds a task. Where is"
    " this documented, and in which order do the tasks run?"
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """Three nodes on loopback; a failure to fetch or start fails the tests, it never skips."""
    running = Cluster(size=3).start()
    try:
        yield running
    finally:
        running.stop()


def tree(root: Path, marker: str = "") -> Path:
    """``PAGES`` tutorial pages (each with a ``marker`` section when given)."""
    pages = sorted((CORPUS / "docs/en/docs/tutorial").glob("*.md"))[:PAGES]
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for page in pages:
        text = page.read_text("utf-8")
        if marker:
            text += f"\n\n## Marker\n\nThis page carries {marker}.\n"
        (root / page.name).write_text(text, "utf-8")
    return root


def config(path: Path, root: Path, hosts: list[str], alias: str, **options) -> Path:
    table = {"hosts": hosts, "alias": alias, "timeout_seconds": 30, "replicas": 1, **options}
    lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    path.write_text(
        "[server]\nwatch = false\n\n"
        f'[[sources]]\nname = "docs"\nkind = "opensearch"\nroot = "{root}"\ndefault = true\n'
        f"{lines}\n",
        "utf-8",
    )
    return path


def push(cfg: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    command = [sys.executable, "-m", "scriptorium", "index", "push", "--config", str(cfg)]
    return subprocess.Popen(
        [*command, "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def pushed(cfg: Path) -> dict:
    proc = push(cfg)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out)["docs"]


def cluster_get(cluster: Cluster, path: str) -> object:
    with urllib.request.urlopen(f"http://{cluster.hosts[0]}/{path}", timeout=30) as reply:
        return json.loads(reply.read())


def daemon_for(cfg: Path, work: Path) -> Daemon:
    return Daemon(["--config", str(cfg)], work / f"state-{free_port()}").start()


def search(daemon: Daemon, query: str, top_k: int = 20) -> pb.SearchResponse:
    return daemon.stub.Search(pb.SearchRequest(query=query, top_k=top_k), timeout=60)


def one_generation(response: pb.SearchResponse) -> tuple[str, int, str]:
    """(the generation, the pages hit, the markers seen) of one search; all hits agree."""
    revisions = {r.source_revision for r in response.results}
    assert len(revisions) == 1, f"a search mixed generations: {revisions}"
    pages = {r.location.partition("#")[0] for r in response.results}
    seen = " ".join(r.snippet for r in response.results if "Marker" in r.title)
    return revisions.pop(), len(pages), seen


# -- the same answers as a local source ----------------------------------------------------------


def test_cluster_answers_carry_local_refs_locations_and_content(
    fastapi_corpus, cluster: Cluster, tmp_path: Path
) -> None:
    root = tree(tmp_path / "pages")
    summary = pushed(config(tmp_path / "c.toml", root, cluster.hosts, "t-same"))
    assert summary["documents"] == PAGES and summary["blocks"] > PAGES
    local_cfg = tmp_path / "l.toml"
    local_cfg.write_text(
        f'[server]\nwatch = false\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
        f'root = "{root}"\ndefault = true\n',
        "utf-8",
    )
    remote = daemon_for(tmp_path / "c.toml", tmp_path)
    local = daemon_for(local_cfg, tmp_path)
    try:
        for query in (*QUERIES, PASTED):
            answer = search(remote, query, top_k=5)
            assert answer.results and answer.provider == "docs"
            baseline = search(local, query, top_k=5)
            # The same pipeline over the same blocks: the best hit is the local one.
            assert answer.results[0].location == baseline.results[0].location
            for hit in answer.results:
                assert hit.source_revision.startswith("t-same-")
                mine = local.stub.GetContent(pb.GetContentRequest(location=hit.location))
                assert (hit.ref_id, hit.doc_version) == (mine.ref_id, mine.doc_version)
                theirs = remote.stub.GetContent(pb.GetContentRequest(ref_id=hit.ref_id))
                assert theirs.provider == "docs"
                assert (theirs.content, theirs.location) == (mine.content, mine.location)
                assert (theirs.start_line, theirs.end_line) == (mine.start_line, mine.end_line)
                assert theirs.scope == mine.scope
        by_location = remote.stub.GetContent(pb.GetContentRequest(location=hit.location))
        assert by_location.content == mine.content
    finally:
        remote.terminate()
        local.terminate()


def test_two_daemons_read_one_alias_and_follow_new_generations(
    fastapi_corpus, cluster: Cluster, tmp_path: Path
) -> None:
    cfg = config(tmp_path / "c.toml", tree(tmp_path / "pages"), cluster.hosts, "t-two")
    pushed(cfg)
    first, second = daemon_for(cfg, tmp_path), daemon_for(cfg, tmp_path)
    try:
        for query in QUERIES:
            a, b = search(first, query), search(second, query)
            assert [r.ref_id for r in a.results] == [r.ref_id for r in b.results]
            assert a.results
        assert not search(first, "zanzibarquux").results
        report = first.stub.ListSources(pb.ListSourcesRequest()).sources[0]
        assert report.state == pb.SOURCE_STATE_READY and report.document_count == PAGES
        tree(tmp_path / "pages", marker="zanzibarquux")
        pushed(cfg)
        # Neither daemon restarts or rebuilds: both read the alias, now on the new generation.
        for daemon in (first, second):
            found = search(daemon, "zanzibarquux")
            assert one_generation(found)[1] == PAGES
    finally:
        first.terminate()
        second.terminate()


# -- generations ---------------------------------------------------------------------------------


def test_a_push_under_way_is_never_seen_half_written(
    fastapi_corpus, cluster: Cluster, tmp_path: Path
) -> None:
    root = tree(tmp_path / "pages", marker="alphamarker")
    cfg = config(
        tmp_path / "c.toml", root, cluster.hosts, "t-half", bulk_actions=10, keep_generations=1
    )
    old = pushed(cfg)["index"]
    daemon = daemon_for(cfg, tmp_path)
    release = tmp_path / "release"
    try:
        tree(root, marker="betamarker")
        proc = push(cfg, {FAULT_PAUSE: f"opensearch.push.bulk={release}"})
        assert wait_for(lambda: reached_marker(release).exists(), timeout=120), "mid-load"
        # Part of the new generation is in the cluster; the alias still names the old one.
        generation, pages, seen = one_generation(search(daemon, MARKERS))
        assert (generation, pages) == (old, PAGES) and "betamarker" not in seen
        release.touch()
        while proc.poll() is None:
            generation, pages, _ = one_generation(search(daemon, MARKERS))
            assert pages == PAGES
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        new = json.loads(out)["docs"]
        generation, pages, seen = one_generation(search(daemon, MARKERS))
        assert (generation, pages) == (new["index"], PAGES)
        assert "betamarker" in seen and "alphamarker" not in seen
        # keep_generations = 1: the old generation is gone.
        assert new["pruned"] == old
        indices = cluster_get(cluster, "_cat/indices/t-half-*?format=json")
        assert [i["index"] for i in indices] == [new["index"]]
    finally:
        release.touch()
        daemon.terminate()


def cluster_put(cluster: Cluster, path: str, body: dict) -> object:
    request = urllib.request.Request(
        f"http://{cluster.hosts[0]}/{path}",
        data=json.dumps(body).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def serving(cluster: Cluster, alias: str) -> list[str]:
    return [a["index"] for a in cluster_get(cluster, f"_cat/aliases/{alias}?format=json")]


def test_a_second_pusher_of_the_same_source_is_refused_while_one_writes(
    fastapi_corpus, cluster: Cluster, tmp_path: Path
) -> None:
    root = tree(tmp_path / "pages", marker="alphamarker")
    cfg = config(tmp_path / "c.toml", root, cluster.hosts, "t-lock", bulk_actions=10)
    first = pushed(cfg)["index"]
    tree(root, marker="betamarker")
    release = tmp_path / "release"
    holder = push(cfg, {FAULT_PAUSE: f"opensearch.push.bulk={release}"})
    try:
        assert wait_for(lambda: reached_marker(release).exists(), timeout=120), "mid-load"
        second = push(cfg)
        _, err = second.communicate(timeout=300)
        assert second.returncode == 1
        assert "another push of t-lock is under way" in err and "Traceback" not in err
        # The refused pusher made no index: the first generation and the holder's own.
        indices = cluster_get(cluster, "_cat/indices/t-lock-*?format=json")
        assert len(indices) == 2 and serving(cluster, "t-lock") == [first]
    finally:
        release.touch()
    out, err = holder.communicate(timeout=300)
    assert holder.returncode == 0, err
    written = json.loads(out)["docs"]
    assert serving(cluster, "t-lock") == [written["index"]]
    # Whole, refreshed and replicated before the alias moved to it.
    settings = cluster_get(cluster, f"{written['index']}/_settings")[written["index"]]
    assert settings["settings"]["index"]["number_of_replicas"] == "1"
    assert "refresh_interval" not in settings["settings"]["index"]
    health = cluster_get(cluster, f"_cluster/health/{written['index']}")
    assert health["status"] == "green"
    # The lock is released: the next push takes it.
    assert pushed(cfg)["index"] != written["index"]


def test_a_dead_pushers_lock_holds_until_it_expires(
    fastapi_corpus, cluster: Cluster, tmp_path: Path
) -> None:
    cfg = config(tmp_path / "c.toml", tree(tmp_path / "pages"), cluster.hosts, "t-expiry")
    first = pushed(cfg)["index"]
    lock = "scriptorium_push_locks/_doc/t-expiry?refresh=true"
    now = time.time()
    cluster_put(cluster, lock, {"owner": "gone:1", "acquired_at": now, "expires_at": now + 600})
    proc = push(cfg)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "gone:1" in err
    assert serving(cluster, "t-expiry") == [first]
    cluster_put(cluster, lock, {"owner": "gone:1", "acquired_at": now, "expires_at": now - 1})
    assert pushed(cfg)["index"] != first


def test_tls_and_auth_keys_reach_the_client(
    fastapi_corpus, cluster: Cluster, tmp_path: Path
) -> None:
    """The test cluster has no security plugin, so this checks the keys are passed through, not
    a secured cluster: TLS spoken to its plain-HTTP nodes fails the push in one sentence, and a
    username without its password variable is refused before any call."""
    root = tree(tmp_path / "pages")
    tls = config(tmp_path / "tls.toml", root, cluster.hosts, "t-tls", use_ssl=True)
    proc = push(tls)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1 and "no node of" in err and "Traceback" not in err
    assert cluster_get(cluster, "_cat/indices/t-tls-*?format=json") == []
    auth = config(
        tmp_path / "auth.toml",
        root,
        cluster.hosts,
        "t-auth",
        username="reader",
        password_env="SCRIPTORIUM_TEST_UNSET_PASSWORD",
    )
    proc = push(auth)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0 and "password_env" in err and "Traceback" not in err


def test_a_node_killed_mid_load_loses_no_block_and_fails_no_search(
    fastapi_corpus, cluster: Cluster, tmp_path: Path
) -> None:
    """Last in the module: it leaves the cluster one node short."""
    root = tree(tmp_path / "pages", marker="alphamarker")
    cfg = config(tmp_path / "c.toml", root, cluster.hosts, "t-kill", bulk_actions=10, shards=2)
    pushed(cfg)
    daemon = daemon_for(cfg, tmp_path)
    release = tmp_path / "release"
    failures: list[str] = []
    answered: list[int] = []
    tried: list[int] = []
    stop = threading.Event()

    def searching() -> None:
        while not stop.is_set():
            tried.append(1)
            try:
                response = search(daemon, MARKERS)
                _, pages, _ = one_generation(response)
                if pages != PAGES or response.failed_sources:
                    failures.append(f"{pages} pages, failed {list(response.failed_sources)}")
                answered.append(pages)
            except (grpc.RpcError, AssertionError) as exc:
                failures.append(repr(exc))

    searcher = threading.Thread(target=searching)
    try:
        tree(root, marker="betamarker")
        proc = push(cfg, {FAULT_PAUSE: f"opensearch.push.bulk={release}"})
        assert wait_for(lambda: reached_marker(release).exists(), timeout=120), "mid-load"
        searcher.start()
        assert wait_for(lambda: len(tried) >= 2, timeout=120), "searches before the kill"
        # The node holding a primary of the generation being written goes down.
        serving = {a["index"] for a in cluster_get(cluster, "_cat/aliases/t-kill?format=json")}
        shards = cluster_get(cluster, "_cat/shards/t-kill-*?format=json")
        target = next(
            s["node"]
            for s in shards
            if s["index"] not in serving and s["prirep"] == "p" and s["state"] == "STARTED"
        )
        victim = next(n for n in cluster.nodes if n.name == target)
        cluster.kill(victim)
        before = len(tried)
        assert wait_for(lambda: len(tried) >= before + 3, timeout=120), "searches after"
        release.touch()
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        summary = json.loads(out)["docs"]
        stop.set()
        searcher.join(timeout=120)
        assert not failures, failures[:3]
        # Every block written is in the new generation, served by the two nodes left.
        count = cluster_get(cluster, f"{summary['index']}/_count")
        assert count["count"] == summary["documents"] + summary["blocks"]
        generation, pages, seen = one_generation(search(daemon, MARKERS))
        assert (generation, pages) == (summary["index"], PAGES) and "betamarker" in seen
    finally:
        stop.set()
        release.touch()
        if searcher.is_alive():
            searcher.join(timeout=120)
        daemon.terminate()
