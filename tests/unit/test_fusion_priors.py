"""Fusion across corpora, and the priors for API-reference directives and definitions."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re

import pytest

from scriptorium.domain.model import Block, Candidate, Corpus, Query, RefKind, SourceDocument
from scriptorium.domain.outcomes import SearchParams
from scriptorium.engine.local import LocalEngine
from scriptorium.plugins import load_registry
from scriptorium.ranking.paths import page_language, translated, translated_root
from scriptorium.ranking.pipeline import Pipeline, renders_from_code
from scriptorium.ranking.questions import (
    PHRASE_PAIRS,
    phrase_name_forms,
    plain_question,
    spelled_name_forms,
    usage_question,
)
from scriptorium.ranking.signals import query_names, weighted_terms
from scriptorium.settings.config import load_settings
from scriptorium.settings.ranking import RankingSettings
from scriptorium.sources.base import content_hash
from scriptorium.text import tokenize
from tests.support.daemon import engine_from


def candidate(
    corpus: Corpus, path: str, body: str, score: float, symbol: str | None = None
) -> Candidate:
    kind = RefKind.DOC if corpus is Corpus.DOCS else RefKind.CODE
    block = Block(
        kind=kind,
        start_line=1,
        end_line=len(body.splitlines()),
        title="T",
        section_path=("T",),
        anchor="t" if kind is RefKind.DOC else "L1",
        body=body,
        level=2,
        symbol=symbol,
    )
    doc = SourceDocument(
        source=str(corpus),
        path=path,
        text=body,
        corpus=corpus,
        content_hash=content_hash(body),
        blocks=(block,),
    )
    return Candidate(source=str(corpus), document=doc, block=block, score=score)


def lever_alone(**levers) -> RankingSettings:
    """Settings for one prior under test: term coverage, the question factor and the
    translation factor would also weigh these candidates."""
    neutral = {
        "term_coverage": 0.0,
        "question_code_factor": 1.0,
        "usage_question_code_factor": 1.0,
        "translation_factor": 1.0,
    }
    return RankingSettings(**{**neutral, **levers})


def fused(blend: float) -> list[float]:
    pipeline = Pipeline(RankingSettings(fusion_blend=blend), lambda doc: doc.text.splitlines())
    cands = [
        candidate(Corpus.DOCS, "a.md", "## A\n\nprose\n", 10.0),
        candidate(Corpus.DOCS, "b.md", "## B\n\nprose\n", 5.0),
        candidate(Corpus.CODE, "c.py", "def c():\n    pass\n", 4.0),
        candidate(Corpus.CODE, "d.py", "def d():\n    pass\n", 2.0),
    ]
    pipeline.fuse(cands)
    return [c.score for c in cands]


def test_max_fusion_scales_each_corpus_by_its_best_and_blend_keeps_part_of_the_gap():
    # Without a blend both corpora's best results score 1.0: the tie falls to path order.
    assert fused(0.0) == [1.0, 0.5, 1.0, 0.5]
    # A blend keeps (best / overall best) ** blend of the gap for the weaker corpus.
    docs_best, docs_next, code_best, code_next = fused(0.1)
    assert (docs_best, docs_next) == (1.0, 0.5)
    assert code_best == pytest.approx(0.4**0.1) and code_best < 1.0
    assert code_next == pytest.approx(code_best / 2)
    # A blend of 1 is raw BM25 on the docs' scale.
    assert fused(1.0) == pytest.approx([1.0, 0.5, 0.4, 0.2])
    assert all(math.isfinite(s) for s in fused(0.5))


def test_one_corpus_is_scaled_by_its_best_too():
    # Scores share one scale whatever matched: a docs-only answer is not raw BM25.
    pipeline = Pipeline(lever_alone(), lambda doc: doc.text.splitlines())
    cands = [
        candidate(Corpus.DOCS, "a.md", "## A\n\nprose\n", 34.0),
        candidate(Corpus.DOCS, "b.md", "## B\n\nprose\n", 17.0),
    ]
    pipeline.fuse(cands)
    assert [c.score for c in cands] == [1.0, 0.5]
    assert [c.scores.fused for c in cands] == [1.0, 0.5]


def test_blocks_that_render_reference_from_code_are_weighed_down():
    directive = "## API Key Security Schemes\n\n::: fastapi.security.APIKeyCookie\n"
    prose = "## Security\n\nUse `OAuth2PasswordBearer` for tokens; see `::: not a directive`.\n"
    assert renders_from_code(directive)
    assert not renders_from_code(prose)
    assert not renders_from_code("## Admonition\n\n!!! note\n    :::\n")
    cands = [
        candidate(Corpus.DOCS, "reference/security.md", directive, 1.0),
        candidate(Corpus.DOCS, "tutorial/security.md", prose, 1.0),
        candidate(Corpus.CODE, "weird.py", "x = '''\n::: fastapi.Thing\n'''\n", 1.0),
    ]
    for cand in cands:
        cand.explained = True
    pipeline = Pipeline(lever_alone(), lambda doc: doc.text.splitlines())
    pipeline.priors(Query(text="api key", terms=("api", "key")), cands, lambda source: "product")
    assert [c.score for c in cands] == [0.8, 1.0, 1.0]
    assert [r.name for r in cands[0].reasons] == ["renders-from-code"]
    off = Pipeline(lever_alone(directive_factor=1.0), lambda doc: doc.text.splitlines())
    again = candidate(Corpus.DOCS, "reference/security.md", directive, 1.0)
    off.priors(Query(text="api key", terms=("api", "key")), [again], lambda source: "product")
    assert again.score == 1.0


def test_query_names_keep_identifiers_whole_and_split_only_dotted_ones():
    assert query_names("def Depends") == {"def", "depends"}
    assert query_names("APIRouter include_router") == {"apirouter", "include_router"}
    assert query_names("app.include_router()") == {"app", "app.include_router", "include_router"}
    # Stopwords name nothing: "how to get a user" asks for no definition of "to" or "a".
    assert query_names("how to get a user") == {"get", "user"}
    # As many as a query has terms, however long the text.
    many = query_names(" ".join(f"name{i}x" for i in range(500)))
    assert len(many) == 64 and "name0x" in many and "name499x" not in many


def test_code_blocks_defining_a_queried_name_are_weighed_up():
    cands = [
        candidate(Corpus.CODE, "params.py", "def Depends(dependency=None):\n", 1.0, "Depends"),
        candidate(Corpus.CODE, "utils.py", "def get_dependant(call):\n", 1.0, "get_dependant"),
        candidate(Corpus.DOCS, "depends.md", "## Depends\n\nUse `Depends`.\n", 1.0),
        candidate(Corpus.CODE, "routing.py", "def include_router(self):\n", 1.0, "include_router"),
    ]
    for cand in cands:
        cand.explained = True
    pipeline = Pipeline(lever_alone(), lambda doc: doc.text.splitlines())
    query = Query(text="def Depends app.include_router", terms=("def", "depend", "includ"))
    pipeline.priors(query, cands, lambda source: "product")
    # The definition of the name asked for, case-folded, and of a dotted name's last segment;
    # a block that only uses a related word, and documentation, are left alone.
    assert [c.score for c in cands] == [1.2, 1.0, 1.0, 1.2]
    assert [r.name for r in cands[0].reasons] == ["definition"]
    off = Pipeline(lever_alone(definition_factor=1.0), lambda doc: doc.text.splitlines())
    again = candidate(Corpus.CODE, "params.py", "def Depends():\n", 1.0, "Depends")
    off.priors(query, [again], lambda source: "product")
    assert again.score == 1.0


def test_near_duplicates_are_held_back_and_backfill_only_when_the_window_is_short():
    plain = "@app.post('/files/')\nasync def create_file(file: bytes = File()):\n    return {}\n"
    annotated = (
        "@app.post('/files/')\n"
        "async def create_file(file: Annotated[bytes, File()]):\n    return {}\n"
    )
    other = "@app.get('/items/')\nasync def read_items(skip: int = 0):\n    return []\n"
    cands = [
        candidate(Corpus.CODE, "tutorial001_py310.py", plain, 3.0),
        candidate(Corpus.CODE, "tutorial001_an_py310.py", annotated, 2.9),
        candidate(Corpus.CODE, "tutorial002_py310.py", other, 2.0),
    ]
    for cand in cands:
        cand.explained = True
    location = lambda c: c.document.path  # noqa: E731
    pipeline = Pipeline(lever_alone(), lambda doc: doc.text.splitlines())
    query = Query(text="upload file", terms=("upload", "file"), top_k=2, explain=True)
    window, _, dropped = pipeline.order(list(cands), 2, location, False, query)
    # The Annotated variant repeats the first result word for word: the other example wins
    # its place, and explain says which result it copies.
    assert [c.document.path for c in window] == ["tutorial001_py310.py", "tutorial002_py310.py"]
    assert [d.why for d in dropped] == ["near-duplicate of tutorial001_py310.py"]
    # With room to spare the variant comes back rather than leaving the window short.
    window, _, dropped = pipeline.order(list(cands), 3, location, False, query)
    assert len(window) == 3 and not dropped
    off = Pipeline(lever_alone(near_duplicate_similarity=0.0), lambda doc: doc.text.split())
    window, _, _ = off.order(list(cands), 2, location, False, query)
    assert [c.document.path for c in window][1] == "tutorial001_an_py310.py"


def test_a_block_nested_with_a_better_result_of_its_file_is_held_back():
    text = "".join(f"line {i}\n" for i in range(1, 41))
    doc = SourceDocument(
        source="code",
        path="widgets.py",
        text=text,
        corpus=Corpus.CODE,
        content_hash=content_hash(text),
    )

    def block_of(title: str, start: int, end: int, score: float) -> Candidate:
        block = Block(
            kind=RefKind.CODE,
            start_line=start,
            end_line=end,
            title=title,
            section_path=(title,),
            anchor=f"L{start}",
            body="".join(f"{title} {i}\n" for i in range(start, end + 1)),
            level=2,
            symbol=title,
        )
        cand = Candidate(source="code", document=doc, block=block, score=score)
        cand.explained = True
        return cand

    other = candidate(Corpus.CODE, "gadgets.py", "def gadget():\n    return 1\n", 1.0)
    cands = [
        block_of("Widget", 1, 20, 3.0),
        block_of("Widget.tune", 5, 10, 2.5),  # inside the class above
        block_of("module", 1, 40, 2.2),  # around it
        other,
        block_of("Gizmo", 22, 30, 0.9),  # beside it: a place of its own
    ]
    location = lambda c: f"{c.document.path}#L{c.block.start_line}-L{c.block.end_line}"  # noqa: E731
    query = Query(text="tune it", terms=("tune",), top_k=3, explain=True)
    pipeline = Pipeline(lever_alone(), lambda d: d.text.splitlines())
    window, _, dropped = pipeline.order(list(cands), 3, location, False, query)
    assert [c.block.title for c in window][:2] == ["Widget", "T"]
    assert [c.block.title for c in window][2] == "Gizmo"
    whys = {d.location: d.why for d in dropped}
    assert whys["widgets.py#L5-L10"] == "lines inside those of widgets.py#L1-L20"
    assert whys["widgets.py#L1-L40"] == "lines around those of widgets.py#L1-L20"
    off = Pipeline(lever_alone(hold_back_nested=False), lambda d: d.text.splitlines())
    window, _, _ = off.order(list(cands), 3, location, False, query)
    assert [c.block.title for c in window] == ["Widget", "Widget.tune", "T"]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("add retries", set()),
        ("write a plugin", set()),
        ("Write a plugin", set()),
        ("How To Add Retries", set()),
        ("how does QueryParams.add work", {"queryparams", "queryparams.add", "add"}),
        ("call `add` twice", {"add"}),
        ("what does add() do", {"add"}),
        ("use get_db in a dependency", {"get_db"}),
        ("how to use Depends with yield", {"depends"}),
        ("Depends", {"depends"}),
        ("APIRouter prefix", {"apirouter"}),
        # Capitalised by grammar: a sentence's or a line's first word.
        ("the session closes after the yield. How do I keep it open?", set()),
        ('it failed. "Why" is what I ask', set()),
        ("a dataframe of prices:\nAverage them per day with Grouper", {"grouper"}),
        ("the pool is full. How do I size HTTPTransport", {"httptransport"}),
    ],
)
def test_only_identifier_like_words_name_a_definition(text, names):
    assert query_names(text, identifiers_only=True) == names


def test_an_english_word_that_names_a_function_is_not_a_definition_query():
    def scored(text: str, **settings) -> float:
        cand = candidate(Corpus.CODE, "datastructures.py", "def add(self, key):\n", 1.0, "add")
        pipeline = Pipeline(lever_alone(**settings), lambda doc: doc.text.splitlines())
        pipeline.priors(Query(text=text, terms=("add", "retri")), [cand], lambda s: "product")
        return cand.score

    assert scored("add retries", definition_identifiers_only=True) == 1.0
    assert scored("QueryParams.add retries", definition_identifiers_only=True) == 1.2
    # By default a question's plain words name nothing; a pasted text's still do.
    assert scored("add retries") == 1.0
    assert scored("QueryParams.add retries") == pytest.approx(1.2)
    pasted = "add retries " + "when the server resets the connection " * 10
    assert scored(pasted) == pytest.approx(1.2)
    assert scored(pasted, definition_identifiers_only=True) == 1.0
    # With definition_words = "any", every word names a definition again.
    assert scored("add retries", definition_words="any") == pytest.approx(1.2)


def test_a_question_asking_for_a_task_a_name_takes_part_in_leaves_its_definition_alone():
    def scored(text: str, body: str = "", **settings) -> float:
        body = body or "export function useInfiniteQuery(options) {\n  return observe(options)\n}\n"
        cand = candidate(Corpus.CODE, "src/hooks.ts", body, 1.0, "useInfiniteQuery")
        ranking = lever_alone(**settings)
        terms, _ = weighted_terms(text, ranking)
        pipeline = Pipeline(ranking, lambda doc: doc.text.splitlines())
        pipeline.priors(Query(text=text, terms=terms), [cand], lambda s: "product")
        return cand.score

    # The name is the question's context; "load more button" is what it asks for.
    assert scored("useInfiniteQuery load more button") == 1.0
    # A definition holding one of those terms is about the task too.
    holding = "export function useInfiniteQuery(options) {\n  return loadMore(options)\n}\n"
    assert scored("useInfiniteQuery load more button", holding) == pytest.approx(1.2)
    # One other term (an option of the name) still asks for the name.
    assert scored("useInfiniteQuery options") == pytest.approx(1.2)
    assert scored("useInfiniteQuery load more button", definition_task_terms=3) == 1.0
    assert scored("useInfiniteQuery load more button", definition_task_terms=4) == 1.2
    assert scored("useInfiniteQuery load more button", definition_task_terms=0) == 1.2
    # A question asking for code or a lookup, or for the use of the name, asks for the name.
    assert scored("where is useInfiniteQuery load more button defined") == pytest.approx(1.2)
    assert scored("show the implementation of useInfiniteQuery paging") == pytest.approx(1.2)
    assert scored("useInfiniteQuery usage example") == pytest.approx(1.2)
    # A pasted text names what it is about: its other words are not a task.
    pasted = "useInfiniteQuery load more button " + "the next page never loads on click " * 10
    assert scored(pasted) == pytest.approx(1.2)


def test_a_page_matching_across_its_sections_beats_one_matching_section():
    text = "headers cookies parsing"
    terms = tuple(dict.fromkeys(tokenize(text, stem=True)))

    def ranked(**settings) -> list[tuple[str, float]]:
        cands = [
            candidate(Corpus.DOCS, "one-section.md", "## A\n\nheaders and cookies\n", 1.0),
            candidate(Corpus.DOCS, "spread.md", "## B\n\nheaders\n", 0.9),
            candidate(Corpus.DOCS, "spread.md", "## C\n\ncookies parsing\n", 0.6),
            candidate(Corpus.DOCS, "repeats.md", "## D\n\nheaders\n", 0.95),
            candidate(Corpus.DOCS, "repeats.md", "## E\n\nheaders headers\n", 0.9),
            candidate(Corpus.CODE, "spread.py", "def headers():\n", 0.5),
            candidate(Corpus.CODE, "spread.py", "def cookies():\n", 0.5),
        ]
        pipeline = Pipeline(lever_alone(**settings), lambda doc: doc.text.splitlines())
        pipeline.priors(Query(text=text, terms=terms), cands, lambda s: "product")
        return [(c.document.path, round(c.score, 4)) for c in cands]

    # The page covering all three terms over two sections passes the section with two; a
    # page repeating one term in every section gains nothing; code is apart.
    assert ranked(document_evidence=0.5) == [
        ("one-section.md", 1.0),
        ("spread.md", 1.2),
        ("spread.md", 0.7),
        ("repeats.md", 0.95),
        ("repeats.md", 0.9),
        ("spread.py", 0.5),
        ("spread.py", 0.5),
    ]
    assert ranked(document_evidence=0.0)[1] == ("spread.md", 0.9)
    assert ranked(document_evidence=0.0, document_evidence_code=0.5)[5] == ("spread.py", 0.5833)


def test_tests_vendored_code_and_changelogs_yield_unless_the_query_asks_for_them():
    def scored(path: str, text: str, factor: float = 0.8) -> float:
        cand = candidate(Corpus.CODE, path, "def parse(text):\n", 1.0)
        pipeline = Pipeline(lever_alone(auxiliary_factor=factor), lambda d: [])
        pipeline.priors(Query(text=text, terms=("pars",)), [cand], lambda s: "product")
        return cand.score

    for path in (
        "pkg/tests/test_parse.py",
        "conftest.py",
        "pkg/extern/ply/lex.py",
        "CHANGES.md",
        ".github/ISSUE_TEMPLATE/bug_report.md",
        "doc/whatsnew/2.0.rst",
        "doc/en/announce/release-2.1.3.rst",
        "changelog.d/1234.bugfix.md",
        "docs/blog/announcing-vite5.md",
        "src/content/blog/2024/04/25/react-19.md",
        # Other languages' conventions for the same kinds.
        "packages/vite/src/node/__tests__/build.spec.ts",
        "src/parse.test.tsx",
        "pkg/parse_test.go",
        "spec/parse_spec.rb",
        "src/test/java/org/acme/ParserTest.java",
        "src/test/kotlin/TestParser.kt",
        "pkg/testdata/header.txt",
        "web/node_modules/left-pad/index.js",
        "pnpm-lock.yaml",
        "Cargo.lock",
        "static/app.min.js",
        "sandbox/src/worker-bundle.dist.js",
        "packages/ui/dist/index.mjs",
        "api/v1/service.pb.go",
        # Hidden folders: a docs site's, CI's or an agent's configuration.
        "docs/.vitepress/config.ts",
        ".circleci/config.yml",
        "pkg/.agents/skills/parse/SKILL.md",
        ".changeset/brave-cats-parse.md",
    ):
        assert scored(path, "parse a header") == pytest.approx(0.8), path
    for path in ("src/Contest.java", "lib/latest.kt", "src/attest.py", "pkg/build.ts", ".parse.py"):
        assert scored(path, "parse a header") == 1.0, path
    assert scored("pkg/parse.py", "parse a header") == 1.0
    assert scored("docs/tutorial/testing.md", "parse a header") == 1.0
    # Asked for by name, they compete as they are; and 1.0 switches the prior off.
    assert scored("pkg/tests/test_parse.py", "the parse test fails") == 1.0
    assert scored("CHANGES.md", "parse in the release notes") == 1.0
    assert scored("docs/blog/announcing-vite5.md", "the blog post on parse") == 1.0
    assert scored("docs/.vitepress/config.ts", "parse in the vitepress config") == 1.0
    assert scored("pkg/.agents/skills/parse/SKILL.md", "the agent's parse skill") == 1.0
    assert scored("pkg/tests/test_parse.py", "parse a header", 1.0) == 1.0
    # A class the source gives the page (class_rules, front matter) stands instead.
    cand = candidate(Corpus.CODE, "pkg/tests/test_parse.py", "def parse(text):\n", 1.0)
    doc = dataclasses.replace(
        cand.document, meta=dataclasses.replace(cand.document.meta, source_class="product")
    )
    cand.document = doc
    pipeline = Pipeline(lever_alone(auxiliary_factor=0.8), lambda d: [])
    pipeline.priors(Query(text="parse", terms=("pars",)), [cand], lambda s: "product")
    assert cand.score == 1.0


def test_a_page_named_by_its_date_yields_like_a_blog_post_unless_asked_for():
    def scored(corpus: Corpus, path: str, text: str = "parse a header") -> float:
        query = Query(text=text, terms=("pars",))
        return path_prior(corpus, path, query, "parse a header\n", auxiliary_factor=0.5)

    for path in (
        "docs/journal/2026-12-05-build.md",
        "_drafts/2024-05-01_release.rst",
        "notes/2019-01-01.md",
    ):
        assert scored(Corpus.DOCS, path) == 0.5, path
        assert scored(Corpus.DOCS, path, "the blog post on parse") == 1.0, path
    # Undated pages, a year alone, and code named by a date (a migration) are not posts.
    for corpus, path in (
        (Corpus.DOCS, "docs/guide/ranking.md"),
        (Corpus.DOCS, "docs/2019.md"),
        (Corpus.DOCS, "docs/v2024-05.md"),
        (Corpus.CODE, "alembic/versions/2024-05-01_add_users.py"),
    ):
        assert scored(corpus, path) == 1.0, path


def test_a_development_journal_yields_like_a_blog_unless_asked_for():
    """A journal's pages are records written once, dated or not (its index, its rounds)."""

    def scored(path: str, text: str = "parse a header") -> float:
        query = Query(text=text, terms=("pars",))
        return path_prior(Corpus.DOCS, path, query, "parse a header\n", auxiliary_factor=0.5)

    for path in ("docs/journal/ranking.md", "docs/journal/README.md", "devlog/parsing.md"):
        assert scored(path) == 0.5, path
        assert scored(path, "the journal entry on parse") == 1.0, path
    assert scored("docs/journaling.md") == 1.0  # a page about journaling is reference


def test_a_migration_guide_yields_unless_the_query_asks_to_migrate():
    def scored(corpus: Corpus, path: str, text: str = "parse a header", on: bool = True) -> float:
        query = Query(text=text, terms=("pars",))
        return path_prior(
            corpus, path, query, "parse a header\n", auxiliary_factor=0.5, auxiliary_migration=on
        )

    for path in (
        "docs/migration.md",
        "docs/guide/migration.md",
        "docs/how-to/migrate-from-pydantic-v1-to-pydantic-v2.md",
        "docs/upgrading.md",
        "docs/v5-upgrade-guide.md",
        "docs/compatibility.md",  # another library's API beside this one's
        "doc/en/backwards-compatibility.rst",
    ):
        assert scored(Corpus.DOCS, path) == 0.5, path
        assert scored(Corpus.DOCS, path, on=False) == 1.0, path
        for asks in ("migrate a parse header to v2", "upgrade the header parser"):
            assert scored(Corpus.DOCS, path, asks) == 1.0, (path, asks)
    for path in ("docs/compatibility.md", "doc/en/backwards-compatibility.rst"):
        assert scored(Corpus.DOCS, path, "is the header parser compatible with requests") == 1.0
    # A page only containing the letters, and code so named (a database migration, a
    # compatibility shim), are not guides.
    for corpus, path in (
        (Corpus.DOCS, "docs/immigration.md"),
        (Corpus.CODE, "pydantic/_migration.py"),
        (Corpus.CODE, "app/migrations/0001_initial.py"),
    ):
        assert scored(corpus, path) == 1.0, path


def test_an_error_reference_yields_unless_the_query_speaks_of_an_error():
    def scored(corpus: Corpus, path: str, text: str = "forbid extra fields", on=True) -> float:
        query = Query(text=text, terms=("forbid",))
        return path_prior(
            corpus, path, query, "forbid extra\n", auxiliary_factor=0.5, auxiliary_errors=on
        )

    for path in ("docs/errors/validation_errors.md", "docs/exceptions.md", "docs/error-codes.md"):
        assert scored(Corpus.DOCS, path) == 0.5, path
        assert scored(Corpus.DOCS, path, on=False) == 1.0, path
        assert scored(Corpus.DOCS, path, "why does forbidding extra fields fail") == 1.0, path
    for corpus, path in ((Corpus.DOCS, "docs/concepts/models.md"), (Corpus.CODE, "errors.py")):
        assert scored(corpus, path) == 1.0, path


def test_an_integration_page_yields_unless_the_query_names_its_tool():
    def scored(path: str, text: str = "forbid extra fields", on: bool = True) -> float:
        query = Query(text=text, terms=tuple(tokenize(text, stem=True)))
        return path_prior(
            Corpus.DOCS, path, query, "forbid\n", auxiliary_factor=0.5, auxiliary_integrations=on
        )

    for path in ("docs/integrations/mypy.md", "docs/third_party_packages.md"):
        assert scored(path) == 0.5, path
        assert scored(path, on=False) == 1.0, path
        assert scored(path, "a plugin that forbids extra fields") == 1.0, path
    # The tool the page is named after, named by the query, asks for it.
    assert scored("docs/integrations/mypy.md", "forbid extra fields with mypy") == 1.0
    assert scored("docs/integrations/visual_studio_code.md", "forbid extra in vs code") == 1.0
    assert scored("docs/guide/backend-integration.md") == 1.0  # a guide, not an integrations page


def test_build_and_release_scripts_yield_only_when_tooling_is_auxiliary():
    def scored(path: str, text: str = "parse a header", tooling: bool = True) -> float:
        cand = candidate(Corpus.CODE, path, "def parse(text):\n", 1.0)
        settings = lever_alone(auxiliary_factor=0.5, auxiliary_tooling=tooling)
        Pipeline(settings, lambda d: []).priors(
            Query(text=text, terms=("pars",)), [cand], lambda s: "product"
        )
        return cand.score

    for path in (
        "setup.py",
        "doc/conf.py",
        "docs/source/conf.py",
        "utils/checks.py",
        "release/fabfile.py",
        "scripts/docs.py",
        "pkg/core/benchmarks/bench_expand.py",
        "packages/vite/rolldown.config.ts",
        "eslint.config.js",
        ".eslintrc.cjs",
        "pnpm-workspace.yaml",
    ):
        assert scored(path) == 0.5, path
        assert scored(path, tooling=False) == 1.0, path
    # Library code that merely shares the folder names, and a conf.py that is no docs build's.
    for path in ("pkg/utils/parse.py", "pkg/scripts/run.py", "pkg/conf.py", "pkg/setup_command.py"):
        assert scored(path) == 1.0, path
    # Asked for by name in a question, they compete as they are.
    assert scored("setup.py", "parse in the setup script") == 1.0


def test_a_block_matching_every_term_of_a_question_passes_one_matching_a_heading_word():
    text = "writing a vite plugin"
    terms = tuple(dict.fromkeys(tokenize(text, stem=True)))
    assert set(terms) == {"write", "vite", "plugin"}

    def scored(query: str = text, query_terms: tuple[str, ...] = terms, **settings) -> list:
        cands = [
            candidate(Corpus.DOCS, "build-options.md", "## build.write\n\nwrite to disk\n", 1.0),
            candidate(Corpus.DOCS, "api-plugin.md", "## API\n\nwrite a vite plugin\n", 0.9),
            candidate(Corpus.DOCS, "other.md", "## O\n\nnothing shared\n", 0.8),
        ]
        pipeline = Pipeline(RankingSettings(**settings), lambda doc: doc.text.splitlines())
        pipeline.priors(Query(text=query, terms=query_terms), cands, lambda s: "product")
        return [round(c.score, 4) for c in cands]

    # One of three terms: x (1/3) ** 0.5; all three: unchanged; none is weighed as one.
    assert scored(term_coverage=0.5) == [0.5774, 0.9, round(0.8 * (1 / 3) ** 0.5, 4)]
    assert scored(term_coverage=1.0)[0] == 0.3333
    assert scored(term_coverage=0.0) == [1.0, 0.9, 0.8]
    # A paragraph's terms are past the cap: nothing is weighed.
    many = tuple(f"w{i}" for i in range(13)) + terms
    assert scored(" ".join(many), many, term_coverage=0.5) == [1.0, 0.9, 0.8]
    assert scored(" ".join(many), many, term_coverage=0.5, term_coverage_max_terms=20) != [
        1.0,
        0.9,
        0.8,
    ]


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("how do I retry failed requests", True),
        ("why does my component render twice in development", True),
        ("which function parses the headers", False),
        ("where is the retry implemented", False),
        ("use APIRouter with a prefix", False),
        ("what does `retries` do", False),
        ("class based views", False),
        ("pprint does not format subscripts\nGood: [ -t0 ]\nBad: [ -t ]", False),
    ],
)
def test_a_plain_question_names_no_identifier_and_asks_for_no_code(text, plain):
    assert plain_question(text) is plain


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("use a custom CA bundle for SSL verification", True),
        ("return an HTML page instead of JSON", True),
        ("list the URLs of a sitemap", True),
        ("raise HTTPException with a JSON body", False),
        ("read MAX_RETRIES from the environment", False),
        ("what does `JSON` mean here", False),
        ("which function serializes JSON", False),
    ],
)
def test_acronyms_read_as_a_questions_prose(text, plain):
    assert plain_question(text, acronyms_prose=True) is plain
    # Without the lever an all-capitals word names an identifier, as a capitalised word does.
    assert plain_question(text) is (plain and not re.search(r"\b[A-Z]{2,}", text))


def test_the_code_of_a_plain_question_yields_to_the_docs():
    def scored(corpus: Corpus, text: str, **settings) -> float:
        cand = candidate(corpus, "retry.py" if corpus is Corpus.CODE else "retry.md", "x\n", 1.0)
        levers = {"question_code_factor": RankingSettings().question_code_factor, **settings}
        Pipeline(lever_alone(**levers), lambda d: []).priors(
            Query(text=text, terms=("retri",)), [cand], lambda s: "product"
        )
        return cand.score

    assert scored(Corpus.CODE, "how do I retry a request") == 0.5
    assert scored(Corpus.DOCS, "how do I retry a request") == 1.0
    assert scored(Corpus.CODE, "which function retries a request") == 1.0
    assert scored(Corpus.CODE, "how does retry_request work") == 1.0
    assert scored(Corpus.CODE, "retry a request " + "when the server resets " * 20) == 1.0
    assert scored(Corpus.CODE, "how do I retry a request", question_code_factor=1.0) == 1.0
    assert scored(Corpus.CODE, "retry a request over SSL") == 0.5
    assert scored(Corpus.CODE, "retry a request over SSL", question_acronyms_prose=False) == 1.0
    # A ranking mode says what the caller wants; "implementation" wants the code.
    cand = candidate(Corpus.CODE, "retry.py", "x\n", 1.0)
    Pipeline(lever_alone(question_code_factor=0.5), lambda d: []).priors(
        Query(text="how do I retry a request", terms=("retri",), mode="implementation"),
        [cand],
        lambda s: "product",
    )
    assert cand.score == 1.0


@pytest.mark.parametrize(
    ("text", "usage"),
    [
        ("how do I catch HTTPStatusError", True),
        ("use ConfigDict to forbid extra fields", True),
        ("how do I use httpx.AsyncClient", True),
        ("use HTTPDigestAuth", True),  # "use" asks for the use, as "how do I use" does
        ("EmailStr example", True),
        ("HTTPDigestAuth requests", False),  # two names, no word asking for their use
        ("React useState", False),  # "use" inside a name asks for nothing
        ("APIRouter", False),  # a bare name is a lookup
        ("httpx.AsyncClient", False),
        ("where is APIRouter defined", False),  # asks for code
        ("write a custom Auth class with auth_flow", False),
        ("def Depends", False),  # opens a definition
        ("asynccontextmanager lifespan ml_models", False),  # no sentence: a bag of names
        ("where is HTTPException raised", False),  # a place
        ("which arguments does jsonable_encoder accept", False),  # a signature
        ("how does FastAPI generate the operationId", False),  # the name is the subject
        ("how do I retry a request", False),  # no identifier: a plain question
        ("catch HTTPStatusError\nTraceback (most recent call last):", False),
    ],
)
def test_a_usage_question_names_identifiers_in_prose(text, usage):
    assert usage_question(text) is usage


def test_the_code_of_a_usage_question_yields_to_the_docs_by_its_own_factor():
    def scored(corpus: Corpus, text: str, mode: str = "default") -> float:
        cand = candidate(corpus, "auth.py" if corpus is Corpus.CODE else "auth.md", "x\n", 1.0)
        settings = lever_alone(question_code_factor=0.5, usage_question_code_factor=0.8)
        Pipeline(settings, lambda d: []).priors(
            Query(text=text, terms=("auth",), mode=mode, explain=True), [cand], lambda s: "x"
        )
        return cand.score

    assert scored(Corpus.CODE, "authenticate with BasicAuth or DigestAuth") == 0.8
    assert scored(Corpus.DOCS, "authenticate with BasicAuth or DigestAuth") == 1.0
    assert scored(Corpus.CODE, "how do I authenticate a request") == 0.5
    assert scored(Corpus.CODE, "BasicAuth") == 1.0
    assert scored(Corpus.CODE, "which class implements BasicAuth") == 1.0
    assert scored(Corpus.CODE, "authenticate with BasicAuth", mode="implementation") == 1.0


@pytest.mark.parametrize(
    ("source", "path", "language"),
    [
        ("docs", "docs/de/docs/tutorial/index.md", "de"),
        ("docs", "docs/pt-br/guide.md", "pt"),
        ("docs", "docs/en/docs/tutorial/index.md", "en"),
        ("docs", "docs/tutorial/index.md", "en"),  # no language folder: the original
        ("docs-ja", "tutorial/index.md", "@docs-ja"),  # a source rooted at docs/ja/docs
    ],
)
def test_a_pages_language_is_its_folders_or_its_sources(source, path, language):
    assert page_language(source, path, frozenset({"docs-ja"})) == language


def test_a_short_query_may_spell_a_name_as_words():
    assert spelled_name_forms("oauth2 password bearer") == (
        "oauth2passwordbearer",
        "oauth2_password_bearer",
    )
    assert spelled_name_forms("jsonable encoder") == ("jsonableencoder", "jsonable_encoder")
    # A stopword makes it a phrase; one word is a word; more than four, a sentence.
    assert spelled_name_forms("test a websocket endpoint") == ()
    assert spelled_name_forms("encoder") == ()
    assert spelled_name_forms("request body pydantic model schema") == ()
    # A query naming an identifier names it already; punctuation is not a name's.
    assert spelled_name_forms("use ConfigDict to forbid extra fields") == ()
    assert spelled_name_forms("encoder, decoder") == ()


def test_a_question_spelling_a_defined_name_is_a_lookup_of_it():
    def scored(spelled: frozenset[str]) -> float:
        cand = candidate(Corpus.CODE, "security.py", "x\n", 1.0, symbol="OAuth2PasswordBearer")
        query = Query(text="oauth2 password bearer", terms=("oauth2",), spelled_names=spelled)
        settings = lever_alone(question_code_factor=0.5, definition_factor=1.2)
        Pipeline(settings, lambda d: []).priors(query, [cand], lambda s: "x")
        return cand.score

    assert scored(frozenset()) == 0.5  # a plain question: its code yields
    assert scored(frozenset({"oauth2passwordbearer"})) == pytest.approx(1.2)  # the definition


@pytest.mark.parametrize(
    ("path", "is_translation"),
    [
        ("docs/de/docs/tutorial/index.md", True),
        ("docs/pt-br/guide.md", True),
        ("i18n/zh_hant/intro.md", True),
        ("docs/en/docs/tutorial/index.md", False),
        ("docs/em/docs/index.md", False),  # not a language code
        ("docs/tutorial/de.md", False),  # a file name says nothing
        ("src/content/reference/index.md", False),
    ],
)
def test_a_language_folder_marks_a_translation(path, is_translation):
    assert translated(path) is is_translation


def test_translations_yield_to_an_english_question_only():
    def scored(path: str, text: str, **settings) -> float:
        cand = candidate(Corpus.DOCS, path, "## Yield\n\nprose\n", 1.0)
        levers = {"translation_factor": RankingSettings().translation_factor, **settings}
        Pipeline(lever_alone(**levers), lambda d: []).priors(
            Query(text=text, terms=("yield",)), [cand], lambda s: "product"
        )
        return cand.score

    assert scored("docs/de/docs/deps.md", "dependencies with yield") == 0.5
    assert scored("docs/en/docs/deps.md", "dependencies with yield") == 1.0
    # A query with letters beyond ASCII may be in that language: it is not judged.
    assert scored("docs/de/docs/deps.md", "Abhängigkeiten mit yield") == 1.0
    # Nor is one in another language's words, typed without its accents.
    assert scored("docs/de/docs/deps.md", "wie kann ich abhaengigkeiten mit yield nutzen") == 1.0
    assert scored("docs/es/docs/deps.md", "como usar dependencias con yield") == 1.0
    assert scored("docs/de/docs/deps.md", "dependencies with yield", translation_factor=1.0) == 1.0


def test_a_source_whose_root_is_a_translations_folder_is_a_translation(tmp_path):
    for folder in ("docs/en/docs", "docs/ja/docs", "i18n/en", "i18n/pt-br", "de/docs", "it"):
        (tmp_path / folder).mkdir(parents=True)
    assert translated_root(tmp_path / "docs/ja/docs")  # one source per language
    assert translated_root(tmp_path / "docs/ja")
    assert translated_root(tmp_path / "i18n/pt-br")
    assert not translated_root(tmp_path / "docs/en/docs")
    # A language's name with no English folder beside it is the user's own folder name.
    assert not translated_root(tmp_path / "de/docs")
    assert not translated_root(tmp_path / "it")
    assert not translated_root(tmp_path / "gone/fr")


def test_the_pages_of_a_translations_source_yield_to_an_english_question():
    def scored(translations: frozenset[str]) -> float:
        cand = candidate(Corpus.DOCS, "tutorial/deps.md", "## Yield\n\nprose\n", 1.0)
        settings = lever_alone(translation_factor=RankingSettings().translation_factor)
        query = Query(text="dependencies with yield", terms=("yield",))
        Pipeline(settings, lambda d: []).priors(query, [cand], lambda s: "product", translations)
        return cand.score

    assert scored(frozenset({str(Corpus.DOCS)})) == 0.5
    assert scored(frozenset({"other"})) == 1.0


def test_a_translations_source_ranks_below_the_english_page_through_a_search(tmp_path):
    docs = tmp_path / "docs"
    (docs / "en" / "docs").mkdir(parents=True)
    (docs / "ja" / "docs").mkdir(parents=True)
    (docs / "en" / "docs" / "widgets.md").write_text(
        "# Widgets\n\nTune a widget before use. Tune it once.\n", encoding="utf-8"
    )
    # The translation keeps the English names, more often: BM25 alone puts it first.
    (docs / "ja" / "docs" / "widgets.md").write_text(
        "# Widget の tune\n\nwidget を tune します。\n",
        encoding="utf-8",
    )

    def ranked(translation_factor: float) -> list[tuple[str, list[str]]]:
        config = tmp_path / f"config-{translation_factor}.toml"
        config.write_text(
            '[server]\nwatch = false\n\n[[sources]]\nname = "en"\nkind = "markdown"\n'
            f'root = "{docs / "en" / "docs"}"\ndefault = true\n\n'
            '[[sources]]\nname = "ja"\nkind = "markdown"\n'
            f'root = "{docs / "ja" / "docs"}"\n\n'
            f"[ranking]\nsemantic = false\ntranslation_factor = {translation_factor}\n",
            encoding="utf-8",
        )
        state = tmp_path / f"state-{translation_factor}"
        engine = LocalEngine(load_settings(config, state_dir=str(state)), load_registry())
        engine.indexer.load_or_build()
        outcome = asyncio.run(engine.search(SearchParams(query="tune a widget", explain=True)))
        return [(hit.source, [r.name for r in hit.reasons]) for hit in outcome.hits]

    assert [source for source, _ in ranked(1.0)][:2] == ["ja", "en"]
    shipped = ranked(RankingSettings().translation_factor)
    assert [source for source, _ in shipped][:2] == ["en", "ja"]
    assert "translation" in dict(shipped)["ja"]
    assert "translation" not in dict(shipped)["en"]


def test_a_translation_of_a_page_shown_is_held_back_for_an_english_query(tmp_path):
    docs = tmp_path / "docs"
    page = "# Widgets\n\nTune a widget before use. Tune it once, then tune the widget again.\n"
    for language in ("en", "de", "fr"):
        (docs / language / "docs").mkdir(parents=True)
        # Translations keep the English names: each matches as the English page does.
        (docs / language / "docs" / "widgets.md").write_text(page, encoding="utf-8")
    (docs / "en" / "docs" / "gears.md").write_text(
        "# Gears\n\nA gear can be tuned like a widget.\n", encoding="utf-8"
    )

    def searched(query: str, hold_back: bool):
        engine = engine_from(
            tmp_path,
            f"config-{hold_back}",
            '[server]\nwatch = false\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
            f'root = "{docs}"\n\n[ranking]\nsemantic = false\nnear_duplicate_similarity = 0\n'
            f"hold_back_translations = {str(hold_back).lower()}\n",
        )
        outcome = asyncio.run(engine.search(SearchParams(query=query, top_k=2, explain=True)))
        whys = {d.location: d.why for stage in outcome.stages for d in stage.drops}
        return [hit.location.split("#")[0] for hit in outcome.hits], whys

    paths, whys = searched("tune a widget", True)
    assert paths == ["en/docs/widgets", "en/docs/gears"]
    shown = "en/docs/widgets#widgets"
    for language in ("de", "fr"):
        why = whys[f"{language}/docs/widgets#widgets"]
        assert why == f"a translation of {shown}, shown above"
    # Off, they take their places below the English page.
    paths, _ = searched("tune a widget", False)
    assert paths[0] == "en/docs/widgets" and paths[1] in {"de/docs/widgets", "fr/docs/widgets"}
    # A query that may be in another language weighs no page as a translation: the pages tie.
    paths, _ = searched("Widget einstellen: tune ä widget", True)
    assert paths == ["de/docs/widgets", "en/docs/widgets"]


def test_a_translation_ranked_above_its_original_gives_way_to_it(tmp_path):
    docs = tmp_path / "docs"
    for language in ("en", "de"):
        (docs / language / "docs").mkdir(parents=True)
    # The English page says less than its translation, which keeps the English words.
    (docs / "en" / "docs" / "widgets.md").write_text("# Widgets\n\nA widget.\n", encoding="utf-8")
    (docs / "de" / "docs" / "widgets.md").write_text(
        "# Widgets\n\nTune a widget: tune the widget, tune every widget you tune.\n",
        encoding="utf-8",
    )
    for name in ("gears", "springs", "levers"):
        (docs / "en" / "docs" / f"{name}.md").write_text(
            f"# {name.title()}\n\nA part is tuned like a widget.\n", encoding="utf-8"
        )

    def searched(hold_back: bool):
        engine = engine_from(
            tmp_path,
            f"config-{hold_back}",
            '[server]\nwatch = false\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
            f'root = "{docs}"\n\n[ranking]\nsemantic = false\nnear_duplicate_similarity = 0\n'
            # A light translation factor: the translation keeps its lead over the original.
            f"translation_factor = 0.9\nhold_back_translations = {str(hold_back).lower()}\n",
        )
        query = SearchParams(query="tune a widget", top_k=3, explain=True)
        outcome = asyncio.run(engine.search(query))
        whys = {d.location: d.why for stage in outcome.stages for d in stage.drops}
        return [hit.location.split("#")[0] for hit in outcome.hits], whys

    paths, _ = searched(False)
    assert paths.index("de/docs/widgets") < paths.index("en/docs/widgets"), paths
    paths, whys = searched(True)
    assert "de/docs/widgets" not in paths and "en/docs/widgets" in paths, paths
    assert whys["de/docs/widgets#widgets"] == (
        "a translation of en/docs/widgets#widgets, which ranks lower"
    )


def path_prior(corpus: Corpus, path: str, query: Query, body: str, **levers) -> float:
    """The score (from 1.0) a block of ``path`` takes from the priors alone for ``query``."""
    cand = candidate(corpus, path, body, 1.0)
    Pipeline(lever_alone(**levers), lambda d: []).priors(query, [cand], lambda s: "product")
    return cand.score


def test_legacy_code_yields_unless_the_query_asks_for_it():
    def scored(path: str, text: str) -> float:
        query = Query(text=text, terms=("pars",))
        return path_prior(Corpus.CODE, path, query, "def parse(text):\n", legacy_factor=0.5)

    for path in (
        "pydantic/v1/main.py",
        "pkg/deprecated/parse.py",
        "lib/_compat/parse.py",
        "src/legacy/parser.ts",
    ):
        assert scored(path, "parse a model") == pytest.approx(0.5), path
    assert scored("pydantic/v1/main.py", "parse a model in pydantic v1") == pytest.approx(1.0)
    assert scored("pkg/deprecated/parse.py", "the deprecated parser") == pytest.approx(1.0)
    # Current code, and a Go service's api/v1/, which is its current API.
    for path in ("pydantic/main.py", "api/v1/parse.go", "pkg/compatible.py"):
        assert scored(path, "parse a model") == pytest.approx(1.0), path


def test_experimental_apis_yield_to_the_stable_ones_unless_the_query_asks_for_them():
    def scored(corpus: Corpus, path: str, text: str = "sum the elements of a tensor") -> float:
        query = Query(text=text, terms=("sum",))
        return path_prior(corpus, path, query, "Sum of the elements.\n", auxiliary_factor=0.5)

    # A documentation page of an experimental namespace, and an experimental package's code.
    assert scored(Corpus.DOCS, "tensorflow~2.4/experimental/numpy/sum.txt") == pytest.approx(0.5)
    assert scored(Corpus.CODE, "pydantic/experimental/pipeline.py") == pytest.approx(0.5)
    assert scored(Corpus.CODE, "src/pkg/_experimental/sum.py") == pytest.approx(0.5)
    # Asked for by name ("experimental", "preview", "unstable").
    for text in ("the experimental numpy sum", "preview API to sum a tensor"):
        assert scored(Corpus.DOCS, "tensorflow~2.4/experimental/numpy/sum.txt", text) == 1.0
    # The stable page, and a file whose own name (not its folder) says experimental.
    assert scored(Corpus.DOCS, "tensorflow~2.4/math/reduce_sum.txt") == 1.0
    assert scored(Corpus.CODE, "sympy/plotting/experimental_lambdify.py") == 1.0


def test_generated_documentation_is_reference_not_build_output():
    def scored(corpus: Corpus, path: str) -> float:
        query = Query(text="vector norm", terms=("norm",))
        return path_prior(corpus, path, query, "numpy.linalg.norm\n", auxiliary_factor=0.5)

    assert scored(Corpus.DOCS, "numpy/reference/generated/numpy.linalg.norm.txt") == 1.0
    assert scored(Corpus.CODE, "pkg/generated/norm.py") == pytest.approx(0.5)


def test_examples_yield_to_the_library_unless_the_query_asks_for_them():
    def scored(corpus: Corpus, path: str, text: str = "parse a model") -> float:
        query = Query(text=text, terms=("pars",))
        return path_prior(corpus, path, query, "def parse(text):\n", auxiliary_factor=0.5)

    for path in (
        "examples/parse_models.py",
        "galleries/examples/parsing/demo.py",
        "docs_src/parsing/tutorial001.py",
        "doc/usage/extensions/example_google.py",
    ):
        assert scored(Corpus.CODE, path) == pytest.approx(0.5), path
    assert scored(Corpus.DOCS, "docs/examples/parsing.md") == pytest.approx(0.5)
    assert scored(Corpus.CODE, "examples/parse_models.py", "an example of parsing") == 1.0
    # The library itself, a docs page, and a docs folder's build configuration (tooling).
    assert scored(Corpus.CODE, "pkg/parse.py") == 1.0
    assert scored(Corpus.DOCS, "docs/concepts/parsing.md") == 1.0
    assert scored(Corpus.CODE, "docs/conf.py") == pytest.approx(0.5)


def test_a_ranking_mode_asks_for_examples():
    query = Query(text="login with a password", terms=("login",), mode="implementation")
    path = "docs_src/security/tutorial003.py"
    body = "def login(form):\n"
    assert path_prior(Corpus.CODE, path, query, body, auxiliary_factor=0.5) == 1.0
    # The same query in the default mode does not ask.
    default = dataclasses.replace(query, mode="default")
    assert path_prior(Corpus.CODE, path, default, body, auxiliary_factor=0.5) == 0.5


def test_two_words_of_a_sentence_may_spell_a_name():
    options = tuple(sorted(RankingSettings().token_options().items()))
    forms = phrase_name_forms("The targets are one hot, and the latex printer is slow.", options)
    assert "one_hot" in forms and "onehot" in forms
    # Joined as one word, a name is kept as the index keeps a whole identifier (stemmed).
    assert "latex_printer" in forms and tokenize("LatexPrinter", **dict(options))[0] in forms
    # A stopword ("are", "the") joins no name; nor do words of code, links or paths.
    assert not any(form.startswith(("are_", "the_")) for form in forms)
    assert phrase_name_forms("see `one hot` and ```\nzero mean\n```", options) == ()
    # A capitalised word or an attribute (x.one hot) is not a sentence's plain word.
    assert phrase_name_forms("One hot", options) == ()
    assert phrase_name_forms("x.one hot", options) == ()
    # A long text's first PHRASE_PAIRS distinct pairs are read, each once.
    words = [f"w{'abcdefghijklmnopqrstuvwxyz'[i % 26]}{'abcdefghij'[i // 26]}" for i in range(260)]
    long_text = " ".join(words[:2] * 3 + words)
    forms = phrase_name_forms(long_text, options)
    assert f"{words[0]}_{words[1]}" in forms and f"{words[1]}_{words[0]}" in forms
    assert len([form for form in forms if "_" in form]) == PHRASE_PAIRS


def test_a_pasted_text_spelling_a_page_name_finds_the_page_by_it(tmp_path):
    """The documentation pool of a pasted text also searches for the identifiers its words
    spell (``phrase_names``): "one hot" finds the page about ``one_hot``."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "one_hot.md").write_text(
        "# one_hot\n\nReturns a tensor: `one_hot(indices, depth)` sets position i to 1.\n",
        encoding="utf-8",
    )
    for name in ("metrics", "targets", "labels"):
        (docs / f"{name}.md").write_text(
            f"# {name}\n\nA custom metric measures the accuracy of a class during training: "
            "select the targets and the labels of every class of a multi-class dataset, as an "
            "integer tensor of int32.\n",
            encoding="utf-8",
        )
    text = (
        "I am building a custom metric to measure the accuracy of one class in my multi-class "
        "dataset during training. I am having trouble selecting the class. The targets are one "
        "hot (the class 0 label is [1 0 0 0 0]). I have 10 classes in total, so I need an n*10 "
        "tensor as result, of int32, from a list of integer labels."
    )

    def first(lever: str) -> tuple[str, tuple[str, ...]]:
        engine = engine_from(
            tmp_path,
            f"config-{lever}",
            '[server]\nwatch = false\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
            f'root = "{docs}"\n\n[ranking]\nsemantic = false\nphrase_names = {lever}\n',
        )
        outcome = asyncio.run(engine.search(SearchParams(query=text, top_k=3, explain=True)))
        # Explain says what the documentation's pool searched for besides the terms.
        return outcome.hits[0].location.split("#")[0], tuple(outcome.understood.docs_terms)

    assert RankingSettings().is_pasted(text)
    page, phrased = first("false")
    assert page != "one_hot" and phrased == ()
    page, phrased = first("true")
    assert "one_hot" in phrased and page == "one_hot"
    # A search of code alone has no documentation pool to search them.
    engine = engine_from(
        tmp_path,
        "config-true",
        '[server]\nwatch = false\n\n[[sources]]\nname = "docs"\nkind = "markdown"\n'
        f'root = "{docs}"\n\n[ranking]\nsemantic = false\nphrase_names = true\n',
    )
    code = SearchParams(query=text, kinds=(Corpus.CODE,), explain=True)
    assert asyncio.run(engine.search(code)).understood.docs_terms == []
