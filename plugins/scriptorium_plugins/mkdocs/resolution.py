"""Location resolution across MkDocs sites: which site, which page, and why.

Within a site the rules run in order, case-insensitively, over canonical pages only:
``exact``; ``variant`` (a trailing ``.md``/``.html``/``.htm`` or ``/index`` stripped, a bare
``index`` meaning the root); ``moved`` (a page declared the old path in its ``moved_from``
front matter, or a redirect stub pointed at it: an explicit statement beats a guess);
``canonical-leaf`` (the last segment names exactly one page; a leaf several pages share is a
miss, never a guess, whose candidates are those pages).

Across sites a site-qualified location goes to that site (retrying the unstripped path, for a
directory named like a site); a bare one tries the default site first, then every other loaded
site, reporting several matches as ambiguous instead of picking one. Pure functions over loaded
page tables: the network stays in the source.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scriptorium_plugins.mkdocs.siteindex import split_location

_VARIANT_SUFFIXES = (".md", ".html", ".htm")

RESOLVED, NOT_FOUND, UNKNOWN_SITE, AMBIGUOUS = "resolved", "not_found", "unknown_site", "ambiguous"
SITE_UNAVAILABLE, FETCH_FAILED = "site_unavailable", "fetch_failed"
EXACT, VARIANT, LEAF, MOVED, NONE = "exact", "variant", "canonical-leaf", "moved", "none"


def qualify(site: str, path: str, default_site: str) -> str:
    """The location callers see: bare on the default site, ``site/path`` elsewhere.

    A site's root page is the bare site name; the default site's root is ``index`` (the
    variant rule maps it back), since an empty location cannot be passed back.
    """
    if site == default_site:
        return path or "index"
    return f"{site}/{path}" if path else site


def strip_variant(path: str) -> str:
    """The variant form of a path: without a page suffix or trailing ``/index``."""
    lowered = path.lower()
    for suffix in _VARIANT_SUFFIXES:
        if lowered.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if path.lower() == "index":
        return ""
    if path.lower().endswith("/index"):
        return path[: -len("/index")]
    return path


@dataclass(slots=True)
class SiteOutcome:
    """What one site makes of a path: resolved to a page, or ambiguous between pages."""

    reason: str
    rule: str
    page: str = ""
    candidates: list[str] = field(default_factory=list)  # canonical page paths


class SitePages:
    """Lookup tables over one site's canonical pages."""

    def __init__(self, pages: Iterable[str], moved: Mapping[str, Iterable[str]] = ()) -> None:
        self.exact: dict[str, list[str]] = defaultdict(list)
        self.leaf: dict[str, list[str]] = defaultdict(list)
        self.moved: dict[str, list[str]] = defaultdict(list)
        self.top_dirs: set[str] = set()
        for page in pages:
            self.exact[page.lower()].append(page)
            self.leaf[page.rsplit("/", 1)[-1].lower()].append(page)
            if "/" in page:
                self.top_dirs.add(page.split("/", 1)[0].lower())
        for page, olds in dict(moved).items():
            for old in olds:
                self.add_moved(old, page)

    def add_moved(self, old: str, page: str) -> None:
        """Record that ``old`` now lives at ``page`` (from front matter or a redirect)."""
        key = strip_variant(old.strip().strip("/")).lower()
        if page.lower() in self.exact and page not in self.moved[key]:
            self.moved[key].append(page)

    def has(self, page: str) -> bool:
        return page.lower() in self.exact

    def resolve(self, path: str) -> SiteOutcome | None:
        key = path.lower()
        hit = self.exact.get(key)
        if hit:
            return _pick(hit, path, EXACT)
        variant = strip_variant(path)
        if variant.lower() != key:
            hit = self.exact.get(variant.lower())
            if hit:
                return _pick(hit, variant, VARIANT)
        hit = self.moved.get(variant.lower())
        if hit:
            return _pick(hit, variant, MOVED)
        leaf = variant.rsplit("/", 1)[-1].lower()
        if leaf:
            hit = self.leaf.get(leaf)
            if hit and len(hit) == 1:
                return SiteOutcome(RESOLVED, LEAF, hit[0])
        return None

    def leaf_pages(self, path: str) -> list[str]:
        """The pages sharing the path's last segment, when several do (the leaf rule's miss)."""
        leaf = strip_variant(path).rsplit("/", 1)[-1].lower()
        hit = self.leaf.get(leaf, []) if leaf else []
        return list(hit) if len(hit) > 1 else []


def _pick(pages: list[str], wanted: str, rule: str) -> SiteOutcome:
    if len(pages) == 1:
        return SiteOutcome(RESOLVED, rule, pages[0])
    same_case = [p for p in pages if p == wanted]
    if len(same_case) == 1:
        return SiteOutcome(RESOLVED, rule, same_case[0])
    return SiteOutcome(AMBIGUOUS, rule, candidates=sorted(pages))


@dataclass(slots=True)
class Decision:
    """The outcome of site selection, in the fixed reason and rule vocabulary."""

    reason: str
    rule: str = NONE
    site: str = ""
    page: str = ""
    candidates: list[str] = field(default_factory=list)  # qualified locations
    detail: str = ""


@dataclass(slots=True)
class SiteView:
    """The sites as resolution sees them: pages of loaded sites, None for ones that failed."""

    default_site: str
    sites: dict[str, SitePages | None]  # configured order; None = could not load

    def named(self, segment: str) -> str | None:
        wanted = segment.lower()
        return next((s for s in self.sites if s.lower() == wanted), None)

    def qualify(self, site: str, page: str) -> str:
        return qualify(site, page, self.default_site)


def normalize_path(location: str) -> str:
    """Surrounding slashes trimmed and any ``#fragment`` dropped."""
    return location.partition("#")[0].strip().strip("/")


def select(location: str, view: SiteView) -> Decision:
    """Site selection over the loaded sites (see the module docstring for the order)."""
    path = normalize_path(location)
    segments = path.split("/") if path else [""]
    named = view.named(segments[0]) if segments[0] else None
    if named is not None:
        return _in_named_site(path, segments, named, view)
    default_down = False
    default_pages = view.sites.get(view.default_site)
    if default_pages is None:
        default_down = True
    else:
        outcome = default_pages.resolve(path)
        if outcome is not None:
            return _decide(view, view.default_site, outcome)
    found: list[tuple[str, SiteOutcome]] = []
    for site, pages in view.sites.items():
        if site == view.default_site or pages is None:
            continue
        outcome = pages.resolve(path)
        if outcome is not None:
            found.append((site, outcome))
    if len(found) == 1:
        return _decide(view, *found[0])
    if len(found) > 1:
        candidates: list[str] = []
        for site, outcome in found:
            if outcome.reason == RESOLVED:
                candidates.append(view.qualify(site, outcome.page))
            else:
                candidates += [view.qualify(site, p) for p in outcome.candidates]
        rules = {o.rule for _, o in found}
        return Decision(
            AMBIGUOUS,
            rules.pop() if len(rules) == 1 else NONE,
            candidates=sorted(candidates),
            detail="the location matches pages on several sites",
        )
    return _miss(path, segments, view, default_down)


def _in_named_site(path: str, segments: list[str], site: str, view: SiteView) -> Decision:
    pages = view.sites.get(site)
    if pages is None:
        return Decision(SITE_UNAVAILABLE, site=site, detail=f"site {site!r} cannot be loaded")
    rest = "/".join(segments[1:])
    outcome = pages.resolve(rest) if rest else pages.resolve("")
    if outcome is None and rest:
        outcome = pages.resolve(path)
    if outcome is None:
        shared = _shared_leaf(rest or path, [site], view)
        if shared is not None:
            shared.site = site
            return shared
        return Decision(NOT_FOUND, site=site, detail=f"no page at that location on {site!r}")
    return _decide(view, site, outcome)


def _shared_leaf(path: str, sites: list[str], view: SiteView) -> Decision | None:
    """A not_found naming the pages that share the path's last segment; None when none do.

    Still a miss (the leaf rule never guesses), but the caller gets the pages to choose from.
    """
    candidates = [
        view.qualify(site, page)
        for site in sites
        if (pages := view.sites.get(site)) is not None
        for page in pages.leaf_pages(path)
    ]
    if not candidates:
        return None
    leaf = strip_variant(path).rsplit("/", 1)[-1].lower()
    return Decision(
        NOT_FOUND,
        candidates=sorted(candidates),
        detail=f"the leaf {leaf!r} names {len(candidates)} pages; pass one of the candidates",
    )


def _decide(view: SiteView, site: str, outcome: SiteOutcome) -> Decision:
    if outcome.reason == AMBIGUOUS:
        return Decision(
            AMBIGUOUS,
            outcome.rule,
            site=site,
            candidates=[view.qualify(site, p) for p in outcome.candidates],
            detail=f"several pages on {site!r} match",
        )
    return Decision(RESOLVED, outcome.rule, site=site, page=outcome.page)


def looks_like_site(path: str, segments: list[str], view: SiteView) -> bool:
    """The unknown-site heuristic: a hyphenated leading segment that is no known directory."""
    head = segments[0].lower()
    if "/" not in path or "-" not in head:
        return False
    return not any(pages is not None and head in pages.top_dirs for pages in view.sites.values())


def _miss(path: str, segments: list[str], view: SiteView, default_down: bool) -> Decision:
    if looks_like_site(path, segments, view):
        return Decision(UNKNOWN_SITE, detail=f"no site is named {segments[0]!r}")
    if default_down:
        return Decision(
            SITE_UNAVAILABLE,
            site=view.default_site,
            detail=f"the default site {view.default_site!r} cannot be loaded, so the location"
            " was never checked against it",
        )
    shared = _shared_leaf(path, list(view.sites), view)
    if shared is not None:
        return shared
    return Decision(NOT_FOUND, detail="no page at that location; search to find it")


def redirect_target(url: str, base_urls: Mapping[str, str]) -> tuple[str, str] | None:
    """(site, canonical page) a redirect URL lands on, when it is under a configured site."""
    clean = url.split("?", 1)[0]
    for site, base in base_urls.items():
        prefix = base.rstrip("/") + "/"
        if clean == base.rstrip("/") or clean.startswith(prefix):
            page, _, _ = split_location(clean[len(prefix) :] if clean.startswith(prefix) else "")
            return site, page
    return None
