"""HTTP route handlers (decorators, router calls, annotations) and the handler each one names."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from scriptorium.text.code.families import _families, _non_code_rows
from scriptorium.text.code.signatures import _signature_at


@dataclass(frozen=True, slots=True)
class Route:
    """A route or endpoint declaration: its line, HTTP method(s), path and handler."""

    line: int
    method: str
    path: str
    handler: str = ""
    handler_line: int | None = None
    # Declared by a decorator, annotation or attribute: the handler is the next definition.
    decorates: bool = False

    @property
    def title(self) -> str:
        head = " ".join(p for p in (self.method, self.path) if p)
        return f"{head} → {self.handler}" if self.handler else head


_STRING = re.compile(r"""(?P<q>['"`])(?P<value>(?:(?!(?P=q)).)*)(?P=q)""")
_METHODS_KW = re.compile(r"methods\s*=\s*[\[(]([^\])]*)[\])]")
_ROUTER_OBJECTS = frozenset(
    {"app", "router", "api", "server", "fastify", "routes", "route", "express", "r", "v1", "v2"}
)

_PY_ROUTE_DECORATOR = re.compile(
    r"^\s*@\s*(?P<obj>[\w.]+)\.(?P<verb>get|post|put|delete|patch|options|head|trace|"
    r"api_route|websocket|route)\s*\((?P<args>.*)"
)
_PY_ROUTE_CALL = re.compile(
    r"\.(?P<verb>add_api_route|add_api_websocket_route|add_url_rule|add_route|"
    r"add_websocket_route)\s*\((?P<args>.*)"
)
_JS_ROUTE_CALL = re.compile(
    r"\b(?P<obj>[\w$.]+)\.(?P<verb>get|post|put|delete|patch|options|head|all|use|route)"
    r"\s*\(\s*(?P<q>['\"`])(?P<path>[^'\"`]*)(?P=q)(?P<rest>.*)"
)
_JS_ROUTE_OBJECT = re.compile(r"\b(?:fastify|server|app)\.route\s*\(\s*\{")
_NEST_ROUTE = re.compile(
    r"^\s*@(?P<verb>Get|Post|Put|Delete|Patch|Options|Head|All)\s*\("
    r"\s*(?:['\"`](?P<path>[^'\"`]*)['\"`])?"
)
_GO_ROUTE = re.compile(
    r"\b(?P<obj>[\w.]+)\.(?P<verb>HandleFunc|Handle|GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS|Any|"
    r"Get|Post|Put|Delete|Patch|Head|Options)\s*\(\s*\"(?P<path>[^\"]*)\"(?P<rest>.*)"
)
_JAVA_ROUTE = re.compile(
    r"^\s*@(?P<verb>Get|Post|Put|Delete|Patch|Request)Mapping\b\s*(?:\((?P<args>.*))?"
)
_JAXRS_ROUTE = re.compile(r"^\s*@(?P<verb>GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\s*$")
_CS_ROUTE_ATTRIBUTE = re.compile(
    r"^\s*\[\s*(?:Http(?P<verb>Get|Post|Put|Delete|Patch|Head|Options)|Route)\b"
    r"\s*(?:\(\s*\"(?P<path>[^\"]*)\")?"
)
_CS_ROUTE_CALL = re.compile(
    r"\.Map(?P<verb>Get|Post|Put|Delete|Patch|Methods|Group|Fallback)?\s*\(\s*\"(?P<path>[^\"]*)\""
    r"(?P<rest>.*)"
)
_LAST_IDENTIFIER_ARG = re.compile(r",\s*(?P<name>[A-Za-z_$][\w$.]*)\s*\)+\s*;?\s*$")
_ENDPOINT_KW = re.compile(r"\b(?:endpoint|view_func)\s*=\s*(?P<name>[\w.]+)")
_SECOND_POSITIONAL = re.compile(r"""^\s*(['"]).*?\1\s*,\s*(?P<name>[A-Za-z_][\w.]*)\s*[,)]""")


def _first_string(lines: Sequence[str], index: int, text: str, lookahead: int = 3) -> str:
    """The first string literal in ``text``, or on the next few lines of a wrapped call."""
    match = _STRING.search(text)
    if match:
        return match.group("value")
    for follow in lines[index + 1 : index + 1 + lookahead]:
        match = _STRING.search(follow)
        if match:
            return match.group("value")
        if follow.strip().startswith(")"):
            break
    return ""


def _listed_methods(text: str, default: str) -> str:
    match = _METHODS_KW.search(text)
    if not match:
        return default
    methods = [m.group("value").upper() for m in _STRING.finditer(match.group(1))]
    return "|".join(methods) or default


def _route_at(lines: Sequence[str], index: int, families: tuple[str, ...]) -> Route | None:
    """The route declared on ``lines[index]`` (0-based), without its handler resolved."""
    line = lines[index]
    number = index + 1
    if "python" in families:
        match = _PY_ROUTE_DECORATOR.match(line)
        if match:
            verb = match.group("verb")
            default = {"api_route": "GET", "route": "GET", "websocket": "WEBSOCKET"}
            method = _listed_methods(match.group("args"), default.get(verb, verb.upper()))
            path = _first_string(lines, index, match.group("args"))
            return Route(number, method, path, decorates=True)
        match = _PY_ROUTE_CALL.search(line)
        if match:
            args = match.group("args")
            verb = match.group("verb")
            method = "WEBSOCKET" if "websocket" in verb else _listed_methods(args, "GET")
            handler = _ENDPOINT_KW.search(args) or _SECOND_POSITIONAL.match(args)
            return Route(
                number,
                method,
                _first_string(lines, index, args),
                handler.group("name") if handler else "",
                number if handler else None,
            )
    if "js" in families:
        match = _NEST_ROUTE.match(line)
        if match:
            verb = match.group("verb").upper()
            return Route(number, verb, match.group("path") or "", decorates=True)
        match = _JS_ROUTE_CALL.search(line)
        if match:
            obj = match.group("obj").rsplit(".", 1)[-1]
            path = match.group("path")
            if obj in _ROUTER_OBJECTS or path.startswith("/"):
                verb = match.group("verb")
                method = "ANY" if verb in ("all", "use", "route") else verb.upper()
                handler = _LAST_IDENTIFIER_ARG.search(match.group("rest"))
                name = handler.group("name") if handler else ""
                return Route(number, method, path, name, number if name else None)
        if _JS_ROUTE_OBJECT.search(line):
            window = " ".join(lines[index : index + 6])
            method = re.search(r"method\s*:\s*['\"](\w+)", window)
            url = re.search(r"(?:url|path)\s*:\s*['\"]([^'\"]+)", window)
            return Route(
                number, method.group(1).upper() if method else "ANY", url.group(1) if url else ""
            )
    if "go" in families:
        match = _GO_ROUTE.search(line)
        if match:
            verb, path = match.group("verb"), match.group("path")
            if verb in ("HandleFunc", "Handle") or path.startswith("/"):
                method = "ANY" if verb in ("HandleFunc", "Handle", "Any") else verb.upper()
                head, _, tail = path.partition(" ")
                if tail and head.isupper():  # Go 1.22 patterns: "GET /items/{id}"
                    method, path = head, tail.strip()
                handler = _LAST_IDENTIFIER_ARG.search(match.group("rest"))
                name = handler.group("name") if handler else ""
                return Route(number, method, path, name, number if name else None)
    if "java" in families:
        match = _JAVA_ROUTE.match(line)
        if match:
            verb, args = match.group("verb"), match.group("args") or ""
            method = verb.upper()
            if verb == "Request":
                listed = re.findall(r"RequestMethod\.(\w+)", args)
                method = "|".join(listed) or "ANY"
            path = _first_string(lines, index, args, lookahead=0)
            return Route(number, method, path, decorates=True)
        match = _JAXRS_ROUTE.match(line)
        if match:
            near = " ".join(lines[max(0, index - 2) : index + 3])
            path = re.search(r"@Path\s*\(\s*\"([^\"]*)\"", near)
            return Route(number, match.group("verb"), path.group(1) if path else "", decorates=True)
    if "csharp" in families:
        match = _CS_ROUTE_ATTRIBUTE.match(line)
        if match:
            verb = match.group("verb")
            method = verb.upper() if verb else "ANY"
            return Route(number, method, match.group("path") or "", decorates=True)
        match = _CS_ROUTE_CALL.search(line)
        if match:
            verb = match.group("verb") or "ANY"
            method = "ANY" if verb in ("Methods", "Group", "Fallback") else verb.upper()
            handler = _LAST_IDENTIFIER_ARG.search(match.group("rest"))
            name = handler.group("name") if handler else ""
            return Route(number, method, match.group("path"), name, number if name else None)
    return None


_ROUTE_HINTS = {
    "python": r"@|\.add_\w*(?:route|rule)\s*\(",
    "js": r"@|\.(?:get|post|put|delete|patch|options|head|all|use|route)\s*\(",
    "go": r"\.(?:HandleFunc|Handle|GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS|Any|Get|Post|Put"
    r"|Delete|Patch|Head|Options)\s*\(",
    "java": r"@",
    "csharp": r"\[|\.Map",
}


@cache
def _route_filter(families: tuple[str, ...]) -> re.Pattern[str]:
    """Text every route declaration of these families contains; most lines lack it."""
    return re.compile("|".join(_ROUTE_HINTS[family] for family in families))


def routes(lines: Sequence[str], language: str | None) -> list[Route]:
    """Route declarations with their handler: the next definition after a decorator or
    attribute, or the function named in a registration call."""
    families = _families(language)
    if not _route_filter(families).search("\n".join(lines)):
        return []
    return _routes(lines, families, _non_code_rows(lines, families))


def _routes(lines: Sequence[str], families: tuple[str, ...], skipped: set[int]) -> list[Route]:
    found: list[Route] = []
    hint = _route_filter(families)
    for index, line in enumerate(lines):
        if index in skipped or not hint.search(line):
            continue
        route = _route_at(lines, index, families)
        if route is None:
            continue
        if route.decorates:
            route = _with_handler(route, lines, families, skipped)
        found.append(route)
    return found


def _with_handler(
    route: Route,
    lines: Sequence[str],
    families: tuple[str, ...],
    skipped: set[int],
    reach: int = 15,
) -> Route:
    """The route with its handler: the first definition within ``reach`` lines below it."""
    for index in range(route.line, min(len(lines), route.line + reach)):
        if index in skipped:
            continue
        hit = _signature_at(lines[index], families)
        if hit:
            return Route(route.line, route.method, route.path, hit[0], index + 1, True)
    return route


def route_lines(lines: Sequence[str], language: str | None) -> list[int]:
    """1-based lines that declare a route or endpoint handler."""
    return [r.line for r in routes(lines, language)]
