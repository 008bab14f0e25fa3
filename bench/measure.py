"""Timing, memory and size helpers shared by the benchmark sections."""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import grpc


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def latency(call: Callable[[int], object], n: int, warmup: int = 20) -> dict:
    """Sequential latency of ``call(i)`` for ``i`` in ``range(n)`` after a short warm-up."""
    for i in range(min(warmup, n)):
        call(i)
    samples = []
    for i in range(n):
        start = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - start) * 1000)
    return summary(samples)


def summary(samples_ms: list[float]) -> dict:
    return {
        "p50_ms": round(statistics.median(samples_ms), 3),
        "p99_ms": round(percentile(samples_ms, 0.99), 3),
        "n": len(samples_ms),
    }


def client_channel(address: str) -> grpc.Channel:
    """A channel on a connection of its own, as an independent client process has.

    gRPC shares one connection between channels made with the same target and options (its
    global subchannel pool), so callers each "with their own channel" would all be streams of
    one HTTP/2 connection, refused past the daemon's ``max_concurrent_streams``: a local
    subchannel pool gives each channel its own connection.
    """
    return grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])


def throughput(
    make_call: Callable[[], Callable[[int], object]],
    callers: int,
    seconds: float,
    failures: Counter[str] | None = None,
) -> float:
    """Successful calls per second with ``callers`` threads for ``seconds``, each caller with
    its own channel (``make_call`` makes them: see :func:`client_channel`); a call that fails
    with a status is counted in ``failures`` under its code's name, not as a call."""
    stop = time.monotonic() + seconds
    counts = [0] * callers
    failed: list[Counter[str]] = [Counter() for _ in range(callers)]

    def worker(slot: int) -> None:
        call = make_call()
        i = done = 0
        while time.monotonic() < stop:
            try:
                call(i)
                done += 1
            except grpc.RpcError as exc:
                failed[slot][exc.code().name] += 1
            i += 1
        counts[slot] = done

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures is not None:
        for counter in failed:
            failures.update(counter)
    return round(sum(counts) / seconds, 1)


def _status_mb(pid: int, *fields: str) -> dict[str, float]:
    """``fields`` of ``/proc/<pid>/status`` (kB there) in MB; 0.0 for any it lacks."""
    found = dict.fromkeys(fields, 0.0)
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in found:
                found[name] = round(int(value.split()[0]) / 1024, 1)
    except OSError:
        pass
    return found


def rss_mb(pid: int) -> float:
    return _status_mb(pid, "VmRSS")["VmRSS"]


def rss_parts_mb(pid: int) -> dict[str, float]:
    """A process's resident memory split as the kernel counts it: ``anon`` (the heaps: what
    the process holds) and ``file`` (mapped file pages, such as the index's, which the kernel
    drops under pressure and reads again)."""
    parts = _status_mb(pid, "RssAnon", "RssFile")
    return {"anon": parts["RssAnon"], "file": parts["RssFile"]}


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far (from /proc, Linux only)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dir_mb(path: Path) -> float:
    if not path.is_dir():
        return 0.0
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 2)


def tree_bytes(root: Path, suffixes: tuple[str, ...]) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and p.suffix in suffixes)


def ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 2) if denominator else 0.0
