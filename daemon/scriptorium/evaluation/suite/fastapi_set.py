"""The project's own FastAPI set inside the suite: the ``make eval`` run, plus both baselines.

The daemon side is exactly ``scriptorium eval`` (the same runner, config and scoring); the
baselines read the same configured sources through the plugin registry and are scored with the
same ``score_search``, so all three rows of its table mean the same thing.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scriptorium.domain.model import SourceDocument
from scriptorium.evaluation import runner, scoring
from scriptorium.evaluation.evalset import Case, EvalSetError, load_eval_set
from scriptorium.evaluation.suite import baselines, metrics
from scriptorium.evaluation.suite.repos import SuiteError
from scriptorium.evaluation.suite.run import DAEMON, INDEX_TIMEOUT_S, CorpusTiming, Log
from scriptorium.evaluation.suite.sets import sample
from scriptorium.evaluation.suite.settle import wait_for_vectors
from scriptorium.plugins import Registry
from scriptorium.settings.config import ConfigError, load_settings
from scriptorium.sources.base import Source, SourceContext

SET_NAME = "fastapi"
TOP_K = 10  # what ``make eval`` measures at


def searched(case: Case) -> bool:
    """Cases the suite scores: searches with an answer (abstention and fetch-only cases are
    ``make eval``'s own business)."""
    return case.query is not None and bool(case.acceptable) and not case.expect_abstain


def _qualified(source: Source, location: str) -> str:
    return location if source.is_default else f"{source.name}/{location}"


def _documents(registry: Registry, config: Path) -> list[tuple[Source, SourceDocument]]:
    try:
        settings = load_settings(config)
    except ConfigError as exc:
        raise SuiteError(f"{config}: {exc}") from exc
    missing = [
        f"{s.name} ({s.root})"
        for s in settings.sources
        if s.root is not None and not s.root.is_dir()
    ]
    if missing:
        raise SuiteError(
            f"{config}: source root(s) missing: {', '.join(missing)} (roots are relative to the "
            "config file; pass --fastapi-config with roots that exist here)"
        )
    context = SourceContext(extractors=registry.extractor_chain)
    documents = []
    for source_config in settings.sources:
        source = registry.source_factory(source_config.kind)(source_config, context)
        for stat in source.list_files():  # type: ignore[attr-defined]
            doc = source.load(stat.path)  # type: ignore[attr-defined]
            if doc is not None:
                documents.append((source, doc))
    if not documents:
        raise SuiteError(f"{config}: its sources hold no documents")
    return documents


def _baseline_locations(
    index: baselines.Bm25Index, by_name: dict[str, Source], case: Case, depth: int
) -> list[str]:
    hits = index.search(baselines.query_tokens(case.query or ""), depth, frozenset(case.kinds))
    return [_qualified(by_name[hit.source], hit.location) for hit in hits]


def _row(
    case: Case, system: str, returned: Sequence[str], corpus: str, error: str = ""
) -> dict[str, Any]:
    score = scoring.score_search(returned, case.acceptable, case.sections, TOP_K)
    return {
        "set": SET_NAME,
        "case_id": case.id,
        "group": case.lang,
        "system": system,
        "corpus": corpus,
        "query_chars": len(case.query or ""),
        "truncated": False,
        "rank": score.rank,
        "files": list(returned[:TOP_K]),
        "expected": list(case.acceptable),
        # A whole file has no sections, so section hit@5 is not measured for it.
        "metrics": metrics.fastapi_metrics(
            score.rank, score.section_rank, bool(case.sections) and system != baselines.WHOLE_FILE
        ),
        "error": error,
    }


def run_fastapi_set(
    set_path: Path,
    config: Path,
    *,
    cache: Path,
    registry: Registry,
    log: Log,
    every: int | None = None,
    limit: int | None = None,
    state_key: Path | None = None,
) -> tuple[list[dict[str, Any]], CorpusTiming]:
    """The FastAPI set through a daemon on ``config`` and both baselines on its sources.

    The state directory is keyed by ``state_key`` (the configuration before any ``[ranking]``
    override was added; default ``config``), so runs that only change ranking levers share one
    index and its vectors (a lever that changes the index has the daemon build it again)."""
    try:
        cases = [c for c in load_eval_set(set_path) if searched(c)]
    except EvalSetError as exc:
        raise SuiteError(str(exc)) from exc
    cases = list(sample(cases, every, limit))  # type: ignore[arg-type]
    timing = CorpusTiming(corpus=f"{config.name} ({set_path.name})", cases=len(cases))
    keyed = state_key or config
    digest = hashlib.sha256(str(keyed.resolve()).encode() + keyed.read_bytes()).hexdigest()
    state_dir = cache.expanduser() / "fastapi-eval" / digest[:16] / "state"
    state_dir.mkdir(parents=True, exist_ok=True)

    began = time.perf_counter()
    documents = _documents(registry, config)
    by_name = {s.name: s for s, _ in documents}
    whole = baselines.whole_file_index(documents)
    blocks = baselines.block_index(documents)
    timing.baselines_s = time.perf_counter() - began
    timing.documents = len(whole.entries)
    timing.blocks = len(blocks.entries)

    log(f"fastapi: starting the daemon on {config} (state {state_dir})")
    daemon = runner.DaemonProcess(
        config=config.resolve(), startup_timeout_s=INDEX_TIMEOUT_S, state_dir=state_dir
    )
    began = time.perf_counter()
    try:
        target = daemon.start()
    except runner.DaemonError as exc:
        raise SuiteError(f"fastapi: the daemon did not start: {exc}") from exc
    timing.daemon_ready_s = time.perf_counter() - began
    client = runner.RetrievalClient(target)
    rows: list[dict[str, Any]] = []
    try:
        timing.vectors_s = wait_for_vectors(client, log)
        began = time.perf_counter()
        for record in runner.run_cases(client, cases, TOP_K):
            case = next(c for c in cases if c.id == record["id"])
            returned = (record.get("search") or {}).get("returned", [])
            rows.append(_row(case, DAEMON, returned, str(config), record.get("harness_error", "")))
        for case in cases:
            rows.append(
                _row(
                    case,
                    baselines.WHOLE_FILE,
                    _baseline_locations(whole, by_name, case, TOP_K),
                    str(config),
                )
            )
            rows.append(
                _row(
                    case,
                    baselines.BLOCK,
                    _baseline_locations(blocks, by_name, case, TOP_K),
                    str(config),
                )
            )
        timing.queries_s = time.perf_counter() - began
    finally:
        client.close()
        daemon.stop()
    return rows, timing
