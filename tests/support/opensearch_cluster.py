"""A real OpenSearch cluster on loopback for the tests and the benchmark.

The minimal distribution (``org.opensearch.distribution.integ-test-zip:opensearch``) is taken
from Maven Central, checked against the SHA-512 published beside it, and unpacked once into a
cache folder outside the repository. Nodes run with the machine's JDK, small heaps, security
off, each with its own config, data and log folders. OpenSearch refuses to run as root, so as
root the nodes run as ``nobody`` and the cache sits where ``nobody`` can read it.

``python -m tests.support.opensearch_cluster fetch`` downloads and unpacks only (what
``make test`` runs first, so a missing JDK or an unreachable registry fails with one line).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

VERSION = os.environ.get("SCRIPTORIUM_OPENSEARCH_VERSION", "2.19.6")
MAVEN = "https://repo1.maven.org/maven2/org/opensearch/distribution/integ-test-zip/opensearch"
# 2.19 is the newest line that runs on Java 17 (3.x needs 21).
MIN_JAVA = 11
START_TIMEOUT = 240.0
UNPRIVILEGED = "nobody"
PR_SET_PDEATHSIG = 1


class ClusterError(RuntimeError):
    """The cluster could not be fetched or started; the message says what was tried."""


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def cache_dir() -> Path:
    """Where the distribution is kept (``SCRIPTORIUM_OPENSEARCH_CACHE`` overrides)."""
    named = os.environ.get("SCRIPTORIUM_OPENSEARCH_CACHE")
    if named:
        return Path(named)
    if _as_root():  # /root is closed to the unprivileged user the nodes run as
        return Path("/var/cache/scriptorium")
    return Path.home() / ".cache" / "scriptorium"


def java_home() -> Path:
    """The JDK the nodes run with: ``OPENSEARCH_JAVA_HOME``, ``JAVA_HOME`` or ``java`` on PATH."""
    for name in ("OPENSEARCH_JAVA_HOME", "JAVA_HOME"):
        value = os.environ.get(name)
        if value and (Path(value) / "bin" / "java").exists():
            return Path(value)
    java = shutil.which("java")
    if java is None:
        raise ClusterError(
            "the OpenSearch tests need a JDK (17): no java on PATH and no JAVA_HOME"
            " (on Debian: apt-get install openjdk-17-jdk-headless)"
        )
    return Path(os.path.realpath(java)).parent.parent


def _java_major(home: Path) -> int:
    out = subprocess.run(
        [str(home / "bin" / "java"), "-version"], capture_output=True, text=True, timeout=60
    )
    text = out.stderr + out.stdout
    quoted = text.split('"')[1] if '"' in text else ""
    head = quoted.split(".")[0]
    if head == "1":
        head = quoted.split(".")[1]
    return int(head) if head.isdigit() else 0


def _download(url: str, target: Path) -> None:
    try:
        with urllib.request.urlopen(url, timeout=120) as reply, target.open("wb") as out:
            shutil.copyfileobj(reply, out)
    except OSError as exc:
        raise ClusterError(f"could not download {url}: {exc}") from exc


def distribution(version: str = VERSION) -> Path:
    """The unpacked distribution's home, downloaded and checked on first use."""
    root = cache_dir()
    home = root / f"opensearch-{version}"
    if (home / "bin" / "opensearch").exists():
        return home
    root.mkdir(parents=True, exist_ok=True)
    name = f"opensearch-{version}.zip"
    archive = root / name
    sums = root / f"{name}.sha512"
    _download(f"{MAVEN}/{version}/{name}.sha512", sums)
    expected = sums.read_text().split()[0].strip().lower()
    if not archive.exists() or _sha512(archive) != expected:
        _download(f"{MAVEN}/{version}/{name}", archive)
        actual = _sha512(archive)
        if actual != expected:
            archive.unlink()
            raise ClusterError(
                f"{name}: SHA-512 {actual[:16]}... is not Maven's {expected[:16]}..."
            )
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".unpack-"))
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            zipped.extract(info, staging)
            mode = info.external_attr >> 16
            if mode:
                os.chmod(staging / info.filename, mode | 0o444)
    (staging / f"opensearch-{version}").rename(home)
    shutil.rmtree(staging, ignore_errors=True)
    _open_up(root)
    return home


def _sha512(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha512").hexdigest()


def _open_up(path: Path) -> None:
    """Readable (and folders enterable) by the unprivileged user the nodes run as."""
    for folder, _dirs, files in os.walk(path):
        os.chmod(folder, os.stat(folder).st_mode | 0o555)
        for name in files:
            target = Path(folder) / name
            os.chmod(target, os.stat(target).st_mode | 0o444)


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports. The sockets are held open until every port is
    chosen: ports taken one at a time may repeat, and a node's HTTP port that is another's
    transport port answers "This is not an HTTP port"."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]


@dataclass
class Node:
    name: str
    http_port: int
    transport_port: int
    folder: Path
    process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.http_port}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Cluster:
    """Nodes of one cluster; ``start`` returns once every node has joined."""

    size: int = 3
    heap: str = "-Xms256m -Xmx512m"
    nodes: list[Node] = field(default_factory=list)
    folder: Path | None = None
    killed: set[str] = field(default_factory=set)

    @property
    def hosts(self) -> list[str]:
        return [n.address for n in self.nodes if n.alive]

    def start(self) -> Cluster:
        home = distribution()
        jdk = java_home()
        if _java_major(jdk) < MIN_JAVA:
            raise ClusterError(f"OpenSearch {VERSION} needs Java {MIN_JAVA}+; {jdk} is older")
        self.folder = Path(tempfile.mkdtemp(prefix="scriptorium-opensearch-"))
        os.chmod(self.folder, 0o755)
        ports = free_ports(2 * self.size)
        self.nodes = [
            Node(f"node-{i}", ports[2 * i], ports[2 * i + 1], self.folder / f"node-{i}")
            for i in range(self.size)
        ]
        seeds = ",".join(f"127.0.0.1:{n.transport_port}" for n in self.nodes)
        managers = ",".join(n.name for n in self.nodes)
        try:
            for node in self.nodes:
                self._launch(home, jdk, node, seeds, managers)
            self.wait_for(lambda h: h.get("number_of_nodes") == self.size, "every node to join")
        except BaseException:
            self.stop()  # a cluster that never formed leaves no node running
            raise
        return self

    def _launch(self, home: Path, jdk: Path, node: Node, seeds: str, managers: str) -> None:
        config = node.folder / "config"
        for sub in ("data", "logs", "tmp"):
            (node.folder / sub).mkdir(parents=True)
        shutil.copytree(home / "config", config)
        # The shipped jvm.options writes GC logs and heap dumps relative to the working folder.
        kept = [
            line
            for line in (home / "config" / "jvm.options").read_text().splitlines()
            if not any(mark in line for mark in ("gc.log", "HeapDump", "ErrorFile", "-Xm"))
        ]
        kept.append(f"-XX:ErrorFile={node.folder / 'logs' / 'hs_err_pid%p.log'}")
        (config / "jvm.options").write_text("\n".join(kept) + "\n")
        env = {
            **os.environ,
            "OPENSEARCH_JAVA_HOME": str(jdk),
            "OPENSEARCH_PATH_CONF": str(config),
            "OPENSEARCH_TMPDIR": str(node.folder / "tmp"),
            "OPENSEARCH_JAVA_OPTS": self.heap,
        }
        env.pop("JAVA_TOOL_OPTIONS", None)
        command = node_command(home, node, seeds, managers)
        # A node ends with the test process, even one killed outright: the fixture's teardown
        # would not run, and three JVMs (1.4 GB) would outlive it.
        if _as_root():
            subprocess.run(["chown", "-R", f"{UNPRIVILEGED}:", str(node.folder)], check=True)
            # Changing the user clears a death signal set before; setpriv sets it after.
            privileges = [f"--reuid={UNPRIVILEGED}", "--regid=nogroup", "--clear-groups"]
            command = ["setpriv", *privileges, "--pdeathsig=KILL", *command]
        with (node.folder / "console.log").open("wb") as log:
            node.process = subprocess.Popen(
                command,
                cwd=node.folder,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=None if _as_root() else _die_with_parent,
            )

    def health(self, timeout: float = 5.0) -> dict:
        """The cluster health as any live node reports it ({} when none answers)."""
        for node in self.nodes:
            if not node.alive:
                continue
            url = f"http://{node.address}/_cluster/health"
            try:
                with urllib.request.urlopen(url, timeout=timeout) as reply:
                    return json.loads(reply.read())
            except (OSError, http.client.HTTPException):
                continue
        return {}

    def wait_for(self, ready, what: str, timeout: float = START_TIMEOUT) -> dict:
        """Poll the health until ``ready(health)`` holds; a dead node or the timeout raises."""
        deadline = time.monotonic() + timeout
        while True:
            dead = [
                n
                for n in self.nodes
                if n.name not in self.killed and n.process is not None and not n.alive
            ]
            if dead:
                raise ClusterError(f"{dead[0].name} exited: {self.tail(dead[0])}")
            health = self.health()
            if health and ready(health):
                return health
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out waiting for {what}; last health {health}")
            time.sleep(0.5)

    def tail(self, node: Node, lines: int = 15) -> str:
        path = node.folder / "console.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def kill(self, node: Node) -> None:
        """Kill one node outright (SIGKILL), as a crashed machine would go."""
        self.killed.add(node.name)
        if node.process is not None and node.process.poll() is None:
            os.killpg(node.process.pid, signal.SIGKILL)
            node.process.wait(timeout=60)

    def stop(self) -> None:
        for node in self.nodes:
            if node.process is not None and node.process.poll() is None:
                try:
                    os.killpg(node.process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        for node in self.nodes:
            if node.process is None:
                continue
            try:
                node.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(node.process.pid, signal.SIGKILL)
                node.process.wait(timeout=60)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _die_with_parent() -> None:
    """In the node's process before it runs: the kernel kills it when its parent ends."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def node_command(home: Path, node: Node, seeds: str, managers: str) -> list[str]:
    return [
        str(home / "bin" / "opensearch"),
        "-Ecluster.name=scriptorium-test",
        f"-Enode.name={node.name}",
        f"-Epath.data={node.folder / 'data'}",
        f"-Epath.logs={node.folder / 'logs'}",
        "-Enetwork.host=127.0.0.1",
        f"-Ehttp.port={node.http_port}",
        f"-Etransport.port={node.transport_port}",
        f"-Ediscovery.seed_hosts={seeds}",
        f"-Ecluster.initial_cluster_manager_nodes={managers}",
        "-Ecluster.routing.allocation.disk.threshold_enabled=false",
        "-Eaction.auto_create_index=false",
    ]


def main(argv: list[str]) -> int:
    """``fetch``: download, check and unpack, and check the JDK; ``run``: start until killed."""
    action = argv[0] if argv else "fetch"
    try:
        if action == "fetch":
            home = distribution()
            jdk = java_home()
            major = _java_major(jdk)
            if major < MIN_JAVA:
                raise ClusterError(
                    f"OpenSearch {VERSION} needs Java {MIN_JAVA}+; {jdk} has {major}"
                )
            print(f"opensearch {VERSION} at {home}; java {major} at {jdk}")
            return 0
        if action == "run":
            # Blocked first, so SIGTERM reaches sigwait (and the nodes stop) instead of exiting.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            cluster = Cluster(size=int(argv[1]) if len(argv) > 1 else 3).start()
            print(",".join(cluster.hosts), flush=True)
            try:
                signal.sigwait({signal.SIGINT, signal.SIGTERM})
            finally:
                cluster.stop()
            return 0
    except ClusterError as exc:
        print(f"opensearch cluster: {exc}", file=sys.stderr)
        return 1
    print("usage: python -m tests.support.opensearch_cluster fetch|run [nodes]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
