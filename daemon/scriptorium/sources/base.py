"""The source seam: where content comes from.

A *local* source is a directory tree the daemon reads, cuts into blocks and indexes itself.
Source kinds are plugins (``scriptorium_register_source_kinds``); this module holds the shared
base class that does the careful parts once: walking a tree with ignore rules, refusing paths
that leave the root, and reading text safely.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any
from urllib.parse import quote

import pathspec

from scriptorium.blocks.extractors import ExtractorChain
from scriptorium.domain.model import Block, Corpus, FileStat, SourceDocument
from scriptorium.settings.schema import Key
from scriptorium.settings.sourceconfig import SourceConfig
from scriptorium.sources.paths import (
    PathEscapeError,
    read_inside,
    resolve_inside,
)
from scriptorium.sources.skips import (
    BUILT_IN,
    GENERATED,
    GITIGNORE,
    SKIP_DIRS,
    SkipTally,
    generated_output,
)

# Directories never worth indexing: VCS metadata, installed dependencies, caches. Folders
# named like output (``site``, ``build``, ``dist``, ``vendor``, ``third_party``) are not among
# them: a Docusaurus or Hugo tree keeps its sources in ``site/``. What a build wrote is told by
# ``.gitignore`` and by the markers below instead.
ALWAYS_SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".scriptorium",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".idea",
        ".vscode",
    }
)
# Not content at all: their files are not counted among the skipped ones.
_UNCOUNTED_DIRS = frozenset({".git", ".hg", ".svn", ".scriptorium"})
DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024
# Keys every remote kind understands (its place in the provider chain).
ORDER_KEY = Key("order", "number", None, "place in the provider chain (lower answers first)")
# The kind-specific [[sources]] keys of every local tree kind (markdown, code).
LOCAL_TREE_KEYS: tuple[Key, ...] = (
    Key("include", "strings", None, "gitignore-style patterns of the files to index"),
    Key("exclude", "strings", [], "patterns of files never to index"),
    Key(
        "skip_dirs",
        "strings",
        [],
        "directory names never entered, on top of the built-in ones and generated output",
    ),
    Key("max_file_bytes", "integer", DEFAULT_MAX_FILE_BYTES, "larger files are skipped", minimum=1),
    Key("class_rules", "string_table", {}, "per-path source classes: pattern = class"),
    Key("snapshot", "bool", False, "index once; never watch this root"),
    ORDER_KEY,
)
# Include/exclude answers kept per path, bounded for trees that keep growing new names.
_SELECTION_LIMIT = 1_000_000


@dataclass(slots=True)
class SourceContext:
    """What the daemon hands a source factory."""

    extractors: ExtractorChain


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def looks_binary(data: bytes) -> bool:
    """Heuristic used by git: a NUL byte in the first 8 KiB means binary."""
    return b"\x00" in data[:8192]


class Source:
    """Base for every source kind."""

    kind: str = ""
    corpus: Corpus = Corpus.DOCS

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        self.config = config
        self.context = context
        root = Path(config.root).resolve() if config.root is not None else None
        self._root_uri = root.as_uri().rstrip("/") if root is not None else ""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def source_class(self) -> str:
        return self.config.source_class

    @property
    def is_default(self) -> bool:
        return self.config.default

    # -- locations ------------------------------------------------------------------------

    def page_location(self, path: str) -> str:
        """The canonical page location of a document path (unqualified)."""
        return path

    def block_location(self, doc: SourceDocument, block: Block, anchor_line: int | None) -> str:
        """The unqualified location of one block."""
        page = self.page_location(doc.path)
        return f"{page}#{block.fragment}" if block.fragment else page

    def url_for(self, path: str, anchor: str = "") -> str:
        """A URL for a document: the configured base, or a file:// URL for local trees."""
        base = self.config.url_base.rstrip("/")
        suffix = f"#{anchor}" if anchor else ""
        if base:
            return f"{base}/{self.page_location(path)}{suffix}"
        if self.config.root is not None:
            return self._root_uri + "/" + quote(path) + suffix
        return ""


class LocalTreeSource(Source):
    """A directory tree on disk, filtered by file patterns and ignore rules."""

    #: The kind-specific ``[[sources]]`` keys this kind understands (checked at start-up).
    settings: tuple[Key, ...] = LOCAL_TREE_KEYS
    #: Glob patterns (gitwildmatch) of files this source indexes.
    include: tuple[str, ...] = ("*",)
    #: Patterns this kind never indexes (generated files, lock files), on top of configured ones.
    exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True

    @staticmethod
    def keys_including(include: Sequence[str]) -> tuple[Key, ...]:
        """The shared tree keys, with a kind's default ``include`` spelled out for the
        settings reference."""
        return tuple(
            dataclasses.replace(key, default=list(include)) if key.name == "include" else key
            for key in LOCAL_TREE_KEYS
        )

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        super().__init__(config, context)
        if config.root is None:
            raise ValueError(f"source {config.name!r} needs a root directory")
        self.root = Path(config.root).resolve()
        self._root_str = str(self.root)
        #: The directories (absolute paths) the last full listing walked: the ones a
        #: file-system watch has to cover; skipped and ignored trees are not among them.
        self.listed_dirs: frozenset[str] = frozenset()
        self.max_file_bytes = int(config.options.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES))
        include = config.options.get("include") or self.include
        exclude = [*self.exclude, *config.options.get("exclude", ())]
        self._include = pathspec.PathSpec.from_lines("gitignore", include)
        self._exclude = pathspec.PathSpec.from_lines("gitignore", exclude)
        self._selection: dict[str, bool] = {}
        self._configured_skips = frozenset(config.options.get("skip_dirs", ()))
        #: What the last full listing left out, by rule (see ``sources.skips``).
        self.skips = SkipTally()
        # Per-path source classes: {"release-notes.md" = "ledger", "reference/**" = "reference"}.
        self._class_rules = [
            (pathspec.PathSpec.from_lines("gitignore", [pattern]), str(cls))
            for pattern, cls in dict(config.options.get("class_rules", {})).items()
        ]

    def class_for(self, relpath: str) -> str | None:
        """The source class a ``class_rules`` pattern assigns to this path, if any."""
        for spec, cls in self._class_rules:
            if spec.match_file(relpath):
                return cls
        return None

    def skipped_counts(self) -> dict[str, int]:
        """Files this source would index that the last listing left out, by rule."""
        root = self._root_str + os.sep

        def admits(path: str) -> bool:
            rel = path[len(root) :].replace(os.sep, "/")
            return bool(self._include.match_file(rel)) and not self._exclude.match_file(rel)

        return self.skips.counts(admits)

    def size_limit(self, relpath: str) -> int:
        """The largest file, in bytes, this source reads at ``relpath``; larger ones are skipped."""
        return self.max_file_bytes

    # -- safety ---------------------------------------------------------------------------

    def resolve_path(self, relpath: str) -> Path:
        """The absolute path for ``relpath``, refusing anything outside the root (symlinks too)."""
        return Path(resolve_inside(self._root_str, relpath))

    # -- walking --------------------------------------------------------------------------

    @staticmethod
    def _with_gitignore(path: str, prefix: str, inherited: list[tuple[str, Any]]):
        """``inherited`` plus the rules of the ``.gitignore`` at ``path`` (for ``prefix``)."""
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            return inherited
        return [*inherited, (prefix, pathspec.PathSpec.from_lines("gitignore", lines))]

    @staticmethod
    def _ignored(relpath: str, matchers: list[tuple[str, Any]], is_dir: bool) -> bool:
        probe = relpath + "/" if is_dir else relpath
        for prefix, spec in matchers:
            if probe.startswith(prefix) and spec.match_file(probe[len(prefix) :]):
                return True
        return False

    def _ignored_file(self, rel: str, matchers: list[tuple[str, Any]]) -> bool:
        """A file the source would index that an ignore rule hides."""
        return self._selected(rel) and self._ignored(rel, matchers, is_dir=False)

    def _selected(self, relpath: str) -> bool:
        """Whether ``include`` and ``exclude`` admit ``relpath`` (remembered: they never change)."""
        found = self._selection.get(relpath)
        if found is None:
            found = bool(self._include.match_file(relpath)) and not self._exclude.match_file(
                relpath
            )
            if len(self._selection) >= _SELECTION_LIMIT:
                self._selection.clear()
            self._selection[relpath] = found
        return found

    def list_files(self) -> list[FileStat]:
        """Every indexable file under the root, sorted by path.

        The polling watcher calls this on every tick, so the walk stays on strings and
        ``os.scandir`` entries (no ``Path`` per file) and include/exclude answers are kept per path.
        """
        found: list[FileStat] = []
        dirs: list[str] = []
        tally = SkipTally()
        self._walk(str(self.root), "", [], found, dirs, tally)
        found.sort(key=lambda f: f.path)
        self.listed_dirs = frozenset(dirs)
        self.skips = tally.settled(self.skips)
        self.skipped_counts()  # counted here, off the event loop that answers ListSources
        return found

    def stat_paths(self, relpaths: Iterable[str]) -> list[FileStat] | None:
        """The indexable files among ``relpaths``, as a full listing would report them.

        For an event-driven watcher: it names the paths that changed, and this admits them by
        the same rules as :meth:`list_files` (skipped directories, ``.gitignore`` rules on the
        way down, include/exclude, symlinks that stay inside, the size cap) without walking the
        tree. Paths that no longer exist, or are not indexable, are left out. ``None`` means only
        a full listing can tell what changed: a directory appeared (its files raised no events
        of their own) or an ignore file changed (it re-admits or hides files anywhere below it).
        """
        found: list[FileStat] = []
        matchers_of: dict[str, list[tuple[str, Any]] | None] = {}
        for rel in sorted(set(relpaths)):
            directory, _, name = rel.rpartition("/")
            if name == ".gitignore":
                return None
            matchers = self._matchers_for(directory, matchers_of)
            if matchers is None:  # inside a directory the walk never enters
                continue
            path = os.path.join(self._root_str, rel)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    if self._skips_dir(name, rel, matchers):
                        continue
                    return None
                stat = self._admitted_file(rel, os.path.islink(path), matchers, path)
            except OSError:
                continue
            if stat is not None:
                found.append(stat)
        return found

    def _matchers_for(
        self, directory: str, known: dict[str, list[tuple[str, Any]] | None]
    ) -> list[tuple[str, Any]] | None:
        """The ignore rules in force inside ``directory``; None when the walk skips it."""
        if directory in known:
            return known[directory]
        matchers: list[tuple[str, Any]] | None = []
        if directory:
            parent, _, name = directory.rpartition("/")
            matchers = self._matchers_for(parent, known)
            if matchers is not None and self._skips_dir(name, directory, matchers):
                matchers = None
        if matchers is not None and self.respect_gitignore:
            ignore_file = os.path.join(self._root_str, directory, ".gitignore")
            if os.path.isfile(ignore_file):
                prefix = directory + "/" if directory else ""
                matchers = self._with_gitignore(ignore_file, prefix, matchers)
        known[directory] = matchers
        return matchers

    def _skips_dir(self, name: str, rel: str, matchers: list[tuple[str, Any]]) -> bool:
        return self._skip_rule(name, rel, matchers) is not None or generated_output(
            os.path.join(self._root_str, rel), None
        )

    def _skip_rule(self, name: str, rel: str, matchers: list[tuple[str, Any]]) -> str | None:
        """Which rule keeps the walk out of directory ``rel``, by its name and ignore rules."""
        if name in ALWAYS_SKIPPED_DIRS or name.endswith(".egg-info"):
            return BUILT_IN
        if name in self._configured_skips:
            return SKIP_DIRS
        if self._ignored(rel, matchers, is_dir=True):
            return GITIGNORE
        return None

    def _admitted_file(
        self,
        rel: str,
        is_symlink: bool,
        matchers: list[tuple[str, Any]],
        path: str | os.PathLike[str],
    ) -> FileStat | None:
        """A regular file's entry when the source indexes it (raises OSError when it vanished)."""
        if is_symlink:
            # A symlink is indexed only when it stays inside the root.
            try:
                self.resolve_path(rel)
            except PathEscapeError:
                return None
        if not self._selected(rel):
            return None
        if matchers and self._ignored(rel, matchers, is_dir=False):
            return None
        stat = os.stat(path)
        if not S_ISREG(stat.st_mode) or stat.st_size > self.size_limit(rel):
            return None
        return FileStat(rel, stat.st_size, stat.st_mtime_ns)

    def _walk(
        self,
        directory: str,
        prefix: str,
        matchers: list,
        found: list[FileStat],
        dirs: list[str],
        tally: SkipTally,
    ) -> None:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        if prefix and generated_output(directory, {e.name for e in entries}):
            tally.skip_dir(GENERATED, directory)
            return
        dirs.append(directory)
        if self.respect_gitignore:
            for entry in entries:
                if entry.name == ".gitignore":
                    if entry.is_file():
                        matchers = self._with_gitignore(entry.path, prefix, matchers)
                    break
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    rule = self._skip_rule(entry.name, rel, matchers)
                    if rule is None:
                        self._walk(entry.path, rel + "/", matchers, found, dirs, tally)
                    elif entry.name not in _UNCOUNTED_DIRS:
                        tally.skip_dir(rule, entry.path)
                    continue
                if not entry.is_file(follow_symlinks=True):
                    continue
                stat = self._admitted_file(rel, entry.is_symlink(), matchers, entry)
                if stat is None and matchers and self._ignored_file(rel, matchers):
                    tally.skip_file(GITIGNORE)
            except OSError:
                continue
            if stat is not None:
                found.append(stat)

    # -- reading --------------------------------------------------------------------------

    def read_text(self, relpath: str) -> str | None:
        """The file's text, or None when it is missing, binary or too large."""
        data = read_inside(self._root_str, relpath, self.size_limit(relpath))
        if data is None or looks_binary(data):
            return None
        return data.decode("utf-8", "replace")

    def load(self, relpath: str) -> SourceDocument | None:
        """Read and cut one document; None when it cannot be read or no extractor accepts it."""
        text = self.read_text(relpath)
        if text is None:
            return None
        return self.document_from_text(relpath, text)

    def document_from_text(self, relpath: str, text: str) -> SourceDocument | None:
        extractor = self.context.extractors.for_path(relpath, self.corpus)
        if extractor is None:
            return None
        extraction = extractor.extract(relpath, text)
        if extraction.text is not None:
            text = extraction.text
        meta = extraction.meta
        if meta.source_class is None:
            rule_class = self.class_for(relpath)
            if rule_class is not None:
                meta = dataclasses.replace(meta, source_class=rule_class)
        return SourceDocument(
            source=self.name,
            path=relpath,
            text=text,
            corpus=self.corpus,
            content_hash=content_hash(text),
            meta=meta,
            blocks=extraction.blocks,
            language=extraction.language,
            front_matter_lines=extraction.front_matter_lines,
            preview_from_body=extraction.preview_from_body,
        )

    def iter_documents(self) -> Iterator[SourceDocument]:
        for stat in self.list_files():
            doc = self.load(stat.path)
            if doc is not None:
                yield doc


SourceFactory = Callable[[SourceConfig, SourceContext], Source]


def deferred_factory(module: str, name: str) -> SourceFactory:
    """A factory that imports ``module`` and builds ``name`` only when a source is configured.

    For plugins whose sources need heavy libraries (HTTP clients, HTML parsers): registering
    the kind then costs nothing at start-up for daemons that never configure one.
    """

    def build(config: SourceConfig, context: SourceContext) -> Source:
        source_class = getattr(importlib.import_module(module), name)
        return source_class(config, context)

    build.__qualname__ = f"deferred_factory({module}.{name})"
    return build
