"""Telemetry: stage spans, attribution, trace ids, metrics and lineage, with in-memory exporters.

A real engine over a few FastAPI pages and one module answers in-process; the spans and metrics
it records are read back from the SDK's in-memory exporter and reader.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from scriptorium import telemetry as T
from scriptorium.cancel import BuildCancelled
from scriptorium.domain.model import Candidate, Query
from scriptorium.domain.outcomes import ContentParams, NotFound, SearchParams
from scriptorium.domain.refs import decode_ref
from scriptorium.engine.local import LocalEngine
from scriptorium.grpc.servicer import RetrievalServicer
from scriptorium.plugins import load_registry
from scriptorium.ranking.pipeline import Pipeline
from scriptorium.ranking.ranker import STAGES
from scriptorium.settings.config import ConfigError, Settings, TelemetrySettings, parse_telemetry
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import SourceConfig
from scriptorium.v1 import retrieval_pb2 as pb
from tests.support.daemon import CORPUS

SECRET = "sk-live-TESTSECRET-0123456789"
PAGES = ("background-tasks.md", "path-params.md", "query-params.md")
SUPERSEDED = """---
title: Old background jobs
superseded_by: tutorial/background-tasks
effective_to: 2020-01-01
---
# Old background jobs

Background tasks used to run in a thread pool after the response was sent.
"""


@pytest.fixture(scope="module")
def engine(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> LocalEngine:
    root = tmp_path_factory.mktemp("tree")
    tutorial = root / "docs" / "tutorial"
    tutorial.mkdir(parents=True)
    for name in PAGES:
        shutil.copy(CORPUS / "docs/en/docs/tutorial" / name, tutorial / name)
    (tutorial / "old-background.md").write_text(SUPERSEDED, encoding="utf-8")
    (root / "fastapi").mkdir()
    shutil.copy(CORPUS / "fastapi/background.py", root / "fastapi/background.py")
    settings = Settings(
        sources=[
            SourceConfig("docs", "markdown", root / "docs", default=True),
            SourceConfig(
                "code", "code", root, default=True, options={"include": ["fastapi/**/*.py"]}
            ),
        ],
        state_dir=root.parent / "state",
        watch=False,
    )
    built = LocalEngine(settings, load_registry())
    built.indexer.load_or_build()
    built._ready = True
    return built


@pytest.fixture
def otel():
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    T.configure(span_exporter=spans, metric_reader=reader)
    yield spans, reader
    T.shutdown()


def search(engine: LocalEngine, query: str, **kw):
    return asyncio.run(engine.search(SearchParams(query=query, **kw)))


def fetch(engine: LocalEngine, **kw):
    return asyncio.run(engine.get_content(ContentParams(**kw)))


def named(spans, name: str) -> list:
    return [s for s in spans if s.name == name]


def points(reader: InMemoryMetricReader) -> dict[str, list]:
    out: dict[str, list] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                out.setdefault(metric.name, []).extend(metric.data.data_points)
    return out


# -- spans --------------------------------------------------------------------------------------


def test_a_search_records_every_stage_under_its_span(engine, otel):
    exporter, _ = otel
    outcome = search(engine, "run background tasks after the response", explain=True)
    spans = exporter.get_finished_spans()
    (root,) = named(spans, T.SEARCH)
    assert outcome.trace_id == format(root.context.trace_id, "032x")
    by_id = {s.context.span_id: s for s in spans}
    for name in T.STAGE_SPANS:
        (stage,) = named(spans, name)
        parent = stage
        while parent.parent is not None and parent.parent.span_id in by_id:
            parent = by_id[parent.parent.span_id]
        assert parent is root, name
    attrs = root.attributes
    assert attrs[T.QUERY_CHARS] == len("run background tasks after the response")
    assert attrs[T.TERM_COUNT] == outcome.understood.term_count > 0
    assert named(spans, T.UNDERSTAND)[0].attributes[T.TERM_COUNT] == attrs[T.TERM_COUNT]
    assert attrs[T.RESULT_COUNT] == len(outcome.hits) > 0
    assert attrs[T.SEARCH_PROVIDER] == outcome.provider == "local"
    thinnest = min(len(" ".join(h.preview.split())) for h in outcome.hits)
    assert attrs[T.MIN_PREVIEW_CHARS] == thinnest > 0


def test_explain_stages_and_their_spans_come_from_one_table(engine, otel):
    """Each explain report the ranker writes is a stage of its table, in order, and each of
    those stages' spans was recorded for the search."""
    exporter, _ = otel
    outcome = search(engine, "run background tasks after the response", explain=True)
    reported = [s.stage for s in outcome.stages]
    assert reported == ["retrieve", "priors", "mode:default", "dedupe", "diversify"]
    table = [stage for stage in STAGES if stage.report]
    assert [s.report for s in table] == [r.removesuffix("default") for r in reported]
    recorded = {s.name for s in exporter.get_finished_spans()}
    assert {stage.span for stage in STAGES} <= recorded
    assert {stage.span for stage in STAGES} <= set(T.STAGE_SPANS)


def test_stage_spans_carry_counts_and_scores(engine, otel):
    exporter, _ = otel
    search(engine, "background tasks", top_k=3)
    spans = exporter.get_finished_spans()
    retrieve = named(spans, T.RETRIEVE)[0]
    events = {e.attributes[T.SOURCE]: e.attributes for e in retrieve.events}
    assert set(events) == {"docs", "code"}
    assert (
        sum(e[T.CANDIDATE_COUNT] for e in events.values()) == retrieve.attributes[T.CANDIDATE_COUNT]
    )
    assert retrieve.attributes[T.TOP_SCORE] == max(e[T.TOP_SCORE] for e in events.values())
    assert named(spans, T.FUSE)[0].attributes[T.FUSION_METHOD] == "max"
    assert named(spans, T.RERANK)[0].attributes[T.RANK_MODE] == "default"
    diversify = named(spans, T.DIVERSIFY)[0].attributes
    assert diversify[T.KEPT] == 3
    assert named(spans, T.BUILD_RESULTS)[0].attributes[T.RESULT_COUNT] == 3
    assert retrieve.attributes[T.CANDIDATE_LIMIT] > 0
    priors = named(spans, T.PRIORS)[0].attributes
    assert priors[T.KEPT] + priors[T.DROPPED] > 0
    assert named(spans, T.RERANK)[0].attributes[T.CANDIDATE_COUNT] > 0


def test_describers_read_stage_arguments_by_name(otel):
    exporter, _ = otel

    @T.traced("stage", T.describe_priors)
    def stage(query, *, candidates, extra=None):
        return ["dropped"]

    stage("q", candidates=[1, 2, 3])
    attributes = exporter.get_finished_spans()[0].attributes
    assert (attributes[T.KEPT], attributes[T.DROPPED]) == (3, 1)


def test_a_stage_without_the_parameter_its_describer_reads_fails_at_import():
    with pytest.raises(TypeError, match="limit"):

        @T.traced("retrieve", T.describe_retrieval)
        def renamed(snapshot, terms, weights, cap):  # 'limit' renamed: the span would lie
            return []


def test_no_span_attribute_or_event_repeats_the_query(engine, otel):
    exporter, _ = otel
    search(engine, f"background tasks {SECRET}", explain=True)
    with pytest.raises(NotFound):
        fetch(engine, location=f"tutorial/{SECRET}")
    with pytest.raises(NotFound):
        fetch(engine, location=f"{SECRET}/page")
    dumped = "".join(s.to_json() for s in exporter.get_finished_spans())
    assert "TESTSECRET" not in dumped.upper()
    assert "0123456789" not in dumped


def test_the_fetch_span_says_how_a_location_resolved(engine, otel):
    exporter, _ = otel
    exact = fetch(engine, location="tutorial/background-tasks")
    variant = fetch(engine, location="tutorial/background-tasks.md")
    with pytest.raises(NotFound):
        fetch(engine, location="tutorial/no-such-page")
    fetches = named(exporter.get_finished_spans(), T.FETCH)
    assert [f.attributes[T.RESOLUTION_RULE] for f in fetches] == ["exact", "variant", "none"]
    assert [f.attributes[T.RESOLUTION_REASON] for f in fetches] == [
        "resolved",
        "resolved",
        "not_found",
    ]
    assert fetches[0].attributes[T.FETCH_PROVIDER] == "local"
    assert fetches[0].attributes[T.FETCH_SOURCE] == "docs"
    assert fetches[0].attributes[T.DOC_VERSION] == exact.doc_version
    assert T.SEARCH_PROVIDER not in fetches[0].attributes
    assert exact.trace_id == format(fetches[0].context.trace_id, "032x")
    assert variant.trace_id == format(fetches[1].context.trace_id, "032x")
    missed = fetches[2]
    assert missed.attributes[T.FETCH_PROVIDER] == "none"
    assert missed.status.description == "NOT_FOUND"
    resolves = named(exporter.get_finished_spans(), T.RESOLVE)
    assert resolves[2].parent.span_id == missed.context.span_id
    cut = named(exporter.get_finished_spans(), T.CUT)[0]
    assert cut.attributes[T.CONTENT_KIND] == "doc"


def test_providers_are_split_on_a_shared_ambient_span(engine, otel):
    exporter, _ = otel

    async def both():
        with T.span("agent.turn"):
            await engine.search(SearchParams(query="path parameters"))
            await engine.get_content(ContentParams(location="tutorial/path-params"))

    asyncio.run(both())
    (ambient,) = named(exporter.get_finished_spans(), "agent.turn")
    assert ambient.attributes[T.SEARCH_PROVIDER] == "local"
    assert ambient.attributes[T.FETCH_PROVIDER] == "local"


def test_index_builds_are_spans(tmp_path, otel):
    exporter, _ = otel
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nAlpha.\n", encoding="utf-8")
    settings = Settings(
        sources=[SourceConfig("docs", "markdown", docs, default=True)],
        state_dir=tmp_path / "state",
        watch=False,
    )
    LocalEngine(settings, load_registry()).indexer.load_or_build()
    (build,) = named(exporter.get_finished_spans(), T.INDEX_BUILD)
    assert build.attributes[T.INDEX_DOCUMENTS] == 1
    assert build.attributes[T.INDEX_CHANGED] == 1
    assert build.attributes[T.INDEX_RESUMED] == 0
    assert build.end_time > build.start_time


def test_a_build_that_continued_a_stopped_one_says_how_many_files_it_found_done(
    tmp_path, otel, monkeypatch
):
    exporter, _ = otel
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(5):
        (docs / f"p{i}.md").write_text(f"# Page {i}\n\nText {i}.\n", encoding="utf-8")
    settings = Settings(
        sources=[SourceConfig("docs", "markdown", docs, default=True)],
        state_dir=tmp_path / "state",
        watch=False,
    )
    stop = threading.Event()

    def stop_after_two(stage: str, count: int, _stop=None) -> None:
        if count == 2:  # a shutdown arriving once two documents are indexed
            stop.set()

    monkeypatch.setattr("scriptorium.index.generation.faults.pause_counted", stop_after_two)
    with pytest.raises(BuildCancelled):
        LocalEngine(settings, load_registry(), build_stop=stop).indexer.load_or_build()
    assert not named(exporter.get_finished_spans(), T.INDEX_BUILD)
    LocalEngine(settings, load_registry()).indexer.load_or_build()
    (build,) = named(exporter.get_finished_spans(), T.INDEX_BUILD)
    assert build.attributes[T.INDEX_RESUMED] == 2
    assert build.attributes[T.INDEX_CHANGED] == 3
    assert build.attributes[T.INDEX_DOCUMENTS] == 5


# -- tracing off --------------------------------------------------------------------------------


def test_with_tracing_off_ids_are_random_and_nothing_is_recorded(engine):
    T.shutdown()
    assert not T.tracing_enabled() and not T.metrics_enabled()
    ids = {search(engine, "background tasks").trace_id for _ in range(3)}
    assert len(ids) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    with T.span("anything") as live:
        assert not live.is_recording()
    assert T.server_interceptors() == []


def test_interceptor_is_installed_only_with_tracing(otel):
    assert len(T.server_interceptors()) == 1


# -- metrics ------------------------------------------------------------------------------------


def test_searches_and_fetches_are_counted_by_source_and_outcome(engine, otel):
    _, reader = otel
    search(engine, "background tasks")
    search(engine, "zzzyxq")
    search(engine, "path parameters", sources=("docs",))
    fetch(engine, location="tutorial/query-params")
    with pytest.raises(NotFound):
        fetch(engine, location="tutorial/nothing-here")
    hit = search(engine, "background tasks").hits[0]
    fetch(engine, ref_id=hit.ref_id)
    data = points(reader)
    searches = {
        (p.attributes["source"], p.attributes["outcome"]): p.value for p in data[T.SEARCHES]
    }
    assert searches == {("all", "ok"): 2, ("all", "empty"): 1, ("docs", "ok"): 1}
    fetches = {(p.attributes["source"], p.attributes["outcome"]): p.value for p in data[T.FETCHES]}
    expected = {("docs", "ok"): 1, ("unknown", "not_found"): 1}
    expected[(hit.source, "ok")] = expected.get((hit.source, "ok"), 0) + 1
    assert fetches == expected


def test_rpc_latency_is_recorded_per_method_and_status(engine, otel):
    _, reader = otel

    class Context:
        async def abort_with_status(self, status):
            raise grpc.aio.AbortError()

    servicer = RetrievalServicer(engine)
    asyncio.run(servicer.Search(pb.SearchRequest(query="background tasks"), Context()))
    with pytest.raises(grpc.aio.AbortError):
        asyncio.run(servicer.GetContent(pb.GetContentRequest(location="nowhere"), Context()))
    histogram = {
        (p.attributes["rpc.method"], p.attributes["rpc.grpc.status_code"]): p
        for p in points(reader)[T.RPC_DURATION]
    }
    assert set(histogram) == {("Search", 0), ("GetContent", grpc.StatusCode.NOT_FOUND.value[0])}
    search_point = histogram[("Search", 0)]
    assert search_point.count == 1
    assert 0 < search_point.sum < 5
    assert list(search_point.explicit_bounds) == list(T.RPC_BUCKETS)


def test_index_gauges_report_every_source(engine, otel):
    _, reader = otel
    T.observe_engine(engine)
    data = points(reader)
    reports = {r.name: r for r in engine.list_sources()}
    documents = {p.attributes["source"]: p.value for p in data[T.GAUGE_DOCUMENTS]}
    assert documents == {name: r.document_count for name, r in reports.items()}
    blocks = {p.attributes["source"]: p.value for p in data[T.GAUGE_BLOCKS]}
    assert blocks == {name: r.block_count for name, r in reports.items()}
    assert all(p.value > 0 for p in data[T.GAUGE_BYTES])
    assert {p.attributes["source"] for p in data[T.GAUGE_STALENESS]} == set(reports)


# -- lineage ------------------------------------------------------------------------------------


def test_every_result_carries_its_lineage(engine):
    outcome = search(engine, "background tasks thread", explain=True, top_k=8)
    assert outcome.understood is not None
    assert outcome.understood.term_count == len(outcome.understood.terms) > 0
    for hit in outcome.hits:
        assert hit.scores.lexical > 0 and hit.scores.fused > 0 and hit.scores.rerank > 0
        assert hit.reasons and hit.reasons[0].name == "bm25"
        assert hit.source in ("docs", "code") and hit.source_class == "product"
        assert re.fullmatch(r"[0-9a-f]{16}", hit.doc_version)
        assert hit.parse_confidence == 1.0
    old = [h for h in outcome.hits if h.location.startswith("tutorial/old-background")]
    assert old and old[0].superseded_by == "tutorial/background-tasks"
    assert old[0].effective_to is not None
    assert {r.name for r in old[0].reasons} >= {"superseded", "expired"}


def test_explain_reports_what_each_stage_dropped_and_why(engine):
    outcome = search(engine, "background tasks", explain=True, top_k=2)
    stages = {s.stage: s for s in outcome.stages}
    assert [s.stage for s in outcome.stages][:3] == ["retrieve", "priors", "mode:default"]
    diversify = stages["diversify"]
    assert diversify.kept == len(outcome.hits) == 2
    kept = {h.location for h in outcome.hits}
    assert diversify.drops and not kept & {d.location for d in diversify.drops}
    assert any("below the top 2" in d.why for d in diversify.drops)
    for drop in diversify.drops:
        assert decode_ref(drop.ref_id).source in ("docs", "code")


def test_as_of_drops_name_the_document(engine):
    outcome = search(engine, "background tasks thread pool", explain=True, as_of=_moment())
    priors = next(s for s in outcome.stages if s.stage == "priors")
    assert priors.dropped == 1
    assert priors.drops[0].location == "tutorial/old-background.md"
    assert priors.drops[0].why == "no longer effective at as_of"


def _moment():
    from datetime import UTC, datetime

    return datetime(2024, 1, 1, tzinfo=UTC)


def test_backfilled_candidates_are_not_reported_as_dropped(engine):
    doc = engine.indexer.snapshot.docs[("docs", "tutorial/background-tasks.md")]
    blocks = [b for b in doc.blocks if b.anchor][:6]
    pipeline = Pipeline(RankingSettings(max_per_document=2), engine.indexer.lines_of)
    cands = [Candidate("docs", doc, b, 10.0 - i) for i, b in enumerate(blocks)]
    query = Query(text="background", terms=("background",), top_k=4, explain=True)
    window, duplicates, dropped = pipeline.order(
        cands, 4, lambda c: f"{c.document.path}#{c.block.anchor}", False, query
    )
    assert len(window) == 4 and not duplicates
    kept = {c.location for c in window}
    assert not kept & {d.location for d in dropped}
    assert len(dropped) == len(blocks) - 4


def test_the_cap_is_named_only_for_blocks_that_would_have_made_the_cut(engine):
    # Three blocks of one document ahead of another document's: with top_k 1 the third block
    # of the first document is capped, but it would not have been shown anyway.
    doc = engine.indexer.snapshot.docs[("docs", "tutorial/background-tasks.md")]
    other = engine.indexer.snapshot.docs[("docs", "tutorial/old-background.md")]
    blocks = [b for b in doc.blocks if b.anchor][:3]
    cands = [Candidate("docs", doc, b, 10.0 - i) for i, b in enumerate(blocks)]
    cands.append(Candidate("docs", other, other.blocks[0], 5.0))
    pipeline = Pipeline(RankingSettings(max_per_document=2), engine.indexer.lines_of)
    location = lambda c: f"{c.document.path}#{c.block.anchor}"  # noqa: E731
    query = Query(text="background", terms=("background",), top_k=1, explain=True)
    window, _, dropped = pipeline.order(cands, 1, location, False, query)
    assert [c.block for c in window] == [blocks[0]]
    whys = {d.location: d.why for d in dropped}
    assert whys[location(cands[2])] == "ranked below the top 1 (score 8.0000)"
    assert not any("blocks from one document" in why for why in whys.values())
    # With room for every block, the third one is missing because of the cap, and says so.
    query = Query(text="background", terms=("background",), top_k=3, explain=True)
    window, _, dropped = pipeline.order(
        [
            Candidate("docs", c.document, c.block, s)
            for c, s in zip(cands, (10, 9, 8, 7.5), strict=True)
        ],
        3,
        location,
        False,
        query,
    )
    assert [d.why for d in dropped] == ["more than 2 blocks from one document"]


# -- configuration ------------------------------------------------------------------------------


def test_telemetry_settings_are_validated():
    assert parse_telemetry({}) == TelemetrySettings()
    parsed = parse_telemetry(
        {"exporter": "OTLP-HTTP", "endpoint": "http://collector:4318", "sample_ratio": 0.5}
    )
    assert parsed.exporter == "otlp-http" and parsed.tracing and not parsed.metrics
    for bad, message in (
        ({"exporter": "jaeger"}, "exporter must be one of"),
        ({"colour": "blue"}, "unknown key"),
        ({"sample_ratio": 2}, "sample_ratio"),
        ({"headers": {"x": 1}}, "headers"),
        ({"metrics_interval_seconds": 0}, "greater than 0"),
    ):
        with pytest.raises(ConfigError, match=message):
            parse_telemetry(bad)


def test_otlp_http_endpoints_get_their_signal_path():
    assert T.http_endpoint("", "traces") is None
    assert T.http_endpoint("http://c:4318", "traces") == "http://c:4318/v1/traces"
    assert T.http_endpoint("http://c:4318/v1/traces", "metrics") == "http://c:4318/v1/metrics"


def test_unreachable_collector_never_blocks_the_caller(engine, tmp_path: Path, monkeypatch):
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    settings = TelemetrySettings(
        exporter="otlp-grpc",
        metrics_exporter="otlp-http",
        endpoint="http://127.0.0.1:9",
        export_timeout_seconds=0.5,
    )
    # Spans go to the real exporter for that collector, but each export is first held, as a
    # collector that never answers would hold it: the search must return meanwhile.
    released = threading.Event()
    made = []
    from scriptorium.telemetry import setup as telemetry_setup

    real = telemetry_setup._span_exporter

    class Held(SpanExporter):
        def __init__(self, inner) -> None:
            self.inner = inner

        def export(self, spans):
            released.wait(120)
            return self.inner.export(spans) if spans else SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            self.inner.shutdown()

    def held_exporter(s: TelemetrySettings) -> Held:
        made.append(real(s))
        return Held(made[-1])

    monkeypatch.setattr(telemetry_setup, "_span_exporter", held_exporter)
    T.configure(settings)
    with ThreadPoolExecutor(1) as pool:
        try:
            outcome = pool.submit(search, engine, "background tasks").result(60)
            assert re.fullmatch(r"[0-9a-f]{32}", outcome.trace_id)
        finally:
            released.set()
            T.shutdown()
    # Each export to the missing collector gives up after the configured timeout, so the
    # shutdown's last flush ends too.
    assert [e._timeout for e in made] == [0.5]
