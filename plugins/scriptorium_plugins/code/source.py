"""The local code source: a directory tree of source and configuration files."""

from __future__ import annotations

from scriptorium.plugin import Corpus, Key, LocalTreeSource, SourceConfig, SourceContext
from scriptorium_plugins.code.languages import include_patterns, language_for_path

# Data formats that generated files share with hand-written configuration: past this size a
# JSON, YAML or TOML file is data (fixtures, schemas, dumps) and would swamp every search.
DEFAULT_MAX_DATA_FILE_BYTES = 256 * 1024
DATA_LANGUAGES = frozenset({"json", "yaml", "toml"})

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
    settings = (
        *LocalTreeSource.settings,
        Key(
            "max_data_file_bytes",
            "integer",
            DEFAULT_MAX_DATA_FILE_BYTES,
            "JSON, YAML and TOML files larger than this are skipped (generated data)",
            minimum=1,
        ),
    )

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        super().__init__(config, context)
        self.max_data_file_bytes = int(
            config.options.get("max_data_file_bytes", DEFAULT_MAX_DATA_FILE_BYTES)
        )

    def size_limit(self, relpath: str) -> int:
        """Configuration files stay small; a data file past ``max_data_file_bytes`` is skipped."""
        if language_for_path(relpath) in DATA_LANGUAGES:
            return min(self.max_file_bytes, self.max_data_file_bytes)
        return self.max_file_bytes

    def page_location(self, path: str) -> str:
        """Code is addressed by its path in the tree, unchanged."""
        return path
