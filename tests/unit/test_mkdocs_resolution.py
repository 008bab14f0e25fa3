"""MkDocs location resolution: the rules within a site and site selection across sites."""

from __future__ import annotations

import pytest

from scriptorium_plugins.mkdocs.resolution import (
    SitePages,
    SiteView,
    qualify,
    redirect_target,
    select,
    strip_variant,
)

GUIDE = [
    "",
    "tutorial",
    "tutorial/first-steps",
    "tutorial/path-params",
    "tutorial/path-params-numeric-validations",
    "tutorial/dependencies",
    "tutorial/security/first-steps",
    "advanced/settings",
    "Reference/API",
    "reference/api",
]
LEAF = "path-params-numeric-validations"
DEPLOY = ["", "concepts", "https", "deploy-notes/cloud", "providers/cloud", "docker"]
REFS = ["", "https", "glossary"]


def view(**overrides) -> SiteView:
    sites = {
        "guide": SitePages(GUIDE, {"advanced/settings": ["guides/configuration/settings"]}),
        "deploy-notes": SitePages(DEPLOY),
        "ref-notes": SitePages(REFS),
        "unpublished": None,
    }
    sites.update(overrides)
    return SiteView("guide", sites)


@pytest.mark.parametrize(
    ("path", "rule", "page"),
    [
        ("tutorial/first-steps", "exact", "tutorial/first-steps"),
        ("Tutorial/First-Steps", "exact", "tutorial/first-steps"),
        ("tutorial/first-steps.md", "variant", "tutorial/first-steps"),
        ("tutorial/first-steps.html", "variant", "tutorial/first-steps"),
        ("tutorial/first-steps.htm", "variant", "tutorial/first-steps"),
        ("tutorial/dependencies/index", "variant", "tutorial/dependencies"),
        ("tutorial/dependencies/index.md", "variant", "tutorial/dependencies"),
        ("index", "variant", ""),
        ("index.html", "variant", ""),
        ("path-params-numeric-validations", "canonical-leaf", f"tutorial/{LEAF}"),
        ("old/place/settings", "canonical-leaf", "advanced/settings"),
        ("guides/configuration/settings.md", "moved", "advanced/settings"),
        ("Reference/API", "exact", "Reference/API"),
    ],
)
def test_rules_within_a_site(path: str, rule: str, page: str) -> None:
    outcome = view().sites["guide"].resolve(path)
    assert outcome is not None
    assert (outcome.reason, outcome.rule, outcome.page) == ("resolved", rule, page)


def test_a_declared_move_beats_a_leaf_guess_and_needs_a_known_page() -> None:
    pages = SitePages(["a/new-home", "b/other"], {"a/new-home": ["x/other"]})
    # The old path's leaf names an unrelated live page; the declaration wins.
    outcome = pages.resolve("x/other")
    assert (outcome.rule, outcome.page) == ("moved", "a/new-home")
    assert pages.resolve("y/other").rule == "canonical-leaf"
    pages.add_moved("old/gone", "no/such/page")
    assert pages.resolve("old/gone") is None


def test_case_variants_are_ambiguous_unless_the_case_matches() -> None:
    pages = view().sites["guide"]
    outcome = pages.resolve("REFERENCE/api.md")
    assert outcome.reason == "ambiguous"
    assert outcome.rule == "variant"
    assert outcome.candidates == ["Reference/API", "reference/api"]


def test_a_shared_leaf_is_a_miss_not_a_guess() -> None:
    assert view().sites["guide"].resolve("first-steps") is None


def test_a_shared_leaf_miss_names_the_pages_that_share_it() -> None:
    decision = select("old/first-steps.md", view())
    assert (decision.reason, decision.rule) == ("not_found", "none")
    assert decision.candidates == ["tutorial/first-steps", "tutorial/security/first-steps"]
    assert decision.detail == "the leaf 'first-steps' names 2 pages; pass one of the candidates"
    # Across sites every loaded site's pages count, site-qualified.
    decision = select("cloud", view())
    assert decision.candidates == [
        "deploy-notes/deploy-notes/cloud",
        "deploy-notes/providers/cloud",
    ]
    # On a named site only that site's.
    named = select("deploy-notes/old/cloud", view())
    assert (named.reason, named.site) == ("not_found", "deploy-notes")
    assert named.candidates == ["deploy-notes/deploy-notes/cloud", "deploy-notes/providers/cloud"]
    # A plain miss still names nothing.
    assert select("tutorial/nothing-here", view()).candidates == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a/b.md", "a/b"),
        ("a/b/index", "a/b"),
        ("a/b/index.html", "a/b"),
        ("index", ""),
        ("INDEX.HTM", ""),
        ("a/b", "a/b"),
    ],
)
def test_strip_variant(raw: str, expected: str) -> None:
    assert strip_variant(raw) == expected


def test_qualify_keeps_default_bare_and_roots_readable() -> None:
    assert qualify("guide", "tutorial/cors", "guide") == "tutorial/cors"
    assert qualify("guide", "", "guide") == "index"
    assert qualify("deploy-notes", "", "guide") == "deploy-notes"
    assert qualify("deploy-notes", "https", "guide") == "deploy-notes/https"


# -- site selection ---------------------------------------------------------------------------


def test_bare_path_resolves_on_the_default_site_first() -> None:
    decision = select("tutorial/path-params", view())
    assert (decision.reason, decision.rule, decision.site) == ("resolved", "exact", "guide")


def test_default_site_short_circuits_other_sites() -> None:
    # "https" is not on guide, but "concepts" is unique on deploy-notes only: resolved there.
    decision = select("concepts", view())
    assert (decision.reason, decision.site, decision.page) == (
        "resolved",
        "deploy-notes",
        "concepts",
    )
    both = view(guide=SitePages([*GUIDE, "about/concepts"]))
    decision = select("concepts", both)
    assert (decision.site, decision.rule) == ("guide", "canonical-leaf")


def test_fragments_and_slashes_are_dropped() -> None:
    decision = select("/tutorial/path-params/#types", view())
    assert (decision.reason, decision.page) == ("resolved", "tutorial/path-params")


def test_site_qualified_paths_go_to_their_site() -> None:
    decision = select("deploy-notes/docker", view())
    assert (decision.site, decision.page, decision.rule) == ("deploy-notes", "docker", "exact")
    root = select("deploy-notes", view())
    assert (root.site, root.page, root.reason) == ("deploy-notes", "", "resolved")
    assert select("Ref-Notes/glossary.md", view()).rule == "variant"


def test_unstripped_path_is_retried_on_the_named_site() -> None:
    decision = select("deploy-notes/cloud", view())
    assert (decision.reason, decision.site, decision.page) == (
        "resolved",
        "deploy-notes",
        "deploy-notes/cloud",
    )
    assert decision.rule == "exact"


def test_a_named_site_that_cannot_load_is_unavailable() -> None:
    decision = select("unpublished/guide/setup", view())
    assert (decision.reason, decision.site) == ("site_unavailable", "unpublished")


def test_a_miss_on_a_named_site_is_not_found() -> None:
    decision = select("deploy-notes/no-such-page", view())
    assert (decision.reason, decision.site) == ("not_found", "deploy-notes")


def test_matches_on_several_non_default_sites_are_ambiguous() -> None:
    decision = select("https", view())
    assert decision.reason == "ambiguous"
    assert decision.rule == "exact"
    assert decision.candidates == ["deploy-notes/https", "ref-notes/https"]


def test_ambiguity_inside_one_non_default_site_is_reported_as_is() -> None:
    decision = select("cloud", view())
    # "cloud" is a shared leaf on deploy-notes (a miss there), so nothing matches.
    assert decision.reason == "not_found"
    twins = view(**{"ref-notes": SitePages(["Glossary", "glossary"])})
    decision = select("GLOSSARY", twins)
    assert (decision.reason, decision.site) == ("ambiguous", "ref-notes")
    assert decision.candidates == ["ref-notes/Glossary", "ref-notes/glossary"]


def test_cross_site_candidates_merge_resolved_and_ambiguous_outcomes() -> None:
    twins = view(**{"ref-notes": SitePages(["Docker", "docker"])})
    decision = select("DOCKER", twins)
    assert decision.reason == "ambiguous"
    assert decision.candidates == ["deploy-notes/docker", "ref-notes/Docker", "ref-notes/docker"]


def test_unknown_site_needs_a_slash_a_hyphen_and_no_such_directory() -> None:
    assert select("other-site/guide/setup", view()).reason == "unknown_site"
    # A single-word leading segment is always treated as content.
    assert select("othersite/guide/setup", view()).reason == "not_found"
    # No slash: content, not a site.
    assert select("other-site", view()).reason == "not_found"
    # A hyphenated directory that a loaded site has is content too.
    assert select("deploy-notes-x/y", view()).reason == "unknown_site"
    assert select("deploy-notes/cloud-x", view()).reason == "not_found"


def test_a_failed_default_site_turns_a_miss_into_site_unavailable() -> None:
    decision = select("tutorial/nothing-here", view(guide=None))
    assert (decision.reason, decision.site) == ("site_unavailable", "guide")
    # The other sites are still consulted.
    assert select("docker", view(guide=None)).site == "deploy-notes"
    assert select("other-site/x/y", view(guide=None)).reason == "unknown_site"


def test_plain_miss_is_not_found() -> None:
    decision = select("tutorial/nothing-here", view())
    assert (decision.reason, decision.rule) == ("not_found", "none")


def test_redirect_targets_map_onto_sites() -> None:
    bases = {"guide": "http://h/guide", "deploy-notes": "http://h/deploy-notes"}
    assert redirect_target("http://h/guide/advanced/settings/", bases) == (
        "guide",
        "advanced/settings",
    )
    assert redirect_target("http://h/deploy-notes/", bases) == ("deploy-notes", "")
    assert redirect_target("http://elsewhere/guide/x/", bases) is None
