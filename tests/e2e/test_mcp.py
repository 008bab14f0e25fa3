"""The MCP bridge end to end: the MCP SDK's own stdio client drives ``python -m scriptorium.mcp``
against a real daemon over the FastAPI docs and code, plus two small extra doc sites that share
a page (so a bare location is ambiguous).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, ListToolsResult

from tests.support.daemon import CORPUS, Daemon, free_port
from tests.support.waiting import wait_for

TOOLS = {
    "search_docs",
    "get_doc",
    "search_code",
    "get_content",
    "outline",
    "expand_related",
    "summarize_flow",
    "guide_implementation",
    "list_sources",
}
NOT_FOUND = "Document not found at location '{}'. Use 'search_docs' to find available documents."
SHARED_PAGE = "handbook/onboarding"


class McpSession:
    """One MCP client session on a background event loop, called synchronously from tests."""

    def __init__(
        self,
        args: list[str],
        *,
        env: dict[str, str] | None = None,
        errlog=None,
        command: list[str] | None = None,
        cwd: Path | None = None,
    ):
        program, *head = command or [sys.executable, "-m", "scriptorium.mcp"]
        self.params = StdioServerParameters(command=program, args=[*head, *args], env=env, cwd=cwd)
        self.errlog = errlog
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.client: Client | None = None

    def __enter__(self) -> McpSession:
        self.thread.start()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._main = asyncio.run_coroutine_threadsafe(self._run(ready), self.loop)
        try:
            ready.result(timeout=60)
        except BaseException:
            self._stop_loop()
            raise
        return self

    async def _run(self, ready: concurrent.futures.Future[None]) -> None:
        self._stop = asyncio.Event()
        transport = stdio_client(self.params, errlog=self.errlog) if self.errlog else self.params
        try:
            async with Client(transport) as client:
                self.client = client
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    def _await(self, coro, timeout: float = 120) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def list_tools(self) -> ListToolsResult:
        return self._await(self.client.list_tools())

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return self._await(self.client.call_tool(name, arguments))

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        with contextlib.suppress(Exception):
            self._main.result(timeout=30)
        self._stop_loop()

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


def text_json(result: CallToolResult) -> Any:
    """The answer's JSON text; any further content is a note in words (a cap that applied)."""
    assert result.content and all(c.type == "text" for c in result.content)
    return json.loads(result.content[0].text)


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful call, checked against its text twin."""
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    shown = text_json(result)
    wrapped = result.structured_content.get("result")
    assert shown == (wrapped if isinstance(wrapped, list) else result.structured_content)
    return result.structured_content


def write_site(root: Path, title: str) -> Path:
    (root / "handbook").mkdir(parents=True)
    (root / "handbook" / "onboarding.md").write_text(
        f"# {title} onboarding\n\nHow new contributors get a {title.lower()} workstation.\n\n"
        "## Steps\n\n1. Install the toolchain.\n2. Clone the repository.\n3. Run the tests.\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture(scope="module")
def tree(fastapi_corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-tree")
    shutil.copytree(CORPUS / "docs" / "en" / "docs", root / "en")
    shutil.copytree(CORPUS / "fastapi", root / "code" / "fastapi")
    shutil.copytree(CORPUS / "docs_src", root / "code" / "docs_src")
    write_site(root / "alpha", "Alpha")
    write_site(root / "beta", "Beta")
    return root


@pytest.fixture(scope="module")
def daemon(tree: Path) -> Iterator[Daemon]:
    config = tree / "scriptorium.toml"
    sources = [
        ("en", "markdown", "en", 'default = true\nurl_base = "https://fastapi.tiangolo.com"'),
        ("code", "code", "code", 'default = true\ninclude = ["**/*.py"]'),
        ("alpha", "markdown", "alpha", 'url_base = "https://alpha.example"'),
        ("beta", "markdown", "beta", 'url_base = "https://beta.example"'),
    ]
    config.write_text(
        "[server]\nwatch = false\n\n"
        + "\n".join(
            f'[[sources]]\nname = "{n}"\nkind = "{k}"\nroot = "{tree / r}"\n{extra}\n'
            for n, k, r, extra in sources
        ),
        encoding="utf-8",
    )
    with Daemon(["--config", str(config)], tree / "state") as running:
        yield running


@pytest.fixture(scope="module")
def mcp(daemon: Daemon) -> Iterator[McpSession]:
    with McpSession(["--target", daemon.address]) as session:
        yield session


# -- the tool list ---------------------------------------------------------------------------------


def test_lists_every_tool_with_a_description_and_schemas(mcp):
    tools = {t.name: t for t in mcp.list_tools().tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert len(tool.description) > 120, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert tool.annotations and tool.annotations.read_only_hint is True
    # Descriptions steer the agent from one tool to the next.
    assert "get_doc" in tools["search_docs"].description
    assert "search_code" in tools["search_docs"].description
    assert "search_docs" in tools["get_doc"].description
    assert "Candidates" in tools["get_doc"].description
    assert "candidates" in tools["get_content"].description

    docs = tools["search_docs"].input_schema
    assert docs["required"] == ["query"]
    assert docs["properties"]["query"]["type"] == "string"
    assert docs["properties"]["maxResults"] == {
        **docs["properties"]["maxResults"],
        "type": "integer",
        "default": 10,
    }
    assert tools["get_doc"].input_schema["required"] == ["location"]
    assert set(tools["search_code"].input_schema["properties"]) == {
        "query",
        "maxResults",
        "library",
    }
    assert docs["properties"]["library"]["default"] == ""
    content = tools["get_content"].input_schema["properties"]
    assert set(content) == {"ref_id", "location", "mode", "max_lines", "max_chars", "cursor"}
    assert content["max_chars"]["default"] == 12_000
    doc = tools["get_doc"].input_schema["properties"]
    assert set(doc) == {"location", "maxChars", "cursor"} and doc["maxChars"]["default"] == 12_000
    assert tools["outline"].input_schema["required"] == ["location"]
    assert content["mode"]["enum"] == ["snippet", "full", "multi_range", "definition"]
    assert tools["expand_related"].input_schema["required"] == ["ref_ids"]
    assert tools["summarize_flow"].input_schema["properties"]["style"]["enum"] == [
        "compact",
        "detailed",
    ]
    assert tools["guide_implementation"].input_schema["required"] == ["topic"]
    assert "loading" in tools["list_sources"].description
    hit = tools["search_docs"].output_schema["$defs"]["DocHit"]
    # Library (name@version) only for a hit from an installed dependency: not required.
    assert set(hit["properties"]) == {"Title", "Path", "Url", "Snippet", "Score", "Library"}
    assert set(hit["required"]) == {"Title", "Path", "Url", "Snippet", "Score"}


# -- search_docs / get_doc -------------------------------------------------------------------------


def test_search_docs_returns_pages_in_the_documented_shape(mcp):
    result = mcp.call(
        "search_docs", {"query": "declare path parameters with types", "maxResults": 5}
    )
    hits = ok(result)["result"]
    assert 1 <= len(hits) <= 5
    assert hits[0]["Path"] == "tutorial/path-params"
    assert hits[0]["Title"] == "Path Parameters"
    assert hits[0]["Url"] == "https://fastapi.tiangolo.com/tutorial/path-params"
    for hit in hits:
        assert set(hit) == {"Title", "Path", "Url", "Snippet", "Score"}
        assert "#" not in hit["Path"] and "#" not in hit["Url"]
        assert isinstance(hit["Score"], float) and hit["Score"] > 0
        assert 0 < len(hit["Snippet"]) <= 210
        assert "\n" not in hit["Snippet"]
    assert len({h["Path"] for h in hits}) == len(hits)
    assert [h["Score"] for h in hits] == sorted((h["Score"] for h in hits), reverse=True)
    assert "path parameter" in hits[0]["Snippet"].lower()


def test_search_docs_clamps_max_results(mcp):
    assert len(ok(mcp.call("search_docs", {"query": "parameter", "maxResults": 0}))["result"]) == 1
    assert len(ok(mcp.call("search_docs", {"query": "parameter", "maxResults": -3}))["result"]) == 1
    many = ok(mcp.call("search_docs", {"query": "parameter", "maxResults": 500}))["result"]
    default = ok(mcp.call("search_docs", {"query": "parameter"}))["result"]
    assert len(default) == 10
    assert 10 < len(many) <= 25


def test_a_cap_that_applied_is_said(mcp):
    capped = mcp.call("search_docs", {"query": "parameter", "maxResults": 50})
    assert not capped.is_error
    notes = [c.text for c in capped.content[1:]]
    assert any("maxResults 50 is above the cap of 25" in n for n in notes), notes
    plain = mcp.call("search_code", {"query": "APIRouter", "maxResults": 5})
    assert not any("cap" in c.text for c in plain.content[1:])
    code = mcp.call("search_code", {"query": "APIRouter", "maxResults": 40})
    assert any("maxResults 40 is above the cap" in c.text for c in code.content[1:])


def test_an_unknown_argument_is_refused_naming_the_accepted_ones(mcp):
    refused = mcp.call("search_docs", {"query": "parameter", "top_k": 5})
    assert refused.is_error
    text = refused.content[0].text
    assert "'top_k'" in text, text
    assert "query" in text and "maxResults" in text and "tokenBudget" in text, text
    assert mcp.call("get_doc", {"location": "tutorial/path-params", "mode": "full"}).is_error


def test_search_docs_covers_docs_only_and_other_sites_keep_their_prefix(mcp):
    hits = ok(mcp.call("search_docs", {"query": "onboarding workstation toolchain"}))["result"]
    paths = [h["Path"] for h in hits]
    assert set(paths[:2]) == {f"alpha/{SHARED_PAGE}", f"beta/{SHARED_PAGE}"}
    assert not any(p.endswith(".py") or "#L" in p for p in paths)
    alpha = next(h for h in hits if h["Path"].startswith("alpha/"))
    assert alpha["Url"].startswith("https://alpha.example/")


def test_get_doc_returns_the_whole_page_untruncated_when_asked(mcp, tree):
    for location, file in [
        ("tutorial/path-params", "tutorial/path-params.md"),
        ("release-notes", "release-notes.md"),  # > 7,000 lines: longer than any default cap
    ]:
        page = ok(mcp.call("get_doc", {"location": location, "maxChars": 0}))
        assert set(page) == {"Location", "Url", "Content"}
        assert page["Location"] == location
        assert page["Url"] == f"https://fastapi.tiangolo.com/{location}"
        text = (tree / "en" / file).read_text(encoding="utf-8")
        assert page["Content"].rstrip("\n") == text.rstrip("\n")


def _get_doc_parts(mcp, location: str, **arguments: Any) -> list[dict[str, Any]]:
    parts = [ok(mcp.call("get_doc", {"location": location, **arguments}))]
    while "NextCursor" in parts[-1]:
        cursor = parts[-1]["NextCursor"]
        parts.append(ok(mcp.call("get_doc", {"location": location, "cursor": cursor, **arguments})))
        assert len(parts) < 200, "the cursors do not advance"
    return parts


def test_get_doc_serves_a_long_page_in_parts_within_its_default_budget(mcp, tree):
    text = (tree / "en" / "release-notes.md").read_text(encoding="utf-8")
    parts = _get_doc_parts(mcp, "release-notes")
    assert len(parts) > 10
    assert "".join(p["Content"] for p in parts).rstrip("\n") == text.rstrip("\n")
    for number, part in enumerate(parts, start=1):
        assert len(part["Content"]) <= 12_000
        assert part["Part"]["Number"] == number and part["Part"]["Count"] == len(parts)
        assert part["TotalChars"] == sum(len(p["Content"]) for p in parts)
        assert part["Location"] == "release-notes"
    # A smaller cap gives more, smaller parts of the same page.
    small = _get_doc_parts(mcp, "release-notes", maxChars=50_000)
    assert "".join(p["Content"] for p in small) == "".join(p["Content"] for p in parts)
    assert all(len(p["Content"]) <= 50_000 for p in small) and len(small) < len(parts)
    # A short page stays one answer, in the shape other doc tools use.
    short = ok(mcp.call("get_doc", {"location": "tutorial/path-params"}))
    assert set(short) == {"Location", "Url", "Content"}


def test_get_doc_refuses_a_bad_cursor_as_a_tool_error(mcp):
    bad = mcp.call("get_doc", {"location": "release-notes", "cursor": "not-a-cursor"})
    assert bad.is_error and "cursor" in bad.content[0].text
    first = ok(mcp.call("get_doc", {"location": "release-notes"}))
    other = mcp.call("get_doc", {"location": "tutorial/path-params", "cursor": first["NextCursor"]})
    assert other.is_error and "FAILED_PRECONDITION" in other.content[0].text
    assert mcp.call("get_doc", {"location": "release-notes", "maxChars": 20}).is_error


def test_every_search_docs_path_fetches_with_get_doc(mcp):
    for query in ("security oauth2 scopes", "testing with TestClient", "onboarding"):
        for hit in ok(mcp.call("search_docs", {"query": query, "maxResults": 5}))["result"]:
            page = ok(mcp.call("get_doc", {"location": hit["Path"]}))
            assert "NotFound" not in page, hit
            assert page["Url"] == hit["Url"]
            assert page["Content"]


def test_get_doc_reports_where_a_normalised_location_came_from(mcp):
    by_variant = ok(mcp.call("get_doc", {"location": "tutorial/path-params.md"}))
    assert by_variant["Location"] == "tutorial/path-params"
    by_leaf = ok(mcp.call("get_doc", {"location": "path-params"}))
    assert by_leaf["Location"] == "tutorial/path-params"
    with_section = ok(mcp.call("get_doc", {"location": "tutorial/path-params#order-matters"}))
    assert with_section["Location"] == "tutorial/path-params"
    assert with_section["Content"].startswith("# Path Parameters")
    qualified = ok(mcp.call("get_doc", {"location": f"alpha/{SHARED_PAGE}"}))
    assert qualified["Content"].startswith("# Alpha onboarding")
    assert qualified["Url"] == f"https://alpha.example/{SHARED_PAGE}"


def test_get_doc_not_found_has_the_documented_shape(mcp):
    location = "reference/missing-page"
    result = mcp.call("get_doc", {"location": location})
    assert not result.is_error
    expected = {"NotFound": True, "Location": location, "Message": NOT_FOUND.format(location)}
    assert result.structured_content == expected
    assert text_json(result) == expected


def test_get_doc_ambiguous_location_lists_the_candidates(mcp):
    page = ok(mcp.call("get_doc", {"location": SHARED_PAGE}))
    assert page["NotFound"] is True
    assert page["Reason"] == "ambiguous"
    assert page["Candidates"] == [f"alpha/{SHARED_PAGE}", f"beta/{SHARED_PAGE}"]
    assert all(c in page["Message"] for c in page["Candidates"])
    chosen = ok(mcp.call("get_doc", {"location": page["Candidates"][1]}))
    assert chosen["Content"].startswith("# Beta onboarding")


def test_get_doc_shared_leaf_lists_the_pages_that_share_it(mcp):
    page = ok(mcp.call("get_doc", {"location": "first-steps"}))
    assert page["NotFound"] is True
    assert page["Reason"] == "not_found"
    assert page["Candidates"] == ["tutorial/first-steps", "tutorial/security/first-steps"]
    assert all(c in page["Message"] for c in page["Candidates"])
    chosen = ok(mcp.call("get_doc", {"location": page["Candidates"][1]}))
    assert chosen["Location"] == "tutorial/security/first-steps"

    content = ok(mcp.call("get_content", {"location": "first-steps"}))
    assert content["found"] is False
    assert content["error"]["code"] == "NOT_FOUND"
    assert content["resolution"]["reason"] == "not_found"
    assert content["resolution"]["candidates"] == page["Candidates"]
    assert "names 2 pages" in content["resolution"]["detail"]


def test_get_doc_unknown_site_says_so(mcp):
    page = ok(mcp.call("get_doc", {"location": "iac-modules/release-notes/4.2.0"}))
    assert page["NotFound"] is True
    assert page["Reason"] == "unknown_site"
    assert "iac-modules" in page["Message"]


def test_bad_arguments_are_tool_errors(mcp):
    assert mcp.call("get_doc", {}).is_error
    assert mcp.call("search_docs", {"query": 3}).is_error
    refused = mcp.call("get_doc", {"location": "../../etc/passwd"})
    assert refused.is_error
    assert "INVALID_ARGUMENT" in refused.content[0].text


# -- search_code / get_content ---------------------------------------------------------------------


def test_search_code_returns_definitions(mcp):
    hits = ok(mcp.call("search_code", {"query": "OAuth2PasswordBearer", "maxResults": 3}))["result"]
    assert 1 <= len(hits) <= 3
    top = hits[0]
    assert set(top) == {"Title", "Path", "Url", "Snippet", "Score", "Language", "Lines"}
    assert top["Title"] == "OAuth2PasswordBearer"
    span = f"#L{top['Lines']['Start']}-L{top['Lines']['End']}"
    assert top["Path"] == f"fastapi/security/oauth2.py{span}"
    assert top["Language"] == "python"
    assert 1 <= top["Lines"]["Start"] <= top["Lines"]["End"]
    assert "class OAuth2PasswordBearer" in top["Snippet"]
    assert all(not h["Path"].startswith(("tutorial/", "alpha/")) for h in hits)


def test_get_content_by_location_and_by_ref(mcp, tree):
    location = "tutorial/first-steps#step-1-import-fastapi"
    section = ok(mcp.call("get_content", {"location": location, "mode": "full"}))
    assert section["found"] is True
    assert section["location"] == location
    assert section["kind"] == "doc"
    assert section["resolution"]["reason"] == "resolved"
    assert section["resolution"]["rule"] == "exact"
    lines = (tree / "en" / "tutorial" / "first-steps.md").read_text("utf-8").splitlines()
    expected = lines[section["start_line"] - 1 : section["end_line"]]
    assert section["content"].split("\n") == expected

    again = ok(mcp.call("get_content", {"ref_id": section["ref_id"], "mode": "multi_range"}))
    assert again["location"] == location
    assert again["ranges"] and all(r["reason"] for r in again["ranges"])
    assert all(
        section["start_line"] <= r["start_line"] <= r["end_line"] <= section["end_line"]
        for r in again["ranges"]
    )

    code = ok(
        mcp.call(
            "get_content",
            {"location": "fastapi/security/oauth2.py", "mode": "full", "max_lines": 5},
        )
    )
    assert code["kind"] == "file"
    assert code["truncated"] is True
    assert len(code["content"].splitlines()) == 5


def _bearer_call(tree: Path) -> tuple[list[str], int, int, int]:
    """oauth2.py's lines, the OAuth2PasswordBearer class line and its __call__'s first and last."""
    lines = (tree / "code" / "fastapi/security/oauth2.py").read_text("utf-8").splitlines()
    cls = lines.index("class OAuth2PasswordBearer(OAuth2):") + 1
    start = next(i for i in range(cls, len(lines)) if lines[i - 1].startswith("    async def __"))
    end = lines.index("        return param", start) + 1
    return lines, cls, start, end


def test_get_doc_reads_a_definition_by_name_or_module_path(mcp, tree):
    lines, cls, start, end = _bearer_call(tree)
    expected = "\n".join([lines[cls - 1], *lines[start - 1 : end]])
    for location in (
        "fastapi/security/oauth2.py#OAuth2PasswordBearer.__call__",
        "fastapi.security.oauth2.OAuth2PasswordBearer.__call__",
    ):
        page = ok(mcp.call("get_doc", {"location": location}))
        assert page["Content"] == expected, location
        assert page["Location"] == "fastapi/security/oauth2.py#OAuth2PasswordBearer.__call__"
    typo = "fastapi/security/oauth2.py#OAuth2PasswordBarer"
    missing = ok(mcp.call("get_doc", {"location": typo}))
    assert missing["NotFound"] is True
    assert "fastapi/security/oauth2.py#OAuth2PasswordBearer" in missing["Candidates"]


def test_get_doc_reads_exactly_the_lines_a_search_code_path_names(mcp, tree):
    found = ok(mcp.call("search_code", {"query": "OAuth2PasswordBearer", "maxResults": 3}))
    hit = found["result"][0]
    page = ok(mcp.call("get_doc", {"location": hit["Path"]}))
    lines = (tree / "code" / "fastapi/security/oauth2.py").read_text("utf-8").splitlines()
    assert page["Content"] == "\n".join(lines[hit["Lines"]["Start"] - 1 : hit["Lines"]["End"]])
    assert page["Content"].startswith("class OAuth2PasswordBearer(OAuth2):")


def test_get_content_definition_mode_names_the_enclosing_signatures(mcp, tree):
    lines, cls, start, end = _bearer_call(tree)
    location = f"fastapi/security/oauth2.py#L{start + 2}"
    reply = ok(mcp.call("get_content", {"location": location, "mode": "definition"}))
    assert reply["scope"] == "definition"
    assert reply["symbol"] == "OAuth2PasswordBearer.__call__"
    assert reply["content"] == "\n".join([lines[cls - 1], *lines[start - 1 : end]])
    assert reply["context"] == [
        {"start_line": cls, "end_line": cls, "reason": "OAuth2PasswordBearer"}
    ]
    exact = ok(mcp.call("get_content", {"location": location}))
    assert exact["scope"] == "lines" and exact["content"] == lines[start + 1]


def test_get_content_unresolved_location_carries_the_resolution(mcp):
    ambiguous = ok(mcp.call("get_content", {"location": SHARED_PAGE}))
    assert ambiguous["found"] is False
    assert ambiguous["error"]["code"] == "FAILED_PRECONDITION"
    assert ambiguous["resolution"]["reason"] == "ambiguous"
    assert ambiguous["resolution"]["candidates"] == [
        f"alpha/{SHARED_PAGE}",
        f"beta/{SHARED_PAGE}",
    ]
    assert "content" not in ambiguous

    missing = ok(mcp.call("get_content", {"location": "tutorial/no-such-page"}))
    assert missing["found"] is False
    assert missing["error"]["code"] == "NOT_FOUND"
    assert missing["resolution"]["reason"] == "not_found"
    assert missing["requested_location"] == "tutorial/no-such-page"


def test_get_content_needs_exactly_one_of_ref_and_location(mcp):
    assert mcp.call("get_content", {}).is_error
    both = mcp.call("get_content", {"ref_id": "r1.x", "location": "tutorial/path-params"})
    assert both.is_error
    assert "exactly one" in both.content[0].text


def test_outline_of_a_page_and_of_a_python_file(mcp, tree):
    page = ok(mcp.call("outline", {"location": "tutorial/first-steps"}))
    assert page["found"] is True and page["kind"] == "doc"
    text = (tree / "en" / "tutorial" / "first-steps.md").read_text("utf-8").splitlines()
    assert page["total_lines"] == len(text)
    headings = [e for e in page["outline"] if e["kind"] == "heading"]
    assert headings and headings[0]["level"] == 1
    for entry in headings:
        assert text[entry["start_line"] - 1].startswith("#" * entry["level"] + " ")
        section = ok(mcp.call("get_content", {"location": entry["location"], "mode": "full"}))
        assert section["total_chars"] == entry["chars"]
    code = ok(mcp.call("outline", {"location": "fastapi/security/oauth2.py"}))
    assert code["kind"] == "file"
    classes = {e["title"]: e for e in code["outline"] if e["kind"] == "class"}
    bearer = classes["OAuth2PasswordBearer"]
    source = (tree / "code" / "fastapi/security/oauth2.py").read_text("utf-8").splitlines()
    assert source[bearer["start_line"] - 1 : bearer["end_line"]][0].startswith("class ")
    assert bearer["lines"] == bearer["end_line"] - bearer["start_line"] + 1
    missing = ok(mcp.call("outline", {"location": "tutorial/no-such-page"}))
    assert missing["found"] is False and missing["error"]["code"] == "NOT_FOUND"


def test_the_tools_never_return_more_than_their_budget(mcp):
    """Every budget a tool takes caps the text it returns, and the spend it reports is true."""
    from scriptorium.text import estimate_tokens

    for location in ("release-notes", "tutorial/path-params"):
        for budget in (200, 1_000, 5_000):
            page = ok(mcp.call("get_doc", {"location": location, "maxChars": budget}))
            assert 0 < len(page["Content"]) <= budget
    fetched = ok(
        mcp.call(
            "get_content", {"location": "fastapi/routing.py", "mode": "full", "max_chars": 900}
        )
    )
    assert len(fetched["content"]) <= 900 and fetched["next_cursor"]
    assert fetched["tokens_used"] == estimate_tokens(fetched["content"])
    default = ok(mcp.call("get_content", {"location": "fastapi/routing.py", "mode": "full"}))
    assert len(default["content"]) <= 12_000 and default["total_chars"] > 12_000

    for budget in (10, 60, 200):
        found = mcp.call("search_docs", {"query": "dependencies with yield", "tokenBudget": budget})
        hits = ok(found)["result"]
        spent = sum(estimate_tokens(h["Snippet"]) for h in hits)
        assert hits and spent <= budget and found.structured_content["TokensUsed"] == spent

    seed = ["tutorial/path-params#path-parameters-with-types"]
    for budget in (15, 120):
        related = ok(mcp.call("expand_related", {"ref_ids": seed, "token_budget": budget}))
        spent = sum(estimate_tokens(r["snippet"]) for r in related["related"])
        assert related["related"] and spent == related["tokens_used"] <= budget
        flow = ok(
            mcp.call(
                "summarize_flow",
                {"ref_ids": ["tutorial/first-steps"], "style": "detailed", "token_budget": budget},
            )
        )
        spent = sum(
            estimate_tokens(s["title"]) + estimate_tokens(s["description"]) for s in flow["flow"]
        )
        assert flow["flow"] and spent == flow["tokens_used"] <= budget
        guide = ok(
            mcp.call(
                "guide_implementation",
                {"topic": "OAuth2 password login", "framework": "fastapi", "token_budget": budget},
            )
        )
        spent = sum(
            estimate_tokens(s["title"]) + estimate_tokens(s["description"]) for s in guide["flow"]
        )
        for ref in guide["docs"] + guide["sample_code"]:
            spent += estimate_tokens(ref["snippet"]) + estimate_tokens(ref["preview"])
        assert guide["docs"] and spent == guide["tokens_used"] <= budget
    unbounded = ok(mcp.call("expand_related", {"ref_ids": seed}))
    assert unbounded["tokens_used"] > 120


# -- composing tools -------------------------------------------------------------------------------


def test_expand_related_accepts_locations_and_reports_the_unresolved(mcp):
    related = ok(
        mcp.call(
            "expand_related",
            {
                "ref_ids": ["tutorial/path-params#path-parameters-with-types", "nowhere/at-all"],
                "top_k": 5,
            },
        )
    )
    assert related["unresolved_ref_ids"] == ["nowhere/at-all"]
    assert 1 <= len(related["related"]) <= 5
    locations = [r["location"] for r in related["related"]]
    assert "docs_src/path_params/tutorial002_py310.py" in locations
    for item in related["related"]:
        assert item["ref_id"].startswith("r1.")
        assert item["kind"] in {"doc", "code", "file"}
        assert item["reasons"] and all(r["name"] for r in item["reasons"])

    code_only = ok(
        mcp.call(
            "expand_related",
            {"ref_ids": ["tutorial/path-params#path-parameters-with-types"], "kinds": ["code"]},
        )
    )
    assert code_only["related"]
    assert all(r["kind"] in {"code", "file"} for r in code_only["related"])


def test_summarize_flow_grounds_each_step(mcp):
    flow = ok(
        mcp.call(
            "summarize_flow",
            {"ref_ids": [f"alpha/{SHARED_PAGE}"], "topic": "onboarding", "style": "detailed"},
        )
    )
    titles = [s["title"] for s in flow["flow"]]
    assert titles[:3] == ["Install the toolchain.", "Clone the repository.", "Run the tests."]
    assert [s["index"] for s in flow["flow"]] == list(range(1, len(titles) + 1))
    assert all(s["locations"] and s["ref_ids"] for s in flow["flow"])
    assert flow["confidence"] in {"low", "medium", "high"}
    assert mcp.call("summarize_flow", {}).is_error


def test_guide_implementation_returns_docs_code_and_steps(mcp):
    guide = ok(
        mcp.call(
            "guide_implementation",
            {"topic": "OAuth2 password login", "framework": "fastapi", "language": "python"},
        )
    )
    assert guide["flow"] and guide["docs"] and guide["sample_code"]
    assert any("security" in d["location"] for d in guide["docs"])
    assert all(c["kind"] in {"code", "file"} and c["language"] for c in guide["sample_code"])
    assert guide["confidence"] in {"low", "medium", "high"}
    for ref in guide["docs"][:2]:
        fetched = ok(mcp.call("get_content", {"ref_id": ref["ref_id"]}))
        assert fetched["found"] is True


def test_list_sources_says_what_is_indexed_and_how_current_it_is(mcp):
    listed = ok(mcp.call("list_sources", {}))
    by_name = {s["name"]: s for s in listed["sources"]}
    assert list(by_name) == ["en", "code", "alpha", "beta"]
    assert all(s["state"] == "ready" and "building" not in s for s in by_name.values())
    assert by_name["code"]["kind"] == "code" and by_name["code"]["documents"] > 100
    assert by_name["alpha"]["documents"] == 1 and by_name["alpha"]["blocks"] >= 1
    assert listed["generation"] >= 1 and listed["server_version"]


# -- other targets ---------------------------------------------------------------------------------


def test_unreachable_daemon_is_a_tool_error_naming_it():
    address = f"127.0.0.1:{free_port()}"
    with McpSession(["--target", address, "--timeout", "2"]) as session:
        result = session.call("search_docs", {"query": "anything"})
    assert result.is_error
    assert address in result.content[0].text


def test_target_can_come_from_the_environment(daemon):
    env = {"SCRIPTORIUM_TARGET": daemon.address}
    with McpSession([], env=env) as session:
        hits = ok(session.call("search_docs", {"query": "onboarding workstation"}))["result"]
    assert hits and hits[0]["Path"].endswith(SHARED_PAGE)


def test_token_is_sent_and_its_absence_explained(tree, tmp_path):
    config = tmp_path / "auth.toml"
    config.write_text(
        '[server]\nwatch = false\nauth_token = "s3cret-token"\n\n'
        f'[[sources]]\nname = "alpha"\nkind = "markdown"\nroot = "{tree / "alpha"}"\n',
        encoding="utf-8",
    )
    with Daemon(["--config", str(config)], tmp_path / "state") as guarded:
        with McpSession(["--target", guarded.address, "--token", "s3cret-token"]) as session:
            hits = ok(session.call("search_docs", {"query": "onboarding"}))["result"]
        assert hits and hits[0]["Path"] == SHARED_PAGE
        with McpSession(["--target", guarded.address]) as session:
            refused = session.call("search_docs", {"query": "onboarding"})
    assert refused.is_error
    assert "--token" in refused.content[0].text


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_without_a_target_an_embedded_daemon_serves_the_paths_and_stops(tree, tmp_path):
    log = tmp_path / "bridge.log"
    with (
        log.open("w") as errlog,
        McpSession([str(tree / "alpha"), "--log-level", "INFO"], errlog=errlog) as session,
    ):
        hits = ok(session.call("search_docs", {"query": "onboarding toolchain"}))["result"]
        assert hits[0]["Path"] == SHARED_PAGE
        page = ok(session.call("get_doc", {"location": SHARED_PAGE}))
        assert page["Content"].startswith("# Alpha onboarding")
        match = re.search(
            r"embedded daemon pid (\d+) serving on 127\.0\.0\.1:(\d+)", log.read_text()
        )
        assert match, log.read_text()
        pid = int(match.group(1))
        assert _alive(pid)
    assert wait_for(lambda: not _alive(pid)), "the embedded daemon outlived its bridge"


def test_the_embedded_daemon_starts_from_a_folder_that_holds_a_scriptorium_package(tree, tmp_path):
    """The parent of a clone holds ``scriptorium/``: the bridge's own daemon must not import it."""
    cwd = tmp_path / "parent-of-a-clone"
    (cwd / "scriptorium").mkdir(parents=True)
    (cwd / "scriptorium" / "__init__.py").write_text(
        'raise ImportError("the scriptorium folder in the working folder was imported")\n',
        encoding="utf-8",
    )
    shutil.copytree(tree / "alpha", cwd / "notes")
    console = Path(sys.executable).with_name("scriptorium")  # what `scriptorium mcp` runs
    log = tmp_path / "bridge.log"
    with (
        log.open("w") as errlog,
        McpSession(
            ["mcp", "notes", "--state-dir", "state"], command=[str(console)], cwd=cwd, errlog=errlog
        ) as session,
    ):
        hits = session.call("search_docs", {"query": "onboarding toolchain"})
        assert not hits.is_error, log.read_text()
        assert ok(hits)["result"][0]["Path"] == SHARED_PAGE
        page = ok(session.call("get_doc", {"location": SHARED_PAGE}))
        assert page["Content"].startswith("# Alpha onboarding")
        assert ok(session.call("list_sources", {}))
    # The relative paths meant the user's folder: the index landed in cwd/state.
    assert (cwd / "state").is_dir()
    assert "ImportError" not in log.read_text()
