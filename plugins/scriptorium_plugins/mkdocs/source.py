"""The ``mkdocs`` source: published MkDocs sites under one origin, searched and fetched live.

Kept whole past 500 lines: nearly all of it is the one ``MkDocsSource`` class, whose search and
fetch share its per-site caches and cooldowns (the resolution rules are already apart).

Search reads each site's published search index (loaded lazily, concurrently, cached on disk)
and offers its sections as candidates to the shared ranking pipeline. Fetch resolves a location
to one site and page (``resolution``), then serves the page's raw Markdown, or its HTML
converted to Markdown when no raw source is published.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from urllib.parse import urljoin

import httpx
from cachetools import TTLCache

from scriptorium.plugin import (
    Block,
    Candidate,
    ContentOutcome,
    Corpus,
    DocMeta,
    FetchMiss,
    FetchRequest,
    FetchResult,
    Query,
    RefKind,
    RemoteContext,
    RemotePage,
    RemoteSource,
    Resolution,
    SearchBatch,
    SourceConfig,
    SourceContext,
    SourceDocument,
    SourceReport,
    anchored_url,
    content_hash,
    content_outcome,
    cut_for_fragment,
    doc_version,
    is_listing,
    normalize_location,
    placed,
    round_robin,
    skew,
    split_lines,
)
from scriptorium_plugins.mkdocs import pages as content
from scriptorium_plugins.mkdocs.loader import (
    FAILED,
    LOADING,
    READY,
    STALE,
    LoadError,
    SiteLoader,
    SiteState,
    http_get,
)
from scriptorium_plugins.mkdocs.resolution import (
    FETCH_FAILED,
    MOVED,
    NOT_FOUND,
    RESOLVED,
    SITE_UNAVAILABLE,
    UNKNOWN_SITE,
    Decision,
    SitePages,
    SiteView,
    normalize_path,
    qualify,
    redirect_target,
    select,
    strip_variant,
)
from scriptorium_plugins.mkdocs.settings import MkDocsSettings, parse_settings
from scriptorium_plugins.mkdocs.siteindex import SiteIndex, parse_pages

log = logging.getLogger(__name__)

USER_AGENT = "scriptorium-mkdocs/1"


@dataclass(slots=True)
class FetchedPage:
    markdown: str
    url: str
    converted: bool
    retrieved: datetime
    moved_from: list[str]


class MkDocsSource(RemoteSource):
    """Published MkDocs sites (``{origin}/{site}``) as one source of documentation."""

    kind = "mkdocs"
    corpus = Corpus.DOCS

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        super().__init__(config, context)
        self.settings: MkDocsSettings = parse_settings(config, None)
        self._client_instance: httpx.AsyncClient | None = None
        self._moved: dict[str, dict[str, set[str]]] = {s: {} for s in self.settings.sites}
        self._probes: TTLCache = TTLCache(
            maxsize=2048, ttl=max(1.0, self.settings.retry_cooldown_seconds)
        )
        self._pages: TTLCache | None = (
            TTLCache(maxsize=256, ttl=self.settings.page_cache_seconds)
            if self.settings.page_cache_seconds > 0
            else None
        )
        self._states: dict[str, SiteState] = {}
        self._loader: SiteLoader | None = None
        self._configure()

    # -- wiring --------------------------------------------------------------------------------

    def bind(self, context: RemoteContext) -> None:
        super().bind(context)
        self.settings = parse_settings(self.config, context.state_dir)
        self._configure()

    def _configure(self) -> None:
        settings = self.settings
        self._states = {
            site: SiteState(site, settings.base_url(site), settings.cache_path(site))
            for site in settings.sites
        }
        self._loader = SiteLoader(
            index_url=lambda site: settings.base_url(site) + settings.search_index_path,
            build=self._build_index,
            pages_for=self._site_pages,
            client=self._client,
            cache_seconds=settings.cache_hours * 3600.0,
            cooldown_seconds=settings.retry_cooldown_seconds,
        )

    def _client(self) -> httpx.AsyncClient:
        if self._client_instance is None:
            self._client_instance = httpx.AsyncClient(
                timeout=httpx.Timeout(self.settings.timeout_seconds),
                headers={"user-agent": USER_AGENT},
                follow_redirects=True,
            )
        return self._client_instance

    async def aclose(self) -> None:
        if self._client_instance is not None:
            client, self._client_instance = self._client_instance, None
            await client.aclose()

    def _build_index(self, site: str, entries: list[object], revision: str) -> SiteIndex:
        return SiteIndex(
            source=self.name,
            site=site,
            base_url=self.settings.base_url(site),
            pages=parse_pages(entries),
            revision=revision,
            qualify=self.qualify,
            token_options=self.ranking.token_options(),
        )

    def _site_pages(self, site: str, index: SiteIndex) -> SitePages:
        return SitePages(index.pages, self._moved.get(site, {}))

    def qualify(self, site: str, page: str) -> str:
        return qualify(site, page, self.settings.default_site)

    # -- loading -------------------------------------------------------------------------------

    async def _ensure(self, site: str) -> SiteIndex | None:
        return await self._loader.ensure(self._states[site])

    async def _ensure_all(self, sites: list[str] | None = None) -> None:
        await asyncio.gather(*(self._ensure(s) for s in sites or list(self._states)))

    def _view(self) -> SiteView:
        return SiteView(
            self.settings.default_site,
            {name: state.pages for name, state in self._states.items()},
        )

    def _failures(self) -> list[tuple[str, str]]:
        out = []
        for state in self._states.values():
            if state.status == FAILED:
                out.append((self.name, f"site {state.name!r} unavailable: {state.last_error}"))
            elif state.status == STALE:
                out.append((self.name, f"site {state.name!r}: {state.last_error}"))
        return out

    # -- search --------------------------------------------------------------------------------

    async def search(self, query: Query) -> SearchBatch:
        if not self.covers(query):
            return SearchBatch()
        await self._ensure_all()
        loaded = [s.index for s in self._states.values() if s.index is not None]
        if is_listing(query):
            listing = round_robin([index.listing() for index in loaded])
            return SearchBatch(listing, self._failures(), listing=True)
        limit = self.ranking.candidate_limit(query.top_k)
        candidates: list[Candidate] = []
        for index in loaded:
            candidates += index.search(query.terms, self.ranking.weights, limit)
        return SearchBatch(candidates, self._failures())

    def term_stats(self, cand: Candidate):
        state = self._states.get(cand.document.path.split("/", 1)[0])
        if state is None or state.index is None:
            return None, 0
        return state.index.doc_freq, state.index.num_docs

    # -- fetch ---------------------------------------------------------------------------------

    async def fetch(self, request: FetchRequest) -> FetchResult:
        seen = [request.seen_doc_version]
        if request.ref is not None:
            ref = request.ref
            location = f"{ref.path}#{ref.anchor}" if ref.anchor else ref.path
            seen.append(ref.content_hash)
            requested = ""
        else:
            location = request.location
            requested = request.location
        _, fragment = normalize_location(location)
        decision = await self.resolve(location)
        if decision.reason != RESOLVED:
            return FetchMiss(self._resolution(decision, requested))
        state = self._states[decision.site]
        index = state.index
        indexed = index.documents.get(decision.page) if index else None
        if indexed is None:
            decision.reason, decision.detail = NOT_FOUND, "the page left the index meanwhile"
            return FetchMiss(self._resolution(decision, requested))
        page = await self._page(decision.site, decision.page, indexed)
        if page is None:
            decision.reason = FETCH_FAILED
            decision.detail = (
                f"{indexed.url} has no fetchable content (no raw Markdown, no usable HTML)"
            )
            return FetchMiss(self._resolution(decision, requested))
        return self._outcome(decision, requested, indexed, page, fragment, request, seen)

    async def resolve(self, location: str) -> Decision:
        """Site selection with lazy loading: only the sites a decision needs are loaded."""
        path = normalize_path(location)
        head = path.split("/", 1)[0]
        view = self._view()
        named = view.named(head) if head else None
        if named is not None:
            await self._ensure(named)
        else:
            index = await self._ensure(self.settings.default_site)
            pages = self._states[self.settings.default_site].pages
            if index is None or pages is None or pages.resolve(path) is None:
                await self._ensure_all()
        view = self._view()
        decision = select(location, view)
        if decision.reason in (NOT_FOUND, UNKNOWN_SITE, SITE_UNAVAILABLE) and (
            self.settings.probe_redirects
        ):
            moved = await self._probe_moved(path, named, view)
            if moved is not None:
                return moved
        if decision.reason == RESOLVED and decision.rule != "exact":
            log.info(
                "resolved location_chars=%d site=%s location=%s rule=%s",
                len(location),
                decision.site,
                decision.page,
                decision.rule,
            )
        return decision

    async def _probe_moved(self, path: str, named: str | None, view: SiteView) -> Decision | None:
        """Follow a redirect stub (or HTTP redirect) at the old path to a page still indexed."""
        if named is not None:
            rest = path.split("/", 1)[1] if "/" in path else ""
            plan = [(named, rest)] if rest and view.sites.get(named) is not None else []
        else:
            order = [self.settings.default_site] + [
                s for s in self.settings.sites if s != self.settings.default_site
            ]
            plan = [(s, path) for s in order if view.sites.get(s) is not None]
        for site, old in plan:
            target = await self._probe(site, strip_variant(old))
            if target is None:
                continue
            new_site, page = target
            pages = self._states[new_site].pages
            if pages is None or not pages.has(page):
                continue
            page = pages.exact[page.lower()][0]
            if new_site == site:
                self._learn_moved(site, page, [old])
            return Decision(RESOLVED, MOVED, site=new_site, page=page)
        return None

    async def _probe(self, site: str, old: str) -> tuple[str, str] | None:
        if not old:
            return None
        key = (site, old.lower())
        if key in self._probes:
            return self._probes[key]
        url = f"{self.settings.base_url(site)}/{old}/"
        target: str | None = None
        try:
            response = await http_get(self._client(), url, follow=False)
        except LoadError:
            return None  # an outage is not remembered as "no redirect"
        if response.is_redirect and response.headers.get("location"):
            target = urljoin(url, response.headers["location"])
        elif response.status_code == 200:
            text = response.text
            if content.looks_like_html(text, response.headers.get("content-type", "")):
                target = content.redirect_in_html(text, url)
        bases = {s: self.settings.base_url(s) for s in self.settings.sites}
        found = redirect_target(target, bases) if target else None
        if found is not None and found == (site, strip_variant(old)):
            found = None
        self._probes[key] = found
        return found

    def _learn_moved(self, site: str, page: str, olds: list[str]) -> None:
        known = self._moved.setdefault(site, {}).setdefault(page, set())
        known.update(olds)
        pages = self._states[site].pages
        if pages is not None:
            for old in olds:
                pages.add_moved(old, page)

    # -- page content --------------------------------------------------------------------------

    async def _page(self, site: str, page: str, indexed: RemotePage) -> FetchedPage | None:
        key = (site, page)
        if self._pages is not None and key in self._pages:
            return self._pages[key]
        fetched = await self._raw_markdown(site, page, indexed)
        if fetched is None:
            fetched = await self._converted_html(indexed)
        if fetched is None:
            return None
        if fetched.moved_from:
            self._learn_moved(site, page, fetched.moved_from)
        if self._pages is not None:
            self._pages[key] = fetched
        return fetched

    def _raw_urls(self, site: str, page: str, indexed: RemotePage) -> list[str]:
        pattern = self.settings.raw_markdown_url
        if not pattern:
            return []
        base = self.settings.base_url(site)

        def build(path: str) -> str:
            return (
                pattern.replace("{base}", base)
                .replace("{origin}", self.settings.origin)
                .replace("{site}", site)
                .replace("{path}", path)
            )

        urls = [build(page or "index")]
        if page and indexed.url.endswith("/"):
            urls.append(build(f"{page}/index"))  # a directory page's own index.md
        return urls

    async def _raw_markdown(self, site: str, page: str, indexed: RemotePage) -> FetchedPage | None:
        for url in self._raw_urls(site, page, indexed):
            try:
                response = await http_get(self._client(), url)
            except LoadError:
                continue
            if response.status_code != 200:
                continue
            text = response.text
            ctype = response.headers.get("content-type", "")
            if content.looks_like_html(text, ctype) or not content.has_content(text):
                continue
            front, _ = content.split_front_matter(text)
            return FetchedPage(text, url, False, datetime.now(UTC), content.moved_from(front))
        return None

    async def _converted_html(self, indexed: RemotePage) -> FetchedPage | None:
        try:
            response = await http_get(self._client(), indexed.url)
        except LoadError:
            return None
        if response.status_code != 200:
            return None
        markdown, meta = await asyncio.to_thread(content.html_to_markdown, response.text)
        if not content.has_content(markdown):
            return None
        front, _ = content.split_front_matter(markdown)
        moved = content.moved_from(meta) + content.moved_from(front)
        return FetchedPage(markdown, indexed.url, True, datetime.now(UTC), moved)

    def _served_document(self, site: str, indexed: RemotePage, page: FetchedPage):
        extra = {"moved_from": page.moved_from} if page.converted and page.moved_from else None
        header = {"source_url": page.url, "site": site, "converted": page.converted, "extra": extra}
        text = content.with_header(page.markdown, retrieved=page.retrieved, **header)
        # The version leaves out when the page was fetched: the same page fetched again a
        # second later (or after ``page_cache_seconds``) is the same revision.
        version_text = content.with_header(page.markdown, retrieved=None, **header)
        extractor = self.context.extractors.for_path(f"{indexed.path}.md", Corpus.DOCS)
        if extractor is not None:
            extraction = extractor.extract(f"{indexed.path}.md", text)
            blocks, meta = extraction.blocks, extraction.meta
            front_lines = extraction.front_matter_lines
        else:
            lines = split_lines(text)
            blocks = (Block(RefKind.DOC, 1, len(lines), indexed.meta.title or "", (), "", text, 0),)
            meta, front_lines = DocMeta(title=indexed.meta.title), 0
        if page.converted:
            confidence = min(meta.parse_confidence, content.CONVERTED_CONFIDENCE)
            meta = replace(meta, parse_confidence=confidence)
        return SourceDocument(
            source=self.name,
            path=indexed.path,
            text=text,
            corpus=Corpus.DOCS,
            content_hash=content_hash(version_text),
            meta=replace(meta, title=meta.title or indexed.meta.title),
            blocks=blocks,
            front_matter_lines=front_lines,
        )

    def _outcome(
        self,
        decision: Decision,
        requested: str,
        indexed: RemotePage,
        page: FetchedPage,
        fragment: str,
        request: FetchRequest,
        seen: list[str],
    ) -> ContentOutcome:
        state = self._states[decision.site]
        doc = self._served_document(decision.site, indexed, page)
        lines = split_lines(doc.text)
        cut, missing = cut_for_fragment(doc, lines, fragment, request.mode, request.max_lines)
        notes = ["converted from HTML" if page.converted else "served raw Markdown"]
        notes += [missing] if missing else []
        if state.status == STALE:
            notes.append("index served from stale cache")
        page_location = self.qualify(decision.site, decision.page)
        where = placed(cut, doc, self.name, page_location, doc.content_hash)
        resolution = Resolution(
            reason=RESOLVED,
            rule=decision.rule,
            detail="; ".join(notes),
            requested_location=requested,
            site=decision.site,
            resolved_location=page_location,
        )
        accepted = (doc.content_hash, indexed.content_hash)
        return content_outcome(
            cut,
            source=self.name,
            provider=self.name,
            location=where.location,
            requested=requested,
            url=anchored_url(indexed.url, where.url_anchor),
            total_lines=len(lines),
            doc_version=doc_version(doc),
            resolution=resolution,
            ref_id=where.ref.encode(),
            revision_skew=any(skew(v, accepted) for v in seen if v),
            source_revision=indexed.revision,
        )

    def _resolution(self, decision: Decision, requested: str) -> Resolution:
        site = decision.site
        return Resolution(
            reason=decision.reason,
            rule=decision.rule,
            candidates=list(decision.candidates),
            detail=decision.detail,
            requested_location=requested,
            site=site,
            resolved_location=self.qualify(site, decision.page) if site and decision.page else "",
        )

    # -- status --------------------------------------------------------------------------------

    def report(self) -> SourceReport:
        states = list(self._states.values())
        tried = [s for s in states if s.attempted]
        loaded = [s for s in states if s.index is not None]
        if not tried:
            state = LOADING
        elif any(s.status == STALE for s in states):
            state = STALE
        elif loaded:
            state = READY
        else:
            state = FAILED
        errors = [f"{s.name}: {s.last_error}" for s in states if s.last_error]
        newest = max((s.loaded_wall for s in loaded), default=0.0)
        oldest = min((s.loaded_wall for s in loaded), default=0.0)
        now = datetime.now(UTC).timestamp()
        return SourceReport(
            name=self.name,
            kind=self.kind,
            state=state,
            document_count=sum(s.index.page_count for s in loaded),
            block_count=sum(s.index.page_count + s.index.section_count for s in loaded),
            generation=0,
            indexed_at=datetime.fromtimestamp(newest, UTC) if newest else None,
            last_error="; ".join(errors),
            source_class=self.source_class,
            root=self.settings.origin,
            bytes=sum(s.index_bytes for s in loaded),
            corpus=self.corpus,
            staleness_seconds=round(now - oldest, 3) if oldest else 0.0,
        )

    def site_state(self, site: str) -> SiteState | None:
        """One site's load state (for status reports and tests)."""
        return self._states.get(site)
