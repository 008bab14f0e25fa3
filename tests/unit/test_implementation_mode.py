"""Unit tests for the ``implementation`` ranking mode plugin."""

from __future__ import annotations

import pytest

from scriptorium.domain.model import Block, Candidate, Corpus, Query, RefKind, SourceDocument
from scriptorium.plugins import build_plugin_manager, collect
from scriptorium.ranking.modes import RankingMode
from scriptorium.sources.base import content_hash
from scriptorium_plugins.code.extractor import CodeExtractor
from scriptorium_plugins.implementation import (
    BOOSTS,
    MAX_COMBINED_BOOST,
    ImplementationMode,
    is_config_path,
    is_entrypoint,
    is_example_path,
)
from tests.support.daemon import CORPUS

FASTAPI = CORPUS

QUERY = Query(text="read a hero by id", terms=("read", "hero", "id"), mode="implementation")


def code_candidate(path: str, text: str, anchor: str, score: float = 1.0) -> Candidate:
    extraction = CodeExtractor().extract(path, text)
    # "L1-" picks the module block that starts the file, whatever its length.
    block = next(
        b
        for b in extraction.blocks
        if b.anchor == anchor or (anchor.endswith("-") and b.anchor.startswith(anchor))
    )
    document = SourceDocument(
        source="fastapi",
        path=path,
        text=text,
        corpus=Corpus.CODE,
        content_hash=content_hash(text),
        blocks=extraction.blocks,
        language=extraction.language,
    )
    return Candidate(source="fastapi", document=document, block=block, score=score)


def doc_candidate(path: str, body: str, score: float = 1.0) -> Candidate:
    block = Block(
        kind=RefKind.DOC,
        start_line=1,
        end_line=len(body.splitlines()),
        title="Heroes",
        section_path=("Heroes",),
        anchor="heroes",
        body=body,
        level=2,
    )
    document = SourceDocument(
        source="docs",
        path=path,
        text=body,
        corpus=Corpus.DOCS,
        content_hash=content_hash(body),
        blocks=(block,),
    )
    return Candidate(source="docs", document=document, block=block, score=score)


PROSE = "## Heroes\n\nA hero has a name and a secret identity. Read one hero by its id.\n"


def reason_names(candidate: Candidate) -> list[str]:
    return [r.name for r in candidate.reasons]


def test_route_handler_outranks_prose_with_equal_base_score(fastapi_corpus) -> None:
    relpath = "docs_src/sql_databases/tutorial002_an_py310.py"
    handler = code_candidate(relpath, (FASTAPI / relpath).read_text("utf-8"), "read_hero")
    prose = doc_candidate("docs/en/docs/tutorial/heroes.md", PROSE)
    candidates = [prose, handler]

    ImplementationMode().rerank(QUERY, candidates)

    assert handler.score > prose.score
    assert prose.score == 1.0 and prose.reasons == []
    names = reason_names(handler)
    assert names[0] == "route"
    # The handler takes ``session: SessionDep``; the Depends() lives in the alias, not here.
    assert names == ["route", "example"]
    route = handler.reasons[0]
    assert route.weight > 1.0
    assert "GET /heroes/{hero_id} → read_hero" in route.detail
    assert handler.score <= MAX_COMBINED_BOOST


def test_entrypoint_and_decorator_boosts_on_real_files(fastapi_corpus) -> None:
    relpath = "docs_src/bigger_applications/app_an_py310/main.py"
    wiring = code_candidate(relpath, (FASTAPI / relpath).read_text("utf-8"), "L1-")
    ImplementationMode().rerank(QUERY, [wiring])
    assert {"entrypoint", "dependency-injection", "example"} <= set(reason_names(wiring))
    assert "route" not in reason_names(wiring)  # the module block holds no route

    relpath = "docs_src/settings/app02_an_py310/main.py"
    cached = code_candidate(relpath, (FASTAPI / relpath).read_text("utf-8"), "get_settings")
    ImplementationMode().rerank(QUERY, [cached])
    decorator = next(r for r in cached.reasons if r.name == "decorator")
    assert decorator.detail == "@lru_cache"
    assert "configuration" in reason_names(cached)  # get_settings() reads settings


def test_plain_code_gets_no_boost() -> None:
    text = "def add(a, b):\n    return a + b\n"
    plain = code_candidate("lib/mathutil.py", text, "add", score=0.7)
    ImplementationMode().rerank(QUERY, [plain])
    assert plain.score == 0.7
    assert plain.reasons == []


def test_docs_with_code_examples_get_a_smaller_boost() -> None:
    included = doc_candidate(
        "docs/en/docs/tutorial/first-steps.md",
        "## Create an app\n\n{* ../../docs_src/first_steps/tutorial001_py310.py hl[1] *}\n",
    )
    fenced = doc_candidate("docs/guide.md", "## Run\n\n```console\n$ fastapi dev\n```\n")
    prose = doc_candidate("docs/about.md", PROSE)
    handler = code_candidate("app/main.py", '@app.get("/")\ndef index():\n    return {}\n', "index")
    ImplementationMode().rerank(QUERY, [included, fenced, prose, handler])

    assert reason_names(included) == ["has-code-example"]
    assert "docs_src/first_steps/tutorial001_py310.py" in included.reasons[0].detail
    assert reason_names(fenced) == ["has-code-example"]
    assert prose.score == 1.0
    assert 1.0 < included.score < handler.score


def test_combined_boost_is_capped() -> None:
    text = (
        "@app.post('/items')\n"
        "@limiter.limit('5/minute')\n"
        "def create(item: Item, db: Session = Depends(get_db), key=os.environ['KEY']):\n"
        "    return item\n"
    )
    everything = code_candidate("examples/cmd/main.py", text, "create", score=2.0)
    ImplementationMode().rerank(QUERY, [everything])
    assert reason_names(everything) == [
        "route",
        "entrypoint",
        "dependency-injection",
        "decorator",
        "configuration",
        "example",
    ]
    assert 2.0 < everything.score <= 2.0 * MAX_COMBINED_BOOST

    strong = ImplementationMode(boosts={"route": 1.4, "entrypoint": 1.4, "example": 1.4})
    capped = code_candidate("examples/cmd/main.py", text, "create", score=2.0)
    strong.rerank(QUERY, [capped])
    # Route and entry point apply in full; the next boost is trimmed to the cap and the rest
    # find no room left.
    assert reason_names(capped) == ["route", "entrypoint", "dependency-injection"]
    assert capped.reasons[2].weight < BOOSTS["dependency-injection"]
    assert capped.score == pytest.approx(2.0 * MAX_COMBINED_BOOST)
    product = 1.0
    for reason in capped.reasons:
        assert reason.weight > 1.0
        product *= reason.weight
    assert product == pytest.approx(MAX_COMBINED_BOOST)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("app/main.py", True),
        ("server.ts", True),
        ("src/index.ts", True),
        ("Program.cs", True),
        ("Startup.cs", True),
        ("cmd/api/main.go", True),
        ("cmd/tool/run.go", True),
        ("src/main/java/com/x/DemoApplication.java", True),
        ("app/utils.py", False),
        ("app/routers/items.py", False),
    ],
)
def test_is_entrypoint(path: str, expected: bool) -> None:
    assert is_entrypoint(path) is expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("app/config.py", True),
        ("app/settings.py", True),
        ("appsettings.Development.json", True),
        ("pyproject.toml", True),
        ("deploy/values.yaml", True),
        ("app/models.py", False),
    ],
)
def test_is_config_path(path: str, expected: bool) -> None:
    assert is_config_path(path) is expected


def test_is_example_path() -> None:
    assert is_example_path("docs_src/security/tutorial001_py310.py")
    assert is_example_path("examples/todo/app.ts")
    assert not is_example_path("fastapi/security/oauth2.py")


def test_mode_registers_through_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIPTORIUM_PLUGINS", "implementation")
    registry = collect(build_plugin_manager())
    mode = registry.mode("implementation")
    assert isinstance(mode, RankingMode)
    assert isinstance(mode, ImplementationMode)
    assert mode.prefer_mixed_corpora is True
    assert mode.description
