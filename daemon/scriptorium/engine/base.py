"""The retrieval engine: the domain façade the gRPC servicer calls.

It owns the loaded sources, the index generations and the ranking pipeline. Every method takes
and returns domain types from ``scriptorium.domain.outcomes``; failures are ``RetrievalError``s.
"""

from __future__ import annotations

from scriptorium.domain.outcomes import (
    ContentOutcome,
    ContentParams,
    FlowOutcome,
    FlowParams,
    GuideOutcome,
    GuideParams,
    RelatedOutcome,
    RelatedParams,
    SearchOutcome,
    SearchParams,
    SourceReport,
    Unimplemented,
)


class Engine:
    """Loads sources, keeps the index current, and answers retrieval calls.

    The contract the transport calls. A call an engine does not answer ends as UNIMPLEMENTED
    (a test double, or a partial engine), never as an internal error.
    """

    async def start(self) -> None:
        """Load or build the index; returns once every source is ready (or failed)."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Stop background work (watchers) and release the index."""
        raise NotImplementedError

    @property
    def ready(self) -> bool:
        raise NotImplementedError

    @property
    def current(self) -> bool:
        """Whether answers reflect the roots as found at start-up: a daemon serves an older
        generation at once and catches up after, so a client that must not score the older
        tree waits for this (health ``scriptorium.v1.current``). An engine that does not
        catch up is current once ready."""
        return self.ready

    def unserviceable(self) -> str | None:
        """Why no call can be answered now (every source failed), or None when some can.

        Health reports NOT_SERVING while this says why. Asked every second, so it must be
        cheap; an engine that cannot tell answers None.
        """
        return None

    async def search(self, params: SearchParams) -> SearchOutcome:
        raise Unimplemented("this engine does not answer Search")

    async def get_content(self, params: ContentParams) -> ContentOutcome:
        raise Unimplemented("this engine does not answer GetContent")

    async def expand_related(self, params: RelatedParams) -> RelatedOutcome:
        raise Unimplemented("this engine does not answer ExpandRelated")

    async def summarize_flow(self, params: FlowParams) -> FlowOutcome:
        raise Unimplemented("this engine does not answer SummarizeFlow")

    async def guide_implementation(self, params: GuideParams) -> GuideOutcome:
        raise Unimplemented("this engine does not answer GuideImplementation")

    def list_sources(self) -> list[SourceReport]:
        raise NotImplementedError
