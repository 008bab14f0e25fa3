"""GetContent's highlighted ranges in a code block: signatures, routes, wiring, by priority."""

from __future__ import annotations

from collections.abc import Sequence

from scriptorium.text.code.families import Range, _families, _non_code_rows
from scriptorium.text.code.routes import _routes
from scriptorium.text.code.signatures import _signatures
from scriptorium.text.code.wiring import (
    _import_lines,
    is_configuration,
    is_decorator,
    is_dependency_injection,
)

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
