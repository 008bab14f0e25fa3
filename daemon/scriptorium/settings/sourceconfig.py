"""One configured source as the configuration file gives it (``[[sources]]``, or a bare path).

Parsed here, with the file, and handed to ``sources/`` (which re-exports it), so reading the
configuration never imports the sources themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(slots=True)
class SourceConfig:
    """One configured source, as read from the TOML file or built from a bare path."""

    name: str
    kind: str
    root: Path | None = None
    source_class: str = "product"
    default: bool = False
    url_base: str = ""
    options: dict[str, Any] = field(default_factory=dict)
    # Position among the file's [[sources]] tables (1-based), for error messages; 0 when the
    # source came from a bare path.
    index: int = 0
