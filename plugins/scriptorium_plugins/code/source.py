"""The local code source: a directory tree of source and configuration files."""

from __future__ import annotations

from scriptorium.plugin import Corpus, LocalTreeSource
from scriptorium_plugins.code.languages import include_patterns

# Generated or vendored files: large, repetitive and never what a reader is looking for.
GENERATED_FILE_PATTERNS: tuple[str, ...] = (
    "*.min.js",
    "*.min.css",
    "*.map",
    "*_pb2.py",
    "*_pb2.pyi",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*.lock",
    "package-lock.json",
    "pnpm-lock.yaml",
    "npm-shrinkwrap.json",
)


class CodeSource(LocalTreeSource):
    """Source files in every known language plus plain-text configuration, never Markdown."""

    kind = "code"
    corpus = Corpus.CODE
    include = include_patterns()
    exclude = tuple(GENERATED_FILE_PATTERNS)

    def page_location(self, path: str) -> str:
        """Code is addressed by its path in the tree, unchanged."""
        return path
