"""YAML front matter: the document-level metadata that steers ranking and freshness.

Front matter is trusted only as far as it parses: broken YAML lowers the document's parse
confidence instead of failing the load, and every key is read defensively because authors
write dates, numbers and lists in many shapes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any

from scriptorium.plugin import DocMeta, SourceClass, split_lines

_OPEN = re.compile(r"^---[ \t]*$")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
BROKEN_CONFIDENCE = 0.5
_SOURCE_CLASSES = frozenset(c.value for c in SourceClass)


def _split(text: str) -> tuple[str, int] | None:
    """The YAML between the delimiters and the number of lines they span, or None."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):  # most documents have none: skip splitting them into lines
        return None
    lines = split_lines(text)
    if not lines or not _OPEN.match(lines[0]):
        return None
    for index in range(1, len(lines)):
        if _CLOSE.match(lines[index]):
            return "\n".join(lines[1:index]), index + 1
    return None


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (bool, dict, list)):
        return None
    text = str(value).strip()
    return text or None


def _boost(value: Any) -> float | None:
    """A usable boost: non-numbers are ignored; NaN, infinities and negatives become 0.0."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, (int, float)):
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0:
        return 0.0
    return number


def _moment(value: Any) -> datetime | None:
    """A timezone-aware UTC datetime from a YAML date, datetime or ISO-8601 string."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, time.min, tzinfo=UTC)
    return None


def _paths(value: Any) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    return tuple(text for text in (_text(item) for item in values) if text)


def _source_class(value: Any) -> str | None:
    text = _text(value)
    if text is None:
        return None
    text = text.lower()
    return text if text in _SOURCE_CLASSES else None


def meta_from_mapping(raw: Mapping[Any, Any]) -> DocMeta:
    """DocMeta from an already parsed front matter mapping."""
    search = raw.get("search")
    boost = _boost(search.get("boost")) if isinstance(search, Mapping) else None
    if boost is None:
        boost = _boost(raw.get("search.boost"))
    source_class = raw.get("class", raw.get("source_class"))
    canonical = raw.get("canonical_key", raw.get("canonical"))
    return DocMeta(
        title=_text(raw.get("title")),
        boost=1.0 if boost is None else boost,
        superseded_by=_text(raw.get("superseded_by")),
        effective_from=_moment(raw.get("effective_from")),
        effective_to=_moment(raw.get("effective_to")),
        moved_from=_paths(raw.get("moved_from")),
        source_class=_source_class(source_class),
        canonical_key=_text(canonical),
    )


def parse_front_matter(text: str) -> tuple[DocMeta, int, dict[Any, Any]]:
    """Parse leading front matter: (meta, lines it occupies, raw mapping). Never raises.

    Without front matter the result is ``(DocMeta(), 0, {})``. When the block is delimited but
    its YAML is broken or not a mapping, its lines are still skipped and the meta carries a
    lowered ``parse_confidence``.
    """
    split = _split(text)
    if split is None:
        return DocMeta(), 0, {}
    source, line_count = split
    import yaml  # here, not at the top: a daemon serving an existing generation never parses any

    try:
        raw = yaml.safe_load(source) if source.strip() else {}
    except Exception:  # broken YAML comes in many exception types, all mean the same here
        return DocMeta(parse_confidence=BROKEN_CONFIDENCE), line_count, {}
    if not isinstance(raw, dict):
        return DocMeta(parse_confidence=BROKEN_CONFIDENCE), line_count, {}
    return meta_from_mapping(raw), line_count, raw
