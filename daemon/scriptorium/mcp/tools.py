"""The MCP tool surface: nine read-only tools over the daemon's gRPC API.

Every tool answers with a text block (JSON, for clients that read only text) and the same data
as structured content, validated against the tool's published output schema. A location that
does not resolve is an answer, not an error: the agent gets the resolution and can pick a
candidate. Other failures (bad arguments, an unreachable daemon) are tool errors with a message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import grpc
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from scriptorium import __version__, limits
from scriptorium.client import AsyncClient, ResolutionError, ScriptoriumError
from scriptorium.content.cut import MAX_LINES_CAP
from scriptorium.domain.refs import looks_like_ref
from scriptorium.mcp import shapes
from scriptorium.mcp.backend import Backend

MAX_RESULTS = limits.TOP_K_MAX
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

INSTRUCTIONS = """\
Scriptorium answers questions from indexed documentation and source code, with exact locations.
Typical use: search_docs to find pages, then get_doc to read one (long pages come in parts: pass
NextCursor back as cursor); search_code to find definitions, then get_doc with a result's Path for
exactly that definition ('file.py#Class.method' names one directly), or get_content for other
cuts; outline for a cheap look at a page's headings or a file's definitions first.
guide_implementation gives a grounded step-by-step plan for a task in one call; expand_related
and summarize_flow work from refs (ref ids or locations) you already have. Pass locations back
exactly as they were returned. When a search finds nothing, list_sources tells whether a source
is still loading or failed."""

SEARCH_DOCS = """\
Search the indexed documentation and get a ranked list of pages, each with a ~200-character
excerpt centred on your query. Use this first to learn how something works or where it is
documented, then call get_doc with a result's Path to read the whole page. Results can come from
several documentation sets: pass Path back unchanged (a leading site segment such as 'ja/' is
part of it). tokenBudget caps the estimated tokens of all Snippets (about four characters per
token); TokensUsed says what they cost. For source code, use search_code. The project's
installed dependencies are indexed too, at the versions it pins: library limits the search to
one of them (httpx), and a result from one says which in Library (httpx@0.28.1)."""

GET_DOC = """\
Read the Markdown of one documentation page. Pass a Path from search_docs or a page location you
know (e.g. 'tutorial/path-params'); a '#section' suffix is ignored. For source code it reads
exactly what a location names: 'file.py#Class.method' (or a Python module path such as
'package.module.Class.method') that definition, decorators to body, after the signature lines of
the definitions around it; 'file.ts#L10-L20' (a search_code Path) those lines; a bare file the
whole file. Returns Location (what was actually served, which can differ from what you passed
after normalisation), Url and Content. An answer longer than maxChars (default 12000, about 3000
tokens; 0 for the whole answer at once) comes in parts that end on line boundaries, before a
heading or definition when one is near: the answer then has Part (Number, Count, StartLine,
EndLine), TotalChars and, before the last part, NextCursor; call get_doc again with the same
location and cursor=NextCursor for the next part. When nothing matches: NotFound, Location and
Message. When the location matches several pages or definitions (or its last
segment names several), NotFound comes with Reason and Candidates: call get_doc again with one
of them. To read only one section or a few lines, use get_content."""

SEARCH_CODE = """\
Search the indexed source code for definitions (functions, classes, methods) that match a
query; identifiers match in any style (getUserName, get_user_name). Each result has Title (the
symbol), Path ('file#Lstart-Lend', the definition's lines), Language, Lines (the same span) and
Snippet (the source lines around the best match, as written). Use it to find where something is
implemented or to find usage examples; read the definition with get_doc(location=Path), or the
whole file with get_content(location=Path, mode='full'). The code of the project's installed
dependencies is indexed too: library limits the search to one (httpx), and Library names the
dependency and version a result comes from."""

LIST_SOURCES = """\
List what is indexed: every documentation and code source with its state (loading, ready,
failed, stale), its documents and blocks, the index generation, how many seconds since it was
last known current, its last error, and, while a build is under way, how many of its files it
has read (building). Call it when a search comes back empty or unsure, before concluding that
the documentation does not cover a question: the source may still be loading or have failed."""

GET_CONTENT = """\
Fetch exactly one block by ref_id or by location. mode 'snippet' gives a focused excerpt (the
start of a doc section; for a code ref the definition it sits in when that fits 40 lines, else a
window inside it); 'full' the whole doc section, or the whole source file for code;
'multi_range' the same plus highlighted line ranges, each with the reason it matters (steps,
lists, signatures, handlers...); 'definition' (code) the definition around the ref with the
signature lines of the definitions enclosing it. max_lines caps long answers; max_chars (default
12000, 0 for no cap) cuts a longer answer into parts: next_cursor, passed back as cursor with the
same other arguments, gives the next part. location takes a Path from search_docs/search_code,
optionally with '#section'; for code also '#Class.method', '#L10' or '#L10-L20' (exactly those
lines), or a Python module path 'package.module.Class'. scope says what came back (section, page,
definition, window, lines or file). The answer has line numbers, the ref_id, and how the
location was resolved. When it does not
resolve, found is false and resolution says why; if resolution.candidates is not empty (an
ambiguous location, or a last segment several pages share), call again with one of them."""

EXPAND_RELATED = """\
Find supporting material for refs you already have: the docs that explain a piece of code, the
code that implements a documented feature, neighbouring sections. ref_ids takes ref ids or
locations (Paths from search results; they are resolved first). Each related item has scored
reasons saying why it relates. Use it when one search result is not enough context."""

SUMMARIZE_FLOW = """\
Turn refs (and/or a topic) into an ordered list of steps, each tied to the refs and locations it
came from: the steps of a tutorial, the sequence of a code path. Deterministic: extracted from
the sources, not written by a model. ref_ids takes ref ids or locations."""

OUTLINE = """\
A cheap first look at a documentation page or a source file before reading it: its headings
(docs) or definitions (code: classes, functions, methods), each with its level, line range,
size in lines and characters, and a location to pass to get_content (mode 'full') to read
exactly that entry. Pass a Path from search_docs or search_code, or a ref_id."""

GUIDE_IMPLEMENTATION = """\
One call for 'how do I implement X': searches docs and code for the topic, gathers related
material, and returns a step-by-step flow with the supporting docs and sample code (each with a
ref_id and location to read further), assumptions and a confidence. token_budget caps the
estimated tokens of its text (flow, snippets, previews); tokens_used says what it spent. Use it
at the start of an implementation task; use search_docs or search_code for narrower questions."""

Query = Annotated[str, Field(description="What you are looking for, in words or identifiers.")]
MaxResults = Annotated[
    int, Field(description="How many results to return (1-25; values outside are clamped).")
]
Library = Annotated[
    str,
    Field(
        description="Only results from this installed dependency of the project (its name, "
        "as httpx or github.com/google/uuid), at the version it pins; empty: every source."
    ),
]
TokenBudget = Annotated[
    int,
    Field(
        ge=0,
        description="Cap on the estimated tokens of the returned text (about four characters "
        "per token); 0 means no cap.",
    ),
]
MaxChars = Annotated[
    int,
    Field(
        ge=0,
        description=f"Cap on the characters of one answer (0: no cap, else at least "
        f"{limits.CONTENT_MIN_MAX_CHARS}); a longer answer comes in parts.",
    ),
]
Cursor = Annotated[
    str, Field(description="The next-part cursor of the previous answer; '' for the first part.")
]
DEFAULT_MAX_CHARS = 12_000  # about 3,000 tokens: one long page never fills a context window
RefList = Annotated[
    list[str],
    Field(description="Ref ids (r1....) or locations from search results, in order of interest."),
]


def _clamp(value: int) -> int:
    return max(1, min(MAX_RESULTS, value))


def _cap_note(name: str, value: int, note: str | None = None) -> str | None:
    """Says so when a count was lowered to the cap, so fewer results are not a mystery."""
    if value <= MAX_RESULTS:
        return note
    said = f"{name} {value} is above the cap of {MAX_RESULTS}: at most {MAX_RESULTS} results."
    return f"{said} {note}" if note else said


class StrictServer(MCPServer):
    """Refuses arguments a tool does not take, naming the ones it does: a misspelt argument
    (``top_k`` for ``maxResults``) silently ignored reads to the caller as obeyed."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            accepted = list(tool.parameters.get("properties", {}))
            unknown = sorted(set(arguments) - set(accepted))
            if unknown:
                raise ToolError(
                    f"{name} takes no argument {', '.join(repr(u) for u in unknown)}; "
                    f"it takes {', '.join(accepted)}"
                )
        return await super().call_tool(name, arguments, context)


def _answer(payload: BaseModel, text: Any = None, note: str | None = None) -> CallToolResult:
    """The structured answer, its JSON as text (``text`` instead when given), and a note."""
    structured = payload.model_dump(mode="json", exclude_none=True)
    shown = structured if text is None else text
    content = [TextContent(type="text", text=json.dumps(shown, ensure_ascii=False, indent=2))]
    if note:
        content.append(TextContent(type="text", text=note))
    return CallToolResult(content=content, structured_content=structured)


def _tool_error(err: ScriptoriumError, backend: Backend) -> ToolError:
    if err.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return ToolError(f"{backend.description} did not answer ({err.code.name}: {err.message})")
    if err.code == grpc.StatusCode.UNAUTHENTICATED:
        return ToolError(
            f"{backend.description} wants a token ({err.message}); "
            "start the bridge with --token or set SCRIPTORIUM_TOKEN"
        )
    return ToolError(f"{err.code.name}: {err.message}")


class Tools:
    """The tool implementations, bound to one backend."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    async def _client(self) -> AsyncClient:
        try:
            return await self.backend.client()
        except RuntimeError as exc:
            raise ToolError(str(exc)) from None

    async def _ref_ids(self, items: Sequence[str]) -> tuple[list[str], list[str]]:
        """Ref ids as given; locations resolved to the ref id of what they name."""
        client = await self._client()
        refs: list[str] = []
        unresolved: list[str] = []
        for item in items:
            item = item.strip()
            if not item:
                continue
            if looks_like_ref(item):
                refs.append(item)
                continue
            try:
                response = await client.get_content(location=item, mode="snippet", max_lines=1)
            except ResolutionError:
                unresolved.append(item)
                continue
            except ScriptoriumError as err:
                if err.code == grpc.StatusCode.INVALID_ARGUMENT:
                    unresolved.append(item)
                    continue
                raise _tool_error(err, self.backend) from None
            refs.append(response.ref_id)
        return refs, unresolved

    async def list_sources(self) -> Annotated[CallToolResult, shapes.SourcesOut]:
        client = await self._client()
        try:
            response = await client.list_sources()
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        return _answer(shapes.sources_out(response))

    async def search_docs(
        self,
        query: Query,
        maxResults: MaxResults = 10,
        tokenBudget: TokenBudget = 0,
        library: Library = "",
    ) -> Annotated[CallToolResult, shapes.DocHits]:
        limit = _clamp(maxResults)
        client = await self._client()
        try:
            # Several blocks of one page can rank; ask for more so enough distinct pages remain.
            response = await client.search(
                query,
                kinds="docs",
                top_k=min(MAX_RESULTS, limit * 3),
                snippet_lines=1,
                library=library.strip(),
            )
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        hits = shapes.doc_hits(response.results, limit)
        spent = shapes.fit_doc_hits(hits, tokenBudget)
        payload = shapes.DocHits(result=hits, TokensUsed=spent, **shapes.query_extent(response))
        shown = [h.model_dump(mode="json", exclude_none=True) for h in hits]
        note = _cap_note("maxResults", maxResults, shapes.truncation_note(response))
        return _answer(payload, shown, note)

    async def get_doc(
        self,
        location: Annotated[
            str, Field(description="Page location: a Path from search_docs, passed unchanged.")
        ],
        maxChars: MaxChars = DEFAULT_MAX_CHARS,
        cursor: Cursor = "",
    ) -> Annotated[CallToolResult, shapes.DocPage]:
        page, mode = shapes.doc_target(location.strip())
        if not page:
            raise ToolError("location is required: pass a Path from search_docs")
        client = await self._client()
        try:
            response = await client.get_content(
                location=page,
                mode=mode,
                max_lines=MAX_LINES_CAP,
                max_chars=maxChars,
                cursor=cursor.strip(),
            )
        except ResolutionError as err:
            return _answer(shapes.doc_missing(location, err.resolution))
        except ScriptoriumError as err:
            if err.code == grpc.StatusCode.NOT_FOUND:
                return _answer(shapes.doc_missing(location, None))
            raise _tool_error(err, self.backend) from None
        return _answer(shapes.doc_page(response))

    async def search_code(
        self, query: Query, maxResults: MaxResults = 10, library: Library = ""
    ) -> Annotated[CallToolResult, shapes.CodeHits]:
        client = await self._client()
        try:
            response = await client.search(
                query, kinds="code", top_k=_clamp(maxResults), library=library.strip()
            )
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        hits = shapes.code_hits(response.results)
        payload = shapes.CodeHits(result=hits, **shapes.query_extent(response))
        shown = [h.model_dump(mode="json", exclude_none=True) for h in hits]
        note = _cap_note("maxResults", maxResults, shapes.truncation_note(response))
        return _answer(payload, shown, note)

    async def get_content(
        self,
        ref_id: Annotated[str, Field(description="A ref id from an earlier answer.")] = "",
        location: Annotated[
            str,
            Field(
                description="A location (Path) from search results; '#section', or for code "
                "'#Class.method', '#L10-L20', or a module path 'package.module.Class'."
            ),
        ] = "",
        mode: Annotated[
            Literal["snippet", "full", "multi_range", "definition"],
            Field(description="How much to return."),
        ] = "snippet",
        max_lines: Annotated[
            int, Field(description="Cap on returned lines; 0 means the server default.")
        ] = 0,
        max_chars: MaxChars = DEFAULT_MAX_CHARS,
        cursor: Cursor = "",
    ) -> Annotated[CallToolResult, shapes.ContentOut]:
        ref_id, location = ref_id.strip(), location.strip()
        if not ref_id and looks_like_ref(location):
            ref_id, location = location, ""
        if bool(ref_id) == bool(location):
            raise ToolError("give exactly one of ref_id or location")
        client = await self._client()
        try:
            response = await client.get_content(
                ref_id=ref_id,
                location=location,
                mode=mode,
                max_lines=max_lines,
                max_chars=max_chars,
                cursor=cursor.strip(),
            )
        except ResolutionError as err:
            failed = shapes.content_failed(
                err.code.name, err.message, err.resolution, location or ref_id
            )
            return _answer(failed)
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        return _answer(shapes.content_out(response))

    async def outline(
        self,
        location: Annotated[
            str, Field(description="A Path from search_docs or search_code, or a ref id.")
        ],
    ) -> Annotated[CallToolResult, shapes.OutlineOut]:
        target = location.strip()
        if not target:
            raise ToolError("location is required: pass a Path from a search")
        ref_id, where = (target, "") if looks_like_ref(target) else ("", target)
        client = await self._client()
        try:
            response = await client.outline(ref_id=ref_id, location=where)
        except ResolutionError as err:
            failed = shapes.failed(
                shapes.OutlineOut, err.code.name, err.message, err.resolution, target
            )
            return _answer(failed)
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        return _answer(shapes.outline_out(response))

    async def expand_related(
        self,
        ref_ids: RefList,
        top_k: Annotated[int, Field(description="How many related refs (1-25).")] = 10,
        mode: Annotated[
            str, Field(description="Ranking mode: '' (default) or 'implementation' (favours code).")
        ] = "",
        kinds: Annotated[
            list[Literal["docs", "code"]],
            Field(description="Restrict to docs and/or code; empty means both."),
        ] = [],  # noqa: B006 - pydantic copies defaults
        token_budget: TokenBudget = 0,
    ) -> Annotated[CallToolResult, shapes.ExpandOut]:
        refs, unresolved = await self._ref_ids(ref_ids)
        client = await self._client()
        if not refs:
            empty = shapes.ExpandOut(
                related=[], unresolved_ref_ids=unresolved, trace_id="", tokens_used=0
            )
            return _answer(empty)
        try:
            response = await client.expand_related(
                refs,
                top_k=_clamp(top_k),
                mode=mode,
                kinds=list(kinds),
                token_budget=token_budget,
            )
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        return _answer(shapes.expand_out(response, unresolved), note=_cap_note("top_k", top_k))

    async def summarize_flow(
        self,
        ref_ids: RefList = [],  # noqa: B006 - pydantic copies defaults
        topic: Annotated[str, Field(description="What the flow is about.")] = "",
        style: Annotated[
            Literal["compact", "detailed"], Field(description="How much each step says.")
        ] = "compact",
        token_budget: TokenBudget = 0,
    ) -> Annotated[CallToolResult, shapes.FlowOut]:
        refs, unresolved = await self._ref_ids(ref_ids)
        if not refs and not topic.strip():
            raise ToolError("give ref_ids that resolve, or a topic")
        client = await self._client()
        try:
            response = await client.summarize_flow(
                refs, topic=topic, style=style, token_budget=token_budget
            )
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        return _answer(shapes.flow_out(response, unresolved))

    async def guide_implementation(
        self,
        topic: Annotated[str, Field(description="The task, e.g. 'OAuth2 password login'.")],
        framework: Annotated[str, Field(description="Framework or library, if any.")] = "",
        language: Annotated[str, Field(description="Programming language, if any.")] = "",
        token_budget: TokenBudget = 0,
    ) -> Annotated[CallToolResult, shapes.GuideOut]:
        client = await self._client()
        try:
            response = await client.guide_implementation(
                topic, framework=framework, language=language, token_budget=token_budget
            )
        except ScriptoriumError as err:
            raise _tool_error(err, self.backend) from None
        return _answer(shapes.guide_out(response))


TOOL_DESCRIPTIONS = {
    "search_docs": SEARCH_DOCS,
    "get_doc": GET_DOC,
    "search_code": SEARCH_CODE,
    "get_content": GET_CONTENT,
    "outline": OUTLINE,
    "expand_related": EXPAND_RELATED,
    "summarize_flow": SUMMARIZE_FLOW,
    "guide_implementation": GUIDE_IMPLEMENTATION,
    "list_sources": LIST_SOURCES,
}


def build_server(backend: Backend) -> MCPServer:
    """An MCP server whose tools call ``backend``."""
    server = StrictServer(
        "scriptorium", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )
    tools = Tools(backend)
    for name, description in TOOL_DESCRIPTIONS.items():
        server.add_tool(
            getattr(tools, name),
            name=name,
            description=description.replace("\n", " "),
            annotations=_READ_ONLY,
        )
    return server
