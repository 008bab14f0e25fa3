"""Wiring lines: dependency injection, decorators, configuration and imports."""

from __future__ import annotations

import re
from collections.abc import Sequence

from scriptorium.text.code.families import _families

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
