"""Cold start and incremental updates, timed from outside the daemon.

Cold start is measured with ``--ready-file`` (written right after health turns SERVING), which
the launcher polls every 2 ms here, not with health checks: a gRPC channel that was refused while
the port was not yet bound backs off for up to a second, which would be measured as start-up time.
"""

from __future__ import annotations

import random
import re
import statistics
import string
import time
from pathlib import Path

from scriptorium.launcher import DaemonProcess
from scriptorium.v1 import retrieval_pb2 as pb

_READY_IN = re.compile(r"ready in ([0-9.]+)s")


def cold_start(config: Path, state: Path, work: Path, runs: int) -> dict:
    """Seconds from spawning ``scriptorium serve`` to SERVING, from an existing generation."""
    walls: list[float] = []
    loads: list[float] = []
    for run in range(runs):
        log = work / f"cold-{run}.log"
        daemon = DaemonProcess(
            ["--config", str(config)], state_dir=state, log=log, stdout_to_log=False
        )
        started = time.perf_counter()
        daemon.spawn()
        try:
            daemon.wait_ready(600, poll_s=0.002)
            walls.append(time.perf_counter() - started)
        finally:
            daemon.stop(60)
        found = _READY_IN.search(log.read_text("utf-8", "replace"))
        if found:
            loads.append(float(found.group(1)))
    return {
        "seconds": round(statistics.median(walls), 3),
        "runs": [round(w, 3) for w in walls],
        # The daemon's own "ready in" figure: sources loaded, after interpreter start and imports.
        "engine_load_seconds": round(statistics.median(loads), 3) if loads else None,
    }


def _marker(rng: random.Random) -> str:
    """A word no corpus holds, made of letters only so the tokenizer keeps it whole."""
    return "zqbench" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


def edit_latency(stub, corpus: Path, edits: int, timeout: float = 120.0) -> dict:
    """Seconds from writing a file until Search finds the word written into it.

    Alternates a Markdown page and a Python module of the corpus copy; each edit appends a
    paragraph (or a function) holding a fresh marker word, then the original text is restored.
    """
    rng = random.Random(7)
    targets = [
        sorted((corpus / "docs/en/docs/tutorial").glob("*.md"))[0],
        sorted((corpus / "fastapi").glob("*.py"))[0],
    ]
    seconds: list[float] = []
    for i in range(edits):
        path = targets[i % len(targets)]
        original = path.read_text("utf-8")
        word = _marker(rng)
        addition = (
            f"\n\n## Benchmark {word}\n\nA paragraph about {word}.\n"
            if path.suffix == ".md"
            else f"\n\ndef {word}():\n    return '{word}'\n"
        )
        started = time.perf_counter()
        path.write_text(original + addition, encoding="utf-8")
        try:
            while True:
                reply = stub.Search(pb.SearchRequest(query=word, top_k=1))
                if reply.results:
                    seconds.append(time.perf_counter() - started)
                    break
                if time.perf_counter() - started > timeout:
                    seconds.append(float("inf"))
                    break
                time.sleep(0.02)
        finally:
            path.write_text(original, encoding="utf-8")
        _wait_gone(stub, word, timeout)
    finite = [s for s in seconds if s != float("inf")]
    return {
        "p50_seconds": round(statistics.median(seconds), 3) if finite else None,
        "max_seconds": round(max(seconds), 3) if finite else None,
        "runs": [round(s, 3) for s in seconds],
    }


def _wait_gone(stub, word: str, timeout: float) -> None:
    """Wait until the restored file is indexed again, so edits do not overlap."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if not stub.Search(pb.SearchRequest(query=word, top_k=1)).results:
            return
        time.sleep(0.02)
