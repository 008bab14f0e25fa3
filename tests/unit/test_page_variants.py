"""Variants of one page (ranking/variants.py) and the window that shows one of them."""

from __future__ import annotations

from scriptorium.domain.model import Block, Candidate, Corpus, RefKind, SourceDocument
from scriptorium.ranking.variants import (
    SourcePaths,
    differing_folder,
    same_pages,
    variant_families,
    variant_name,
)
from scriptorium.ranking.window import diversify, held_back_why
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import content_hash

GUIDES = ("caching.md", "polling.md", "query-retries.md", "mutations.md")
LISTED = (
    [f"docs/framework/{fw}/guides/{name}" for fw in ("react", "vue", "solid") for name in GUIDES]
    + ["docs/tutorial/index.md", "docs/tutorial/first.md", "docs/how-to/index.md"]
    + ["docs/how-to/deploy.md", "docs/framework/lit/guides/caching.md"]
    # Folders of different pages that share a few names every folder has.
    + [f"docs/reference/{n}.md" for n in ("index", "middleware", "status", "apirouter", "encoders")]
    + [f"docs/advanced/{n}.md" for n in ("index", "middleware", "events", "settings", "testing")]
    # Two versions of one library's reference.
    + [f"devdocs/{v}/generated/torch.{n}.txt" for v in ("pytorch", "pytorch~2") for n in GUIDES]
)
PATHS = SourcePaths(LISTED)


def page(path: str, score: float, corpus: Corpus = Corpus.DOCS) -> Candidate:
    body = f"words of {path}\n"
    kind = RefKind.DOC if corpus is Corpus.DOCS else RefKind.CODE
    block = Block(kind, 1, 1, path, (path,), "top", body, 1)
    doc = SourceDocument("docs", path, body, corpus, content_hash(body), blocks=(block,))
    return Candidate(source="docs", document=doc, block=block, score=score)


def confirm(source: str, prefix: str, one: str, other: str) -> bool:
    return same_pages(PATHS, prefix, one, other)


def test_two_paths_differ_in_one_folder_with_the_same_file_name():
    assert differing_folder("docs/a/guides/x.md", "docs/b/guides/x.md") == 1
    assert differing_folder("docs/a/guides/x.md", "docs/b/other/x.md") is None  # two folders
    assert differing_folder("docs/a/x.md", "docs/a/y.md") is None  # another page
    assert differing_folder("docs/a/x.md", "docs/a/b/x.md") is None  # another depth


def test_sibling_folders_hold_the_same_pages_or_not():
    assert same_pages(PATHS, "docs/framework/", "react", "vue")
    assert same_pages(PATHS, "docs/framework/", "vue", "solid")
    # One page in common is a shared name, not a copy of the folder.
    assert not same_pages(PATHS, "docs/framework/", "lit", "react")
    assert not same_pages(PATHS, "docs/", "tutorial", "how-to")
    # index.md and middleware.md in both: two of five, not half of the folder.
    assert not same_pages(PATHS, "docs/", "reference", "advanced")
    assert same_pages(PATHS, "devdocs/", "pytorch", "pytorch~2")


def test_a_later_variant_of_a_newer_version_is_the_one_shown():
    settings = RankingSettings()
    old = page("devdocs/pytorch/generated/torch.caching.md", 3.0)
    new = page("devdocs/pytorch~2/generated/torch.caching.md", 2.0)
    other = page("devdocs/pytorch/generated/torch.polling.md", 1.0)
    cands = [old, new, other]
    for cand, family in variant_families(cands, confirm).items():
        next(c for c in cands if id(c) == cand).variant = family
    shaped = diversify(settings, cands, 2)
    assert [c.document.path for c in shaped.window][:2] == [new.document.path, other.document.path]
    assert held_back_why(old, shaped, "capped", 0.0, 2) == (
        f"a variant (pytorch) of {new.document.path}, shown instead"
    )


def test_families_join_the_variants_among_the_candidates_only():
    react = page("docs/framework/react/guides/caching.md", 3.0)
    vue = page("docs/framework/vue/guides/caching.md", 2.0)
    alone = page("docs/framework/solid/guides/polling.md", 1.5)
    index = page("docs/tutorial/index.md", 1.2)
    other_index = page("docs/how-to/index.md", 1.1)
    lit = page("docs/framework/lit/guides/caching.md", 1.0)
    families = variant_families([react, vue, alone, index, other_index, lit], confirm)
    assert families == {
        id(react): "docs:docs/framework/*/guides/caching.md",
        id(vue): "docs:docs/framework/*/guides/caching.md",
    }
    assert variant_name(vue.document.path, families[id(vue)]) == "vue"


def test_the_window_shows_the_first_variant_unless_the_query_names_another():
    settings = RankingSettings()

    def ranked() -> list[Candidate]:
        cands = [
            page("docs/framework/react/guides/caching.md", 3.0),
            page("docs/framework/vue/guides/caching.md", 2.0),
            page("docs/framework/react/guides/polling.md", 1.0),
        ]
        for cand, family in zip(cands, variant_families(cands, confirm).values(), strict=False):
            cand.variant = family
        return cands

    cands = ranked()
    shaped = diversify(settings, cands, 2)
    assert [c.document.path for c in shaped.window] == [
        "docs/framework/react/guides/caching.md",
        "docs/framework/react/guides/polling.md",
    ]
    why = held_back_why(cands[1], shaped, "capped", 0.0, 2)
    assert why == "a variant (vue) of docs/framework/react/guides/caching.md, shown instead"
    named = diversify(settings, ranked(), 2, frozenset({"vue", "caching"}))
    assert [c.document.path for c in named.window][:2] == [
        "docs/framework/react/guides/caching.md",
        "docs/framework/vue/guides/caching.md",
    ]
    off = diversify(
        RankingSettings(near_duplicate_similarity=0.0, hold_back_variants=False), ranked(), 2
    )
    assert [c.document.path for c in off.window][:2] == [
        "docs/framework/react/guides/caching.md",
        "docs/framework/vue/guides/caching.md",
    ]


# Two ports of one library, and two modules of one package that share file names.
HOOK_FILES = ("useQuery.ts", "useMutation.ts", "useInfiniteQuery.ts", "types.ts")
CODE_PATHS = SourcePaths(
    [f"packages/{p}/src/{n}" for p in ("solid-query", "preact-query") for n in HOOK_FILES]
    + [
        f"fastapi/{p}/{n}"
        for p in ("openapi", "dependencies")
        for n in ("__init__.py", "utils.py", "models.py")
    ]
    + ["fastapi/openapi/docs.py"]
)


def definition(path: str, symbol: str, score: float) -> Candidate:
    body = f"def {symbol}(): ...\n"
    block = Block(RefKind.CODE, 1, 1, symbol, (symbol,), symbol, body, 1, symbol, "function")
    doc = SourceDocument("code", path, body, Corpus.CODE, content_hash(body), blocks=(block,))
    return Candidate(source="code", document=doc, block=block, score=score)


def confirm_code(source: str, prefix: str, one: str, other: str) -> bool:
    return same_pages(CODE_PATHS, prefix, one, other)


def test_a_definition_ported_to_a_sibling_package_is_a_variant_only_with_code_on():
    solid = definition("packages/solid-query/src/useQuery.ts", "useQuery", 3.0)
    preact = definition("packages/preact-query/src/useQuery.ts", "useQuery", 2.0)
    # The same file in both packages, another name defined in it: a different definition.
    helper = definition("packages/preact-query/src/useQuery.ts", "useHelper", 1.5)
    cands = [solid, preact, helper]
    assert variant_families(cands, confirm_code) == {}  # pages only, by default
    families = variant_families(cands, confirm_code, code=True)
    key = "code:packages/*/src/useQuery.ts#useQuery"
    assert families == {id(solid): key, id(preact): key}
    for cand in cands:
        cand.variant = families.get(id(cand), "")
    shaped = diversify(RankingSettings(near_duplicate_similarity=0.0), cands, 2)
    assert [c.block.symbol for c in shaped.window] == ["useQuery", "useHelper"]
    assert held_back_why(preact, shaped, "capped", 0.0, 2) == (
        f"a variant (preact-query) of {solid.location or solid.document.path}, shown instead"
    )
    # A word of the variant's folder the shown one's lacks ("preact") keeps it.
    named = diversify(
        RankingSettings(near_duplicate_similarity=0.0), cands, 3, frozenset({"preact"})
    )
    assert preact in named.window[:2]


def test_modules_sharing_a_file_name_define_different_things():
    # fastapi/openapi/ and fastapi/dependencies/ hold the same file names (three of four):
    # what they define differs, so nothing is held back as a variant of another.
    assert same_pages(CODE_PATHS, "fastapi/", "openapi", "dependencies")
    openapi = definition("fastapi/openapi/utils.py", "get_openapi", 2.0)
    dependant = definition("fastapi/dependencies/utils.py", "get_dependant", 1.0)
    assert variant_families([openapi, dependant], confirm_code, code=True) == {}


def test_marking_looks_only_at_files_placed_twice_and_marks_as_the_families_do():
    """``mark_variants`` gives the families of :func:`variant_families` over every candidate,
    having looked only at files with a namesake at the same place under a sibling folder."""
    from scriptorium.retrieval import variants as marking

    class Served:
        def __init__(self, paths: list[str]) -> None:
            self.docs = [("docs", p) for p in paths]
            self.memo: dict = {}

    served = Served([*LISTED, "docs/unique/page.md"])
    placed = marking._placed_twice(served)
    assert ("docs", "docs/framework/vue/guides/caching.md") in placed
    assert ("docs", "docs/tutorial/first.md") not in placed  # no namesake one folder over
    assert ("docs", "docs/unique/page.md") not in placed
    assert marking._placed_twice(served) is placed  # once per generation
    cands = [
        page("docs/framework/react/guides/caching.md", 3.0),
        page("docs/framework/vue/guides/caching.md", 2.0),
        page("docs/tutorial/first.md", 1.5),
        page("docs/tutorial/index.md", 1.2),
        page("docs/how-to/index.md", 1.1),
        page("docs/unique/page.md", 1.0),
    ]
    expected = variant_families(cands, confirm)
    marking.mark_variants(cands, served)
    assert {id(c): c.variant for c in cands if c.variant} == expected
    assert cands[0].variant == "docs:docs/framework/*/guides/caching.md"
