"""The ``peer`` source: another Scriptorium daemon, asked over gRPC at request time.

The peer's search results join our ranking pipeline as candidates (retrieve, then re-rank here),
keeping the snippet and preview the peer cut; its GetContent serves fetches. Every failure
(unreachable, unauthenticated, timed out) is an empty answer, so the chain falls through, and a
failed connection is remembered for a cool-down so later calls do not pay the timeout again.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import grpc

from scriptorium.plugin import (
    DEFAULT_COOLDOWN_SECONDS,
    DEFAULT_MAX_LINES,
    Block,
    Candidate,
    ContentOutcome,
    Cooldown,
    Corpus,
    DocMeta,
    FetchMiss,
    FetchRequest,
    FetchResult,
    Query,
    Reason,
    Ref,
    RefKind,
    RemotePage,
    RemoteSource,
    Resolution,
    Scores,
    SearchBatch,
    SourceConfig,
    SourceContext,
    SourceReport,
    content_hash,
    normalize_location,
    option_number,
)
from scriptorium.plugin.unstable import resolution_from_error, wire
from scriptorium.v1 import retrieval_pb2 as pb
from scriptorium.v1 import retrieval_pb2_grpc

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 5.0
# A peer clamps top_k to this; asking for all of it leaves our pipeline room to re-rank.
PEER_TOP_K = 25
# Statuses that say "the peer cannot be used right now", as opposed to an answer about the call.
UNREACHABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
    }
)


def qualify(name: str, location: str, default: bool) -> str:
    """A peer location as our callers see it: qualified by the peer name unless it is default."""
    return location if default else f"{name}/{location}"


def unqualify(name: str, location: str) -> str:
    """The peer's own location for one of ours: our qualifier removed when present.

    A bare location is passed on as it is: the chain reaches a peer only after every provider
    before it missed, so the peer is the last place it could be.
    """
    clean = location.strip().strip("/")
    head, sep, rest = clean.partition("/")
    if head.lower() == name.lower():
        return rest if sep else ""
    return clean


def candidate_from_result(name: str, default: bool, result: pb.SearchResult) -> Candidate | None:
    """One peer result as a candidate for our pipeline (its text is its snippet and preview)."""
    try:
        kind = wire.ref_kind_from_pb(result.kind)
    except Exception:
        return None
    page, _, fragment = result.location.partition("#")
    if not page:
        return None
    start = max(1, result.start_line)
    end = max(start, result.end_line)
    body = "\n".join(part for part in (result.snippet, result.preview) if part)
    anchor = fragment if kind is RefKind.DOC else ""
    block = Block(
        kind=kind,
        start_line=start,
        end_line=end,
        title=result.title,
        section_path=tuple(result.section_path),
        anchor=anchor,
        body=body,
    )
    corpus = Corpus.CODE if kind is not RefKind.DOC else Corpus.DOCS
    meta = DocMeta(
        title=result.title or None,
        superseded_by=result.superseded_by or None,
        effective_from=wire.datetime_from_pb(result, "effective_from"),
        effective_to=wire.datetime_from_pb(result, "effective_to"),
        source_class=result.source_class or None,
        parse_confidence=result.parse_confidence or 1.0,
    )
    document = RemotePage(
        source=name,
        path=page,
        text=body,
        corpus=corpus,
        content_hash=content_hash(body),
        meta=meta,
        blocks=(block,),
        language=result.language or None,
        url=result.url.partition("#")[0],
        location=qualify(name, result.location, default),
        revision=result.source_revision,
        version=result.doc_version,
        snippet=result.snippet,
        preview=result.preview,
    )
    lexical = result.scores.lexical if result.scores.lexical > 0 else result.score
    cand = Candidate(
        source=name,
        document=document,
        block=block,
        score=lexical,
        scores=Scores(lexical=lexical),
        anchor_line=(result.anchor_line or start) if kind is RefKind.CODE else None,
    )
    cand.reasons.append(Reason("peer", round(lexical, 4), "the peer's lexical score"))
    return cand


class PeerSource(RemoteSource):
    """Another Scriptorium daemon (``target``), optionally with a bearer token and TLS."""

    kind = "peer"
    corpus = Corpus.DOCS

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        super().__init__(config, context)
        where = f"source {config.name!r}"
        target = config.options.get("target")
        if not isinstance(target, str) or not target.strip():
            raise ValueError(f"{where}: target (host:port of the peer daemon) is required")
        self.target = target.strip()
        token = config.options.get("token")
        if token is not None and (not isinstance(token, str) or not token):
            raise ValueError(f"{where}: token must be a non-empty string")
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        ca = config.options.get("tls_ca")
        if ca is not None and (not isinstance(ca, str) or not ca):
            raise ValueError(f"{where}: tls_ca must be a path to a PEM file")
        self._tls_ca = Path(ca).expanduser() if ca else None
        self.timeout = option_number(config, "timeout_seconds", DEFAULT_TIMEOUT_SECONDS)
        if self.timeout <= 0:
            raise ValueError(f"{where}: timeout_seconds must be greater than 0")
        self.cooldown = Cooldown(
            option_number(config, "retry_cooldown_seconds", DEFAULT_COOLDOWN_SECONDS, minimum=0)
        )
        self._channel: grpc.aio.Channel | None = None
        self._used = False
        self._counts: tuple[int, int] | None = None

    def covers(self, query: Query) -> bool:
        return not query.sources or self.name in query.sources

    def location_of(self, cand: Candidate) -> str:
        """The location exactly as the peer gave it (with its fragment), qualified."""
        doc = cand.document
        return doc.location if isinstance(doc, RemotePage) else super().location_of(cand)

    # -- connection ----------------------------------------------------------------------------

    def _stub(self) -> retrieval_pb2_grpc.RetrievalServiceStub:
        if self._channel is None:
            if self._tls_ca is not None:
                credentials = grpc.ssl_channel_credentials(self._tls_ca.read_bytes())
                self._channel = grpc.aio.secure_channel(self.target, credentials)
            else:
                self._channel = grpc.aio.insecure_channel(self.target)
        return retrieval_pb2_grpc.RetrievalServiceStub(self._channel)

    async def aclose(self) -> None:
        if self._channel is not None:
            channel, self._channel = self._channel, None
            await channel.close()

    def _unusable(self, exc: BaseException) -> str | None:
        """The reason a failure makes the peer unusable for a while, or None for an answer."""
        if isinstance(exc, grpc.aio.AioRpcError):
            if exc.code() in UNREACHABLE:
                return f"{exc.code().name.lower()}: {exc.details() or 'no details'}"
            return None
        if isinstance(exc, OSError | ValueError):
            return f"cannot connect: {type(exc).__name__}"
        return None

    def _note_failure(self, exc: BaseException) -> str:
        reason = self._unusable(exc) or type(exc).__name__
        if self._unusable(exc) is not None:
            self.cooldown.fail(reason)
            log.warning(
                "peer %s unusable (%s); skipped for %.0fs",
                self.name,
                reason,
                self.cooldown.seconds,
            )
        return reason

    def _skipped(self) -> str:
        return (
            f"peer unavailable ({self.cooldown.last_error}); retrying in"
            f" {self.cooldown.remaining:.0f}s"
        )

    async def _count_once(self) -> None:
        """Remember the peer's document and block counts for status reports."""
        if self._counts is not None:
            return
        try:
            reply = await self._stub().ListSources(
                pb.ListSourcesRequest(), timeout=self.timeout, metadata=self._metadata
            )
        except Exception:  # counts are a courtesy for status reports, never worth a failure
            return
        self._counts = (
            sum(s.document_count for s in reply.sources),
            sum(s.block_count for s in reply.sources),
        )

    # -- search --------------------------------------------------------------------------------

    async def search(self, query: Query) -> SearchBatch:
        if not self.covers(query):
            return SearchBatch()
        if self.cooldown.blocked:
            return SearchBatch(failures=[(self.name, self._skipped())])
        request = pb.SearchRequest(
            query=query.text,
            top_k=PEER_TOP_K,
            snippet_lines=query.snippet_lines,
            kinds=[wire.corpus_to_pb(c) for c in sorted(query.corpora)],
            surface=query.surface,
        )
        if query.as_of is not None:
            wire.datetime_to_pb(query.as_of, request.as_of)
        try:
            reply, _ = await asyncio.gather(
                self._stub().Search(request, timeout=self.timeout, metadata=self._metadata),
                self._count_once(),
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return SearchBatch(
                failures=[(self.name, f"peer search failed: {self._note_failure(exc)}")]
            )
        self._used = True
        self.cooldown.succeed()
        candidates = [
            cand
            for result in reply.results
            if (cand := candidate_from_result(self.name, self.is_default, result)) is not None
        ]
        unsure = reply.abstained and reply.abstain_reason == pb.ABSTAIN_REASON_LOW_CONFIDENCE
        return SearchBatch(candidates, confident=not unsure)

    # -- fetch ---------------------------------------------------------------------------------

    async def fetch(self, request: FetchRequest) -> FetchResult:
        requested = request.location
        if request.ref is not None:
            ref = request.ref
            if ref.kind is RefKind.CODE:
                location = f"{ref.path}#L{ref.line}"
            else:
                location = f"{ref.path}#{ref.anchor}" if ref.anchor else ref.path
            requested = ""
        else:
            normalize_location(request.location)
            location = unqualify(self.name, request.location)
            if not location:
                return FetchMiss(Resolution("not_found", detail=f"no location after {self.name!r}"))
        if self.cooldown.blocked:
            return FetchMiss(Resolution("site_unavailable", site=self.name, detail=self._skipped()))
        seen = request.seen_doc_version
        if not seen and request.ref is not None:
            seen = request.ref.content_hash
        message = pb.GetContentRequest(
            location=location,
            mode=wire.content_mode_to_pb(request.mode),
            max_lines=request.max_lines if request.max_lines != DEFAULT_MAX_LINES else 0,
            seen_doc_version=seen,
        )
        try:
            reply = await self._stub().GetContent(
                message, timeout=self.timeout, metadata=self._metadata
            )
        except asyncio.CancelledError:
            raise
        except grpc.aio.AioRpcError as exc:
            return self._fetch_error(exc)
        except Exception as exc:
            detail = self._note_failure(exc)
            return FetchMiss(Resolution("site_unavailable", site=self.name, detail=detail))
        self._used = True
        self.cooldown.succeed()
        return self._outcome(reply, requested)

    def _fetch_error(self, exc: grpc.aio.AioRpcError) -> FetchMiss:
        """A peer's refusal keeps its resolution; a peer that cannot answer cools down."""
        detail = resolution_from_error(exc)
        if detail is not None:
            resolution = wire.resolution_from_pb(detail)
            resolution.candidates = [
                qualify(self.name, c, self.is_default) for c in resolution.candidates
            ]
            resolution.site = resolution.site or self.name
            resolution.detail = f"peer {self.name}: {resolution.detail or resolution.reason}"
            return FetchMiss(resolution)
        if self._unusable(exc) is not None:
            reason = self._note_failure(exc)
            return FetchMiss(Resolution("site_unavailable", site=self.name, detail=reason))
        return FetchMiss(Resolution("not_found", site=self.name, detail=exc.details() or ""))

    def _outcome(self, reply: pb.GetContentResponse, requested: str) -> ContentOutcome:
        """The peer's answer as ours: its locations qualified by this source, its ref re-issued
        for this source (so a later fetch by ref comes back here), and this peer as provider."""
        outcome = wire.content_outcome_from_pb(reply)
        page, _, fragment = reply.location.partition("#")
        line = reply.start_line
        if outcome.kind is RefKind.CODE and fragment.upper().startswith("L"):
            digits = fragment[1:].split("-", 1)[0]
            line = int(digits) if digits.isdigit() else line
        anchor = fragment if outcome.kind is RefKind.DOC else ""
        ref = Ref(self.name, outcome.kind, page, anchor, line, reply.doc_version)
        resolution = outcome.resolution
        resolution.requested_location = requested
        resolution.resolved_location = qualify(
            self.name, resolution.resolved_location or page, self.is_default
        )
        outcome.location = qualify(self.name, reply.location, self.is_default)
        outcome.requested_location = requested
        outcome.source = self.name
        outcome.ref_id = ref.encode()
        outcome.provider = self.name
        outcome.trace_id = ""
        return outcome

    # -- status --------------------------------------------------------------------------------

    def report(self) -> SourceReport:
        if self.cooldown.last_error:
            state = "failed"
        elif self._used:
            state = "ready"
        else:
            state = "loading"
        documents, blocks = self._counts or (0, 0)
        return SourceReport(
            name=self.name,
            kind=self.kind,
            state=state,
            document_count=documents,
            block_count=blocks,
            generation=0,
            indexed_at=None,
            last_error=self.cooldown.last_error,
            source_class=self.source_class,
            root=self.target,
            bytes=0,
            corpus=self.corpus,
        )
