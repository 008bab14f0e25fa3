"""Structure of source code from its lines alone: definitions, routes, wiring and imports.

These helpers are regular-expression based on purpose. They run on the request path (GetContent
highlights, SummarizeFlow steps, implementation-mode boosts) over any language, where parsing is
too slow or unavailable, and a near miss costs a highlight, not a wrong answer. Line numbers
are 1-based. ``language`` uses the code source's names ("python", "typescript", "go", ...);
an unknown or missing language tries every family's patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

Range = tuple[int, int, str]
FlowCandidate = tuple[int, str, str, str]

_FAMILIES = {
    "python": "python",
    "javascript": "js",
    "typescript": "js",
    "tsx": "js",
    "vue": "js",
    "svelte": "js",
    "go": "go",
    "java": "java",
    "csharp": "csharp",
}
_ALL_FAMILIES = ("python", "js", "go", "java", "csharp")
_HASH_COMMENT_FAMILIES = frozenset({"python"})


def _families(language: str | None) -> tuple[str, ...]:
    family = _FAMILIES.get((language or "").lower())
    return (family,) if family else _ALL_FAMILIES


def _is_comment(line: str, families: tuple[str, ...]) -> bool:
    stripped = line.lstrip()
    if stripped.startswith("#") and any(f in _HASH_COMMENT_FAMILIES for f in families):
        return True
    if any(f != "python" for f in families):
        return stripped.startswith(("//", "/*", "* ", "*/")) or stripped == "*"
    return False


def _non_code_rows(lines: Sequence[str], families: tuple[str, ...]) -> set[int]:
    """0-based rows that hold no code: blanks, comments and the inside of Python triple-quoted
    strings, whose examples (``@app.get`` in a docstring) must not count as real routes."""
    skipped: set[int] = set()
    python = "python" in families
    quote: str | None = None
    for row, line in enumerate(lines):
        if quote is not None:
            skipped.add(row)
            if line.count(quote) % 2 == 1:
                quote = None
            continue
        if not line.strip() or _is_comment(line, families):
            skipped.add(row)
            continue
        if python:
            for mark in ('"""', "'''"):
                if line.count(mark) % 2 == 1:
                    quote = mark
                    break
    return skipped


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- signatures ----------------------------------------------------------------------------

_JAVA_MODIFIERS = r"(?:public|private|protected|static|final|abstract|synchronized|native|default)"
_CS_MODIFIERS = (
    r"(?:public|private|protected|internal|static|virtual|override|abstract|sealed|async|"
    r"extern|unsafe|new|partial|readonly)"
)
_NOT_A_TYPE = (
    r"(?!(?:return|new|else|throw|case|yield|await|assert|package|import|using|public|private|"
    r"protected|internal|static|final|abstract|virtual|override|async)\b)"
)

_SIGNATURES: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "python": (
        (re.compile(r"^\s*(?:async\s+)?def\s+(?P<name>\w+)"), "function"),
        (re.compile(r"^\s*class\s+(?P<name>\w+)"), "class"),
    ),
    "js": (
        (
            re.compile(
                r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)"
            ),
            "function",
        ),
        (
            re.compile(
                r"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?"
                r"class\s+(?P<name>[\w$]+)"
            ),
            "class",
        ),
        (
            re.compile(
                r"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*"
                r"(?:async\s+)?(?:function\b|(?:\([^)]*\)|[\w$]+)\s*(?::\s*[^=]+)?=>)"
            ),
            "function",
        ),
        (
            re.compile(r"^\s*(?:export\s+)?(?:declare\s+)?interface\s+(?P<name>[\w$]+)"),
            "interface",
        ),
        (
            re.compile(r"^\s*(?:export\s+)?(?:declare\s+)?type\s+(?P<name>[\w$]+)\s*(?:<.*>)?\s*="),
            "type",
        ),
        (
            re.compile(
                r"^\s+(?:(?:public|private|protected|static|async|readonly|override|abstract|"
                r"get|set)\s+)*(?!(?:if|for|while|switch|catch|function|return|with)\b)"
                r"(?P<name>[\w$#]+)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^={]+)?\{\s*$"
            ),
            "method",
        ),
    ),
    "go": (
        (re.compile(r"^func\s+\([^)]*\)\s*(?P<name>\w+)"), "method"),
        (re.compile(r"^func\s+(?P<name>\w+)"), "function"),
        (re.compile(r"^\s*type\s+(?P<name>\w+)\s+struct\b"), "struct"),
        (re.compile(r"^\s*type\s+(?P<name>\w+)\s+interface\b"), "interface"),
        (re.compile(r"^type\s+(?P<name>\w+)\b(?!\s*\()"), "type"),
    ),
    "java": (
        (
            re.compile(
                rf"^\s*(?:{_JAVA_MODIFIERS}\s+|(?:sealed|non-sealed|strictfp)\s+)*"
                r"(?P<kind>class|interface|enum|record|@interface)\s+(?P<name>\w+)"
            ),
            "class",
        ),
        (
            re.compile(
                rf"^\s*(?:{_JAVA_MODIFIERS}\s+)*(?:<[^>]+>\s+)?{_NOT_A_TYPE}"
                r"[\w.$]+(?:<[^()]*>)?(?:\[\])*\s+(?P<name>\w+)\s*\([^;]*$"
            ),
            "method",
        ),
        (
            re.compile(r"^\s*(?:public|private|protected)\s+(?P<name>[A-Z]\w*)\s*\([^;]*$"),
            "constructor",
        ),
    ),
    "csharp": (
        (
            re.compile(
                rf"^\s*(?:{_CS_MODIFIERS}\s+|file\s+|ref\s+)*"
                r"(?P<kind>class|interface|struct|record|enum)\s+(?P<name>\w+)"
            ),
            "class",
        ),
        (
            re.compile(
                rf"^\s*(?:{_CS_MODIFIERS}\s+)+{_NOT_A_TYPE}"
                r"[\w.<>\[\],?]+(?:<[^()]*>)?\s+(?P<name>\w+)\s*(?:<[^>]*>)?\s*\("
            ),
            "method",
        ),
        (
            re.compile(rf"^\s*(?:{_CS_MODIFIERS}\s+)+(?P<name>[A-Z]\w*)\s*\("),
            "constructor",
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class Signature:
    """A line that starts a definition."""

    line: int
    name: str
    kind: str
    text: str


_SIGNATURE_HINTS = {
    "python": r"\b(?:def|class)\s",
    "js": r"\b(?:function|class|interface|type)\b|=>|\{\s*$",
    "go": r"^\s*(?:func|type)\b",
    "java": r"\(|\b(?:class|interface|enum|record)\b",
    "csharp": r"\(|\b(?:class|interface|struct|record|enum)\b",
}


@cache
def _signature_filter(families: tuple[str, ...]) -> re.Pattern[str]:
    """Text every definition line of these families contains; most lines lack it."""
    return re.compile("|".join(_SIGNATURE_HINTS[family] for family in families))


def _signature_at(line: str, families: tuple[str, ...]) -> tuple[str, str] | None:
    if not _signature_filter(families).search(line):
        return None
    for family in families:
        for pattern, kind in _SIGNATURES[family]:
            match = pattern.match(line)
            if match:
                found = match.groupdict().get("kind") or kind
                return match.group("name"), "interface" if found == "@interface" else found
    return None


def signatures(lines: Sequence[str], language: str | None) -> list[Signature]:
    """Every definition-starting line with its name and kind."""
    families = _families(language)
    return _signatures(lines, families, _non_code_rows(lines, families))


def _signatures(
    lines: Sequence[str], families: tuple[str, ...], skipped: set[int]
) -> list[Signature]:
    found: list[Signature] = []
    for row, line in enumerate(lines):
        if row in skipped:
            continue
        hit = _signature_at(line, families)
        if hit:
            found.append(Signature(row + 1, hit[0], hit[1], line.strip()))
    return found


def signature_lines(lines: Sequence[str], language: str | None) -> list[int]:
    """1-based lines that start a function, class, method or type definition."""
    return [s.line for s in signatures(lines, language)]


# -- routes --------------------------------------------------------------------------------


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


# -- wiring: dependency injection, decorators, configuration, imports ----------------------

_DEPENDENCY_INJECTION = re.compile(
    r"\b(?:Depends|Security)\s*\(|\b[Ss]ervices\.(?:Add|TryAdd)\w*|@(?:Inject|Injectable|Autowired"
    r"|Bean|Component|Service|Repository)\b|\bproviders\s*[:=]|\bdependency_overrides\b"
    r"|\[FromServices\]|\bwire\.(?:Build|NewSet)\s*\(|\binject\s*\(\s*[A-Z]"
)
_DECORATOR_AT = re.compile(r"^\s*@[A-Za-z_]")
_CS_ATTRIBUTE = re.compile(
    r"^\s*\[\s*[A-Z]\w*(?:\s*\(.*\))?(?:\s*,\s*[A-Z]\w*(?:\s*\(.*\))?)*\s*\]"
)
_CONFIGURATION = re.compile(
    r"\b(?:BaseSettings|SettingsConfigDict|IConfiguration|IOptions<|ConfigurationProperties"
    r"|load_dotenv|get_settings|configparser|ConfigParser|env_file)\b"
    r"|\bos\.environ\b|\bgetenv\s*\(|\bGetenv\s*\(|\bprocess\.env\b|\bimport\.meta\.env\b"
    r"|\bConfiguration\s*\[|\bGetSection\s*\(|@Value\s*\(|\bviper\.\w+\s*\(|\bconfig\.get\s*\("
)
_IMPORT_LINE = {
    "python": re.compile(r"^\s*(?:import\s+[\w.]|from\s+[\w.]+\s+import\b)"),
    "js": re.compile(
        r"^\s*import\b|\brequire\s*\(\s*['\"]|^\s*export\s+.*\bfrom\s+['\"]|\bimport\s*\(\s*['\"]"
    ),
    "go": re.compile(r"^\s*import\b"),
    "java": re.compile(r"^\s*import\s"),
    "csharp": re.compile(r"^\s*(?:global\s+)?using\s+(?:static\s+)?[\w.=\s]+;"),
}


# Literals each match of the patterns above contains: a substring test rules most text out far
# faster than the regular expressions can.
_DEPENDENCY_INJECTION_HINTS = (
    "Depends",
    "Security",
    "ervices.",
    "@Inject",
    "@Autowired",
    "@Bean",
    "@Component",
    "@Service",
    "@Repository",
    "providers",
    "dependency_overrides",
    "FromServices",
    "wire.",
    "inject",
)
_CONFIGURATION_HINTS = (
    "Settings",
    "get_settings",
    "Configuration",
    "IOptions",
    "load_dotenv",
    "configparser",
    "ConfigParser",
    "env_file",
    "environ",
    "etenv",
    "process.env",
    "meta.env",
    "GetSection",
    "@Value",
    "viper.",
    "config.get",
)


def _matches(text: str, hints: tuple[str, ...], pattern: re.Pattern[str]) -> bool:
    """Hint test on the whole text, the pattern only on lines holding a hint (the patterns
    are slow to scan long text with)."""
    if not any(h in text for h in hints):
        return False
    return any(pattern.search(line) for line in text.split("\n") if any(h in line for h in hints))


def is_dependency_injection(text: str) -> bool:
    """Whether ``text`` (a line or a whole block) registers or injects a dependency."""
    return _matches(text, _DEPENDENCY_INJECTION_HINTS, _DEPENDENCY_INJECTION)


def is_configuration(text: str) -> bool:
    """Whether ``text`` (a line or a whole block) reads settings or the environment."""
    return _matches(text, _CONFIGURATION_HINTS, _CONFIGURATION)


def is_decorator(line: str, language: str | None) -> bool:
    """A decorator, annotation or attribute line (``@x``, ``[X]``)."""
    families = _families(language)
    if "go" in families and len(families) == 1:
        return False
    if _DECORATOR_AT.match(line):
        return True
    return "csharp" in families and bool(_CS_ATTRIBUTE.match(line))


def _import_lines(lines: Sequence[str], families: tuple[str, ...]) -> set[int]:
    found: set[int] = set()
    in_go_block = False
    for number, line in enumerate(lines, 1):
        if in_go_block:
            found.add(number)
            in_go_block = not line.strip().startswith(")")
            continue
        for family in families:
            if _IMPORT_LINE[family].search(line):
                found.add(number)
                if family == "go" and re.match(r"^\s*import\s*\(\s*$", line):
                    in_go_block = True
                break
    return found


# -- GetContent highlights -----------------------------------------------------------------

_PRIORITY = (
    "anchor",
    "route-handler",
    "dependency-injection",
    "configuration",
    "decorator",
    "signature",
    "import",
)


def interesting_code_ranges(
    lines: Sequence[str], language: str | None, anchor_line: int, radius: int = 30
) -> list[Range]:
    """Highlighted ranges for a code ref: the anchor, and around it signatures, DI, decorators,
    configuration reads and imports, plus every route handler in the file.

    Each line carries at most one reason (the first of anchor, route-handler,
    dependency-injection, configuration, decorator, signature, import); neighbouring lines with
    the same reason merge into one range. Ranges are 1-based, inclusive and sorted.
    """
    total = len(lines)
    if total == 0:
        return []
    families = _families(language)
    anchor = min(max(anchor_line, 1), total)
    low, high = max(1, anchor - radius), min(total, anchor + radius)
    labels: dict[int, str] = {}

    def mark(number: int, reason: str) -> None:
        current = labels.get(number)
        if current is None or _PRIORITY.index(reason) < _PRIORITY.index(current):
            labels[number] = reason

    skipped = _non_code_rows(lines, families)
    mark(anchor, "anchor")
    for route in _routes(lines, families, skipped):
        end = route.handler_line if route.handler_line else route.line
        for number in range(route.line, max(route.line, end) + 1):
            mark(number, "route-handler")
    window = {row for row in range(low - 1, high) if row not in skipped}
    for sig in _signatures(lines, families, skipped | (set(range(total)) - window)):
        mark(sig.line, "signature")
    for number in sorted(_import_lines(lines, families)):
        if low <= number <= high and number - 1 not in skipped:
            mark(number, "import")
    for number in range(low, high + 1):
        line = lines[number - 1]
        if number - 1 in skipped:
            continue
        if is_dependency_injection(line):
            mark(number, "dependency-injection")
        elif is_configuration(line):
            mark(number, "configuration")
        elif is_decorator(line, language):
            mark(number, "decorator")
    return _merge(labels)


def _merge(labels: dict[int, str]) -> list[Range]:
    ranges: list[Range] = []
    for number in sorted(labels):
        reason = labels[number]
        if ranges and ranges[-1][2] == reason and ranges[-1][1] == number - 1:
            ranges[-1] = (ranges[-1][0], number, reason)
        else:
            ranges.append((number, number, reason))
    return ranges


# -- SummarizeFlow steps -------------------------------------------------------------------


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
    return [steps[number] for number in sorted(steps)]


# -- imports -------------------------------------------------------------------------------

_PY_FROM = re.compile(
    r"^[ \t]*from[ \t]+(?P<module>\.*[\w.]*)[ \t]+import[ \t]+"
    r"(?P<names>\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)",
    re.M,
)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+(?P<modules>[^\n#;]+)", re.M)
_JS_IMPORTS = (
    re.compile(
        r"\b(?:import|export)\s+(?:type\s+)?(?:[\w*${},\s]+?\s+from\s+)?['\"](?P<module>[^'\"\n]+)['\"]"
    ),
    re.compile(r"\b(?:require|import)\s*\(\s*['\"](?P<module>[^'\"\n]+)['\"]\s*\)"),
)
_GO_IMPORT = re.compile(r"^[ \t]*import[ \t]+(?:[\w.]+[ \t]+)?\"(?P<module>[^\"]+)\"", re.M)
_GO_IMPORT_BLOCK = re.compile(r"^[ \t]*import[ \t]*\((?P<body>.*?)\)", re.M | re.S)
_QUOTED = re.compile(r"\"([^\"\n]+)\"")
_JAVA_IMPORT = re.compile(
    r"^[ \t]*import[ \t]+(?P<static>static[ \t]+)?(?P<module>[\w.]+?)(?:\.\*)?[ \t]*;", re.M
)
_CS_USING = re.compile(
    r"^[ \t]*(?:global[ \t]+)?using[ \t]+(?:static[ \t]+)?(?:\w+[ \t]*=[ \t]*)?"
    r"(?P<module>[\w.]+)[ \t]*;",
    re.M,
)


def _python_imports(text: str) -> Iterable[str]:
    for match in _PY_FROM.finditer(text):
        module = match.group("module")
        if module.strip("."):
            yield module
        names = match.group("names").replace("\\\n", " ").strip("() \t\n")
        for part in names.split(","):
            name = part.split()[0] if part.split() else ""
            if name and name != "*" and name.isidentifier():
                yield f"{module}{name}" if module.endswith(".") else f"{module}.{name}"
    for match in _PY_IMPORT.finditer(text):
        for part in match.group("modules").split(","):
            words = part.split()
            if words and re.fullmatch(r"[\w.]+", words[0]):
                yield words[0]


def _js_imports(text: str) -> Iterable[str]:
    found: list[tuple[int, str]] = []
    for pattern in _JS_IMPORTS:
        found.extend((m.start(), m.group("module")) for m in pattern.finditer(text))
    return [module for _, module in sorted(found)]


def _go_imports(text: str) -> Iterable[str]:
    found: list[tuple[int, str]] = [
        (m.start(), m.group("module")) for m in _GO_IMPORT.finditer(text)
    ]
    for block in _GO_IMPORT_BLOCK.finditer(text):
        found.extend(
            (block.start() + m.start(), m.group(1)) for m in _QUOTED.finditer(block["body"])
        )
    return [module for _, module in sorted(found)]


def _java_imports(text: str) -> Iterable[str]:
    for match in _JAVA_IMPORT.finditer(text):
        module = match.group("module")
        if match.group("static") and "." in module:
            yield module.rsplit(".", 1)[0]
        yield module


def _csharp_imports(text: str) -> Iterable[str]:
    return [m.group("module") for m in _CS_USING.finditer(text)]


@cache
def _import_readers():
    return {
        "python": _python_imports,
        "js": _js_imports,
        "go": _go_imports,
        "java": _java_imports,
        "csharp": _csharp_imports,
    }


def import_targets(text: str, language: str | None) -> list[str]:
    """Module names a file imports, in first-seen order without repeats.

    ``from x.y import z`` gives "x.y" and "x.y.z" (relative imports keep their dots); JS/TS gives
    the specifier of ``import``/``export … from``/``require``; Go the import paths; Java and C#
    the imported or used names.
    """
    readers = _import_readers()
    found: list[str] = []
    for family in _families(language):
        found.extend(readers[family](text))
    return list(dict.fromkeys(m for m in found if m))
