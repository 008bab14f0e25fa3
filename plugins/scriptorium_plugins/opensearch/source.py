"""The ``opensearch`` source: blocks pushed to a search cluster, searched there for recall.

A search asks the cluster (through the alias, so one whole generation) for a wide window of
blocks scored on our own pre-analysed tokens with the daemon's field weights, with document
frequencies taken across the whole generation (``dfs_query_then_fetch`` and one aggregation),
and hands the window to the daemon's pipeline like any candidates: same stages, priors and
modes. Pages are read back whole (and kept per generation, which never changes), so hits and
fetches carry the refs, locations and versions a local source would give. A cluster that cannot
be reached cools down: the chain falls through to the next provider, and the source reports
``failed`` with the reason until a call succeeds again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from cachetools import LRUCache
from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as ClusterConnectionError
from opensearchpy.exceptions import ConnectionTimeout, NotFoundError, TransportError

from scriptorium.plugin import (
    DEFAULT_COOLDOWN_SECONDS,
    Candidate,
    ContentOutcome,
    Cooldown,
    Corpus,
    FetchMiss,
    FetchRequest,
    FetchResult,
    Query,
    Reason,
    RemotePage,
    RemoteSource,
    Resolution,
    Scores,
    SearchBatch,
    SourceConfig,
    SourceContext,
    SourceReport,
    is_listing,
    normalize_location,
    option_number,
    skew,
)
from scriptorium_plugins.opensearch import fetching, pushing
from scriptorium_plugins.opensearch.connection import client_for, security_options
from scriptorium_plugins.opensearch.documents import (
    BLOCK,
    PAGE,
    TOKEN_FIELDS,
    corpus_of,
    page_id,
    page_parts,
)

log = logging.getLogger(__name__)
# The client logs every request, and a traceback per failed node; ours says it once.
logging.getLogger("opensearch").setLevel(logging.ERROR)

PAGE_CACHE = 4096
DF_CACHE = 65536
# Pauses between the tries of a call that met shards moving after a node left.
TRANSIENT_PAUSES = (0.2, 0.5, 1.0, 2.0)


def unqualify(name: str, location: str) -> str:
    """Our qualifier removed from a location, when it is there."""
    clean = location.strip().strip("/")
    head, sep, rest = clean.partition("/")
    return rest if head.lower() == name.lower() and sep else clean


def _matcher(query: Query, fields: list[str]) -> dict[str, Any]:
    """BM25 over ``fields`` for the query's terms, each weighed by its weight in
    ``query.weights`` as the local index weighs it (a pasted text's identifiers above its
    prose). Without weights, one match of every term: the same scores, a smaller request."""

    def match(text: str) -> dict[str, Any]:
        return {"multi_match": {"query": text, "fields": fields, "type": "most_fields"}}

    weights = query.weights
    if not weights or all(w == 1.0 for w in weights):
        return match(" ".join(query.terms))
    clauses = []
    for index, term in enumerate(query.terms):
        clause = match(term)
        weight = weights[index] if index < len(weights) else 1.0
        if weight != 1.0:
            clause["multi_match"]["boost"] = weight
        clauses.append(clause)
    return {"bool": {"should": clauses, "minimum_should_match": 1}}


class OpenSearchSource(RemoteSource):
    """Blocks of one tree in an OpenSearch cluster, read through ``alias``."""

    kind = "opensearch"

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        super().__init__(config, context)
        where = f"source {config.name!r}"
        hosts = config.options.get("hosts")
        if isinstance(hosts, str):
            hosts = [hosts]
        if not hosts or not all(isinstance(h, str) and h.strip() for h in hosts):
            raise ValueError(f"{where}: hosts (host:port of the cluster's nodes) is required")
        self.hosts = [h.strip() for h in hosts]
        alias = config.options.get("alias") or f"scriptorium-{config.name}"
        if not isinstance(alias, str) or alias != alias.lower() or "*" in alias:
            raise ValueError(f"{where}: alias must be a lowercase index name")
        self.alias = alias
        self.reads = str(config.options.get("reads") or "markdown")
        self.corpus = Corpus.CODE if self.reads == "code" else Corpus.DOCS
        self.timeout = option_number(config, "timeout_seconds", 10.0, minimum=0.1)
        self.security = security_options(config)
        self.window_size = int(option_number(config, "window", 100, minimum=1))
        self.cooldown = Cooldown(
            option_number(config, "retry_cooldown_seconds", DEFAULT_COOLDOWN_SECONDS, minimum=0)
        )
        self._client: OpenSearch | None = None
        self._pages: LRUCache = LRUCache(PAGE_CACHE)
        self._df: LRUCache = LRUCache(DF_CACHE)
        self._totals: dict[str, int] = {}
        self._counts: dict[str, tuple[int, int]] = {}
        self._shards: dict[str, int] = {}
        self._serving = ""
        self._used = False

    @property
    def client(self) -> OpenSearch:
        if self._client is None:
            self._client = client_for(self.hosts, self.timeout, self.security)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await asyncio.to_thread(client.close)

    # -- failures ------------------------------------------------------------------------------

    def _unreachable(self, exc: BaseException) -> str | None:
        if isinstance(exc, ClusterConnectionError | ConnectionTimeout):
            return f"cluster unreachable ({type(exc).__name__})"
        status = getattr(exc, "status_code", None) if isinstance(exc, TransportError) else None
        if isinstance(status, int) and (status >= 500 or status == 429):
            return f"cluster answered {status} ({exc.error})"
        return None

    def _failed(self, exc: BaseException) -> str:
        reason = self._unreachable(exc)
        if reason is None:
            return f"{type(exc).__name__}"
        self.cooldown.fail(reason)
        log.warning(
            "opensearch source %s: %s; skipped for %.0fs", self.name, reason, self.cooldown.seconds
        )
        return reason

    def _skipped(self) -> str:
        return f"{self.cooldown.last_error}; retrying in {self.cooldown.remaining:.0f}s"

    def _ok(self) -> None:
        self._used = True
        self.cooldown.succeed()

    # -- search --------------------------------------------------------------------------------

    def covers(self, query: Query) -> bool:
        if query.sources and self.name not in query.sources:
            return False
        return self.corpus in query.corpora

    async def search(self, query: Query) -> SearchBatch:
        if not self.covers(query) or is_listing(query) or not query.terms:
            return SearchBatch()
        if self.cooldown.blocked:
            return SearchBatch(failures=[(self.name, self._skipped())])
        try:
            candidates = await asyncio.to_thread(self._search, query)
        except asyncio.CancelledError:
            raise
        except NotFoundError:  # nothing pushed yet: an empty answer, not an outage
            self._ok()
            return SearchBatch()
        except Exception as exc:
            return SearchBatch(failures=[(self.name, f"search failed: {self._failed(exc)}")])
        self._ok()
        return SearchBatch(candidates)

    def _request(self, query: Query, limit: int) -> dict[str, Any]:
        weights = self.ranking.weights
        # One source holds one corpus, so its path boost is that corpus's (``docs_path_weight``
        # for documentation), as the local index weighs it.
        boosts = (weights.body, weights.heading, weights.path_for(self.corpus))
        fields = [f"{name}^{boost}" for name, boost in zip(TOKEN_FIELDS, boosts, strict=True)]
        body: dict[str, Any] = {
            "size": limit,
            "track_total_hits": False,
            "query": {
                "bool": {
                    "must": [_matcher(query, fields)],
                    "filter": [{"term": {"type": BLOCK}}],
                }
            },
            # The re-rank needs only which block: read from doc values, so the fetch phase
            # never decompresses a block's stored source (its text and tokens).
            "_source": False,
            "docvalue_fields": ["path", "position"],
        }
        unknown = self._unknown_terms(query)
        if unknown:
            # Document frequencies over the whole generation, for the pipeline's coverage
            # judgement (cluster-wide, not window-local); a generation never changes, so each
            # term is counted once per generation.
            frequencies = {
                f"{term} {name}": {"match": {name: term}}
                for term in unknown
                for name in TOKEN_FIELDS[:2]
            }
            body["aggs"] = {
                "all": {
                    "global": {},
                    "aggs": {
                        "blocks": {
                            "filter": {"term": {"type": BLOCK}},
                            "aggs": {"df": {"filters": {"filters": frequencies}}},
                        },
                        "pages": {"filter": {"term": {"type": PAGE}}},
                    },
                }
            }
        return body

    def _unknown_terms(self, query: Query) -> list[str]:
        """Query terms whose frequency in the serving generation is not known yet."""
        index = self._serving
        terms = list(dict.fromkeys(query.terms))
        if not index or index not in self._totals:
            return terms
        return [t for t in terms if (index, t) not in self._df]

    def _transient(self, call: Callable[[], Any]) -> Any:
        """``call()``, tried again a few times when the cluster is moving shards (a node just
        left: a shard answers 5xx until its replica is promoted). Each try is bounded by the
        client's timeout; the pause between tries is short and grows."""
        for pause in (*TRANSIENT_PAUSES, None):
            try:
                return call()
            except NotFoundError:
                raise
            except TransportError as exc:
                # An unreachable node the client has already skipped; a cluster that answers
                # 5xx is moving shards.
                status = getattr(exc, "status_code", None)
                transient = isinstance(status, int) and status >= 500
                if pause is None or not transient:
                    raise
                log.info("opensearch source %s: retrying after %s", self.name, exc.error)
                time.sleep(pause)
        raise AssertionError("unreachable")

    def _search(self, query: Query) -> list[Candidate]:
        limit = max(self.window_size, self.ranking.candidate_limit(query.top_k))
        started = time.perf_counter()
        # Term statistics gathered across shards first (one more round trip per shard) only
        # where a generation has several: with one shard its own statistics are global.
        shards = self._shards.get(self._serving, 0)
        search_type = "query_then_fetch" if shards == 1 else "dfs_query_then_fetch"
        reply = self._transient(
            lambda: self.client.search(
                index=self.alias,
                body=self._request(query, limit),
                params={"search_type": search_type, "allow_partial_search_results": "false"},
            )
        )
        searched = time.perf_counter()
        hits = reply["hits"]["hits"]
        index = hits[0]["_index"] if hits else self._serving
        if hits:
            self._shards[index] = int(reply.get("_shards", {}).get("total", 0))
        self._note_stats(index, reply.get("aggregations", {}))
        pages = self._pages_of(index, {h["fields"]["path"][0] for h in hits})
        log.debug(
            "opensearch source %s: %d hits; search %.1f ms (cluster %s ms), pages %.1f ms",
            self.name,
            len(hits),
            (searched - started) * 1000,
            reply.get("took"),
            (time.perf_counter() - searched) * 1000,
        )
        out: list[Candidate] = []
        for hit in hits:
            found = pages.get(hit["fields"]["path"][0])
            position = int(hit["fields"]["position"][0])
            if found is None or position >= len(found.blocks):
                continue
            if found.corpus not in query.corpora:
                continue
            score = float(hit["_score"]) * found.meta.boost
            cand = Candidate(
                source=self.name,
                document=found,
                block=found.blocks[position],
                score=score,
                scores=Scores(lexical=score),
            )
            if query.explain:
                cand.reasons.append(Reason("bm25", round(float(hit["_score"]), 4), "cluster"))
            out.append(cand)
        return out

    def _note_stats(self, index: str, aggs: dict[str, Any]) -> None:
        if not index:
            return
        if index != self._serving:
            self._serving = index
        found = aggs.get("all", {})
        if not found:
            return
        blocks = int(found.get("blocks", {}).get("doc_count", 0))
        self._totals[index] = blocks
        self._counts[index] = (int(found.get("pages", {}).get("doc_count", 0)), blocks)
        totals: dict[str, int] = {}
        for key, bucket in found.get("blocks", {}).get("df", {}).get("buckets", {}).items():
            term = key.rpartition(" ")[0]
            totals[term] = totals.get(term, 0) + int(bucket.get("doc_count", 0))
        for term, total in totals.items():
            self._df[(index, term)] = total

    def term_stats(self, cand: Candidate) -> tuple[Callable[[str], int] | None, int]:
        doc = cand.document
        index = doc.revision if isinstance(doc, RemotePage) else self._serving
        total = self._totals.get(index, 0)
        if not total:
            return None, 0
        return (lambda term: self._df.get((index, term), 0)), total

    def _pages_of(self, index: str, paths: set[str]) -> dict[str, RemotePage]:
        """The pages behind a window, read once per generation (a generation never changes)."""
        found = {p: self._pages[(index, p)] for p in paths if (index, p) in self._pages}
        missing = sorted(paths - set(found))
        if missing:
            ids = [page_id(p) for p in missing]
            reply = self._transient(lambda: self.client.mget(index=index, body={"ids": ids}))
            for item in reply["docs"]:
                if item.get("found"):
                    page = self._page(index, item["_source"])
                    self._pages[(index, page.path)] = page
                    found[page.path] = page
        return found

    def _page(self, index: str, stored: dict[str, Any]) -> RemotePage:
        document, blocks, meta = page_parts(stored)
        location = stored["page"] if self.is_default else f"{self.name}/{stored['page']}"
        return RemotePage(
            source=self.name,
            path=stored["path"],
            text=document["text"],
            corpus=corpus_of(stored),
            content_hash=stored["content_hash"],
            meta=meta,
            blocks=blocks,
            language=document.get("language"),
            front_matter_lines=int(document.get("front_matter_lines") or 0),
            preview_from_body=bool(document.get("preview_from_body")),
            url=self.url_for(stored["path"]),
            location=location,
            revision=index,
            version=stored["content_hash"],
        )

    def page_location(self, path: str) -> str:
        return path

    def location_of(self, cand: Candidate) -> str:
        """As a local source of the same kind locates it: the page plus the block's anchor."""
        doc, block = cand.document, cand.block
        page = doc.location if isinstance(doc, RemotePage) else doc.path
        if cand.file_level or not block.fragment:
            return page
        return f"{page}#{block.fragment}"

    # -- fetch ---------------------------------------------------------------------------------

    async def fetch(self, request: FetchRequest) -> FetchResult:
        if request.ref is None:
            normalize_location(request.location)
        if self.cooldown.blocked:
            return FetchMiss(Resolution("site_unavailable", site=self.name, detail=self._skipped()))
        try:
            found = await asyncio.to_thread(self._find, request)
        except asyncio.CancelledError:
            raise
        except NotFoundError:
            self._ok()
            return FetchMiss(Resolution("not_found", site=self.name, detail="nothing pushed yet"))
        except Exception as exc:
            return FetchMiss(
                Resolution("site_unavailable", site=self.name, detail=self._failed(exc))
            )
        self._ok()
        if found is None:
            return FetchMiss(Resolution("not_found", site=self.name, detail=f"not in {self.alias}"))
        page, fragment = found
        outcome = fetching.outcome(self, page, request, fragment)
        if isinstance(outcome, ContentOutcome):
            seen = request.seen_doc_version or (request.ref.content_hash if request.ref else "")
            outcome.revision_skew = skew(seen, (page.content_hash,))
        return outcome

    def _find(self, request: FetchRequest) -> tuple[RemotePage, str] | None:
        """The page a ref or a location names, and the fragment inside it."""
        if request.ref is not None:
            wanted = page_id(request.ref.path)
            reply = self._transient(lambda: self.client.get(index=self.alias, id=wanted))
            page = self._page(reply["_index"], reply["_source"])
            return page, ""
        location = unqualify(self.name, request.location) if not self.is_default else ""
        location = location or request.location.strip().strip("/")
        path, _, fragment = location.partition("#")
        reply = self._transient(
            lambda: self.client.search(
                index=self.alias,
                body={
                    "size": 2,
                    "query": {
                        "bool": {
                            "filter": [
                                {"term": {"type": PAGE}},
                                {
                                    "bool": {
                                        "should": [
                                            {"term": {"page": path}},
                                            {"term": {"path": path}},
                                        ]
                                    }
                                },
                            ]
                        }
                    },
                },
            )
        )
        hits = reply["hits"]["hits"]
        if not hits:
            return None
        return self._page(hits[0]["_index"], hits[0]["_source"]), fragment

    # -- status --------------------------------------------------------------------------------

    def report(self) -> SourceReport:
        if self.cooldown.last_error:
            state = "failed"
        elif self._used:
            state = "ready"
        else:
            state = "loading"
        documents, blocks = self._counts.get(self._serving, (0, 0))
        return SourceReport(
            name=self.name,
            kind=self.kind,
            state=state,
            document_count=documents,
            block_count=blocks or self._totals.get(self._serving, 0),
            generation=0,
            indexed_at=None,
            last_error=self.cooldown.last_error,
            source_class=self.source_class,
            root=",".join(self.hosts) + f"/{self.alias}",
            bytes=0,
            corpus=self.corpus,
        )

    # -- push ----------------------------------------------------------------------------------

    def push(self, build_reader: Callable[[SourceConfig], Any], workers: int = 0) -> dict[str, Any]:
        """Cut ``root`` as the local ``reads`` kind would and write it as a new generation."""
        return pushing.push_source(self, build_reader, workers)
