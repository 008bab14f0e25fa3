"""SummarizeFlow's step candidates in code: routes, signatures and recognisable operations."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scriptorium.text.code.families import FlowCandidate, _families, _non_code_rows, _shorten
from scriptorium.text.code.routes import _routes
from scriptorium.text.code.signatures import _signatures


@dataclass(frozen=True, slots=True)
class _Operation:
    """A recognisable step. ``hints`` are literals one of which every match contains."""

    hints: tuple[str, ...]
    pattern: re.Pattern[str]
    title: str


def _op(hints: str | tuple[str, ...], pattern: str, title: str) -> _Operation:
    return _Operation((hints,) if isinstance(hints, str) else hints, re.compile(pattern), title)


_DB = ("session.", "db.")
_OPERATIONS: tuple[_Operation, ...] = (
    _op("FastAPI", r"^\s*(?P<name>\w+)\s*=\s*FastAPI\s*\(", "Create the FastAPI app `{name}`"),
    _op("APIRouter", r"^\s*(?P<name>\w+)\s*=\s*APIRouter\s*\(", "Create the router `{name}`"),
    _op("include_router", r"\.include_router\s*\(\s*(?P<name>[\w.]+)", "Include router {name}"),
    _op("add_middleware", r"\.add_middleware\s*\(\s*(?P<name>[\w.]+)", "Add middleware {name}"),
    _op(
        "middleware",
        r"^\s*@\s*[\w.]+\.middleware\s*\(\s*['\"](?P<name>\w+)",
        "Add {name} middleware",
    ),
    _op(".mount", r"\.mount\s*\(\s*['\"](?P<name>[^'\"]*)", "Mount {name}"),
    _op(
        "exception_handler",
        r"(?:\.add_exception_handler|@\s*[\w.]+\.exception_handler)\s*\(\s*(?P<name>[\w.]+)",
        "Handle {name}",
    ),
    _op("on_event", r"@\s*[\w.]+\.on_event\s*\(\s*['\"](?P<name>\w+)", "Run on {name}"),
    _op("create_all", r"\bmetadata\.create_all\s*\(", "Create the database tables"),
    _op("create_engine", r"\bcreate_engine\s*\(", "Create the database engine"),
    _op(_DB, r"\b(?:session|db)\.add\s*\(", "Add the object to the session"),
    _op(".commit", r"\.commit\s*\(\s*\)", "Commit the transaction"),
    _op(_DB, r"\b(?:session|db)\.refresh\s*\(", "Refresh the object from the database"),
    _op(_DB, r"\b(?:session|db)\.delete\s*\(", "Delete the object from the database"),
    _op(_DB, r"\b(?:session|db)\.(?:exec|execute|query|get)\s*\(", "Query the database"),
    _op("SaveChanges", r"\bSaveChanges(?:Async)?\s*\(", "Save changes"),
    _op(".save", r"\.save\s*\(\s*\w", "Save the entity"),
    _op("raise", r"\braise\s+(?P<name>\w*(?:Exception|Error))\s*\(", "Raise {name}"),
    _op("Response", r"^\s*return\s+(?P<name>\w*Response)\s*\(", "Return a {name}"),
    _op("add_task", r"\.add_task\s*\(\s*(?P<name>[\w.]+)", "Schedule background task {name}"),
    _op(
        ("OAuth2", "HTTPB", "HTTPDigest", "APIKey"),
        r"^\s*\w+\s*=\s*(?P<name>OAuth2\w*|HTTPBasic|HTTPBearer|HTTPDigest|APIKey\w+)\s*\(",
        "Declare the {name} security scheme",
    ),
    _op("TestClient", r"\bTestClient\s*\(", "Create a test client"),
    _op("uvicorn", r"\buvicorn\.run\s*\(", "Start the server"),
    _op("express", r"=\s*express\s*\(\s*\)", "Create the Express app"),
    _op(("Fastify", "fastify"), r"=\s*(?:Fastify|fastify)\s*\(", "Create the Fastify app"),
    _op("NestFactory", r"\bNestFactory\.create\s*\(", "Create the Nest app"),
    _op(".listen", r"\.listen\s*\(", "Start listening"),
    _op("app.use", r"\bapp\.use\s*\(\s*(?P<name>[\w$.]+)", "Use middleware {name}"),
    _op(
        ".register",
        r"\b(?:fastify|server|app)\.register\s*\(\s*(?P<name>[\w$.]+)",
        "Register {name}",
    ),
    _op(
        ("gin.", "NewRouter", "NewServeMux"),
        r"\b(?:gin\.(?:Default|New)|mux\.NewRouter|chi\.NewRouter|http\.NewServeMux)\(",
        "Create the router",
    ),
    _op("ListenAndServe", r"\bhttp\.ListenAndServe(?:TLS)?\s*\(", "Start the HTTP server"),
    _op(".Use", r"\b\w+\.Use\s*\(\s*(?P<name>[\w.]+)", "Use middleware {name}"),
    _op("SpringApplication", r"\bSpringApplication\.run\s*\(", "Start the Spring application"),
    _op(
        "CreateBuilder",
        r"\bWebApplication\.CreateBuilder\s*\(",
        "Create the web application builder",
    ),
    _op("ervices.", r"\b[Ss]ervices\.(?:Add|TryAdd)(?P<name>\w+)", "Register service {name}"),
    _op("builder.Build", r"\bbuilder\.Build\s*\(\s*\)", "Build the application"),
    _op("app.Use", r"\bapp\.Use(?P<name>\w+)\s*\(", "Use {name}"),
    _op("app.Run", r"\bapp\.Run(?:Async)?\s*\(", "Run the application"),
)
_OPERATION_HINTS = re.compile(
    "|".join(sorted({re.escape(h) for op in _OPERATIONS for h in op.hints}, key=len, reverse=True))
)


def _operation(line: str) -> str | None:
    if not _OPERATION_HINTS.search(line):
        return None
    for operation in _OPERATIONS:
        match = operation.pattern.search(line)
        if match:
            return " ".join(operation.title.format(**match.groupdict()).split())
    return None


def code_flow_candidates(lines: Sequence[str], language: str | None) -> list[FlowCandidate]:
    """Candidate flow steps in file order: ``(line, origin, title, description)``.

    ``origin`` is "route" for route declarations (title "GET /items/{id} → read_item"),
    "signature" for definitions that are not route handlers, and "operation" for recognisable
    steps such as creating the app, including routers, adding middleware or committing.
    """
    families = _families(language)
    skipped = _non_code_rows(lines, families)
    steps: dict[int, FlowCandidate] = {}
    handler_lines: set[int] = set()
    for route in _routes(lines, families, skipped):
        description = lines[route.line - 1].strip()
        if route.handler_line and route.handler_line != route.line:
            description = f"{description} {lines[route.handler_line - 1].strip()}"
            handler_lines.add(route.handler_line)
        steps[route.line] = (route.line, "route", route.title, _shorten(description))
    for sig in _signatures(lines, families, skipped):
        if sig.line not in steps and sig.line not in handler_lines:
            steps[sig.line] = (sig.line, "signature", f"{sig.kind} {sig.name}", _shorten(sig.text))
    for number, line in enumerate(lines, 1):
        if number in steps or number in handler_lines or number - 1 in skipped:
            continue
        title = _operation(line)
        if title:
            steps[number] = (number, "operation", title, _shorten(line))
    ordered = [steps[number] for number in sorted(steps)]
    # A private helper (``_set_timeout``) is how the code does a step, not a step a reader
    # takes: it stays only when nothing else in the range explains the topic.
    public = [step for step in ordered if not _private(step)]
    return public or ordered


def _private(step: FlowCandidate) -> bool:
    """A signature step whose definition is private by name (``_helper``, ``Class._helper``;
    not ``__init__`` and the other dunders, which are how a class is used)."""
    if step[1] != "signature":
        return False
    name = step[2].rsplit(" ", 1)[-1].rsplit(".", 1)[-1]
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
