"""Running the suite: per corpus, materialise, index (daemon and baselines), ask every case.

One daemon per corpus, started through the evaluation runner's spawner with a state dir kept
beside the corpus, so the next run on the same commit reuses its index generation. The
baselines are built while the daemon indexes, then every case is asked of all three systems.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from scriptorium.evaluation import runner
from scriptorium.evaluation.suite import baselines, metrics
from scriptorium.evaluation.suite.corpus import CorpusView, load_documents, open_view, write_config
from scriptorium.evaluation.suite.materialise import Materialised, materialise
from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.evaluation.suite.sets import DOCS_SEARCH_SETS, CorpusSpec, SuiteCase
from scriptorium.evaluation.suite.settle import seed_vectors, wait_for_vectors
from scriptorium.limits import TOP_K_MAX
from scriptorium.plugins import Registry
from scriptorium.v1 import retrieval_pb2 as pb

DAEMON = "daemon"
SYSTEMS = (DAEMON, baselines.WHOLE_FILE, baselines.BLOCK)
# Block results asked of the baselines: collapsed to files, they must still fill 10 files.
BLOCK_DEPTH = 100
INDEX_TIMEOUT_S = 3600.0  # the daemon reports SERVING only once its first generation is built
# Sets asked with ``kinds: docs`` (the daemon and the baselines alike).
DOCS_ONLY_SETS = frozenset({"docs-search", "ds1000", "libref"})
# Sets scored by page Hit@k at these cutoffs and MRR@10 (Hit@3 as well as DS-1000's own
# Hit@1/5/10, so the macro over sets averages every metric over the same sets).
PAGE_CUTOFFS = {
    "ds1000": (1, 3, 5, 10),
    "fastapi-repo": (1, 3, 5, 10),
    "usage": (1, 3, 5, 10),
    "usage-names": (1, 3, 5, 10),
    "libref": (1, 3, 5, 10),
}
MRR_CUTOFF = 10

Log = Callable[[str], None]


@dataclass
class Answer:
    """What one system returned for one case: results in order, or the error it gave."""

    results: list[metrics.Result] = field(default_factory=list)
    error: str = ""
    latency_ms: float = 0.0


@dataclass
class CorpusTiming:
    corpus: str
    materialise_s: float = 0.0
    baselines_s: float = 0.0
    daemon_ready_s: float = 0.0
    vectors_s: float = 0.0
    queries_s: float = 0.0
    cases: int = 0
    documents: int = 0
    blocks: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {k: round(v, 2) if isinstance(v, float) else v for k, v in vars(self).items()}


def _kinds(case: SuiteCase) -> list[int]:
    return [pb.CORPUS_DOCS] if case.set_name in DOCS_ONLY_SETS else []


def ask_daemon(client: runner.RetrievalClient, view: CorpusView, case: SuiteCase) -> Answer:
    """Search the daemon with the case's (clipped) query; map its locations to files."""
    request = pb.SearchRequest(
        query=case.query,
        top_k=TOP_K_MAX,
        kinds=_kinds(case),
        mode=case.mode,
        surface=case.surface,
    )
    started = time.perf_counter()
    try:
        response = client.stub.Search(request, timeout=120.0)
    except grpc.RpcError as exc:
        code = exc.code().name if hasattr(exc, "code") and exc.code() else "UNKNOWN"
        detail = exc.details() if hasattr(exc, "details") else str(exc)
        return Answer(error=f"{code}: {detail}", latency_ms=_ms(started))
    answer = Answer(latency_ms=_ms(started))
    for r in response.results:
        file = view.file_of_location(r.source, r.location) or f"?{r.source}:{r.location}"
        definition = ".".join(r.section_path) if r.kind == pb.REF_KIND_CODE else None
        answer.results.append(metrics.Result(file, definition or None))
    return answer


def ask_baseline(
    index: baselines.Bm25Index, view: CorpusView, case: SuiteCase, depth: int
) -> Answer:
    started = time.perf_counter()
    corpora = frozenset({"docs"}) if case.set_name in DOCS_ONLY_SETS else frozenset()
    hits = index.search(baselines.query_tokens(case.query), depth, corpora)
    results = [metrics.Result(view.repo_path(h.source, h.path), h.definition) for h in hits]
    return Answer(results=results, latency_ms=_ms(started))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 2)


def score(case: SuiteCase, system: str, answer: Answer) -> dict[str, float]:
    if case.set_name in DOCS_SEARCH_SETS:
        return metrics.docs_search_metrics(answer.results, case.gains)
    if case.set_name in PAGE_CUTOFFS:
        cutoffs = PAGE_CUTOFFS[case.set_name]
        return metrics.page_metrics(answer.results, case.gains, cutoffs, MRR_CUTOFF)
    with_spans = system != baselines.WHOLE_FILE  # a whole file defines nothing in particular
    return metrics.swebench_metrics(answer.results, case.gains, case.spans, with_spans=with_spans)


def case_record(case: SuiteCase, system: str, answer: Answer) -> dict[str, Any]:
    """One JSONL row: the case, the system, what it ranked, and the metric values."""
    files = metrics.collapse(answer.results)
    return {
        "set": case.set_name,
        "case_id": case.case_id,
        "group": case.group,
        "system": system,
        "corpus": case.corpus.key,
        "query_chars": case.query_chars,
        "truncated": case.truncated,
        "rank": metrics.first_rank(files, case.gains),
        "files": files[:10],
        "expected": dict(case.gains),
        "metrics": score(case, system, answer),
        "error": answer.error,
        "latency_ms": answer.latency_ms,
    }


def run_corpus(
    spec: CorpusSpec,
    cases: Sequence[SuiteCase],
    *,
    repos: Path,
    cache: Path,
    registry: Registry,
    log: Log,
    materialised: Materialised | None = None,
    ranking: str = "",
) -> tuple[list[dict[str, Any]], CorpusTiming]:
    """Every case on one corpus, asked of the daemon (with ``ranking``, a ``[ranking]`` table
    or "") and both baselines."""
    timing = CorpusTiming(corpus=spec.key, cases=len(cases))
    started = time.perf_counter()
    corpus = materialised or materialise(repos, spec.repo, spec.commit, spec.selection, cache, log)
    timing.materialise_s = time.perf_counter() - started
    for seeded in seed_vectors(corpus.state_dir):
        log(f"  vectors seeded from the other commits: {seeded}")

    daemon = runner.DaemonProcess(
        config=write_config(corpus, spec, ranking),
        startup_timeout_s=INDEX_TIMEOUT_S,
        state_dir=corpus.state_dir,
    )
    ready: dict[str, Any] = {}
    daemon_started = time.perf_counter()

    def start() -> None:
        try:
            ready["target"] = daemon.start()
        except runner.DaemonError as exc:
            ready["error"] = exc
        ready["seconds"] = time.perf_counter() - daemon_started

    thread = threading.Thread(target=start, name=f"daemon {spec.key}", daemon=True)
    thread.start()
    client: runner.RetrievalClient | None = None
    try:
        began = time.perf_counter()
        view = open_view(registry, spec, corpus.tree)
        folder = corpus.state_dir.parent / (
            "baselines-" + baselines.cache_key(registry.extractor_chain.fingerprint)
        )
        whole, blocks = baselines.cached_indexes(folder, lambda: load_documents(view))
        timing.baselines_s = time.perf_counter() - began
        timing.documents = len(whole.entries)
        timing.blocks = len(blocks.entries)
        thread.join()
        timing.daemon_ready_s = ready.get("seconds", 0.0)
        if "error" in ready:
            raise SuiteError(f"{spec.key}: the daemon did not start: {ready['error']}")
        client = runner.RetrievalClient(ready["target"])
        began = time.perf_counter()
        timing.vectors_s = wait_for_vectors(client, log)
        began = time.perf_counter()
        rows = []
        for case in cases:
            rows.append(case_record(case, DAEMON, ask_daemon(client, view, case)))
            rows.append(
                case_record(case, baselines.WHOLE_FILE, ask_baseline(whole, view, case, TOP_K_MAX))
            )
            rows.append(
                case_record(case, baselines.BLOCK, ask_baseline(blocks, view, case, BLOCK_DEPTH))
            )
        timing.queries_s = time.perf_counter() - began
    finally:
        if client is not None:
            client.close()
        thread.join()
        daemon.stop()
    return rows, timing
