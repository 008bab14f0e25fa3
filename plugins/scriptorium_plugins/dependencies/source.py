"""The ``dependencies`` source kind: the installed code and docs of what a project depends on.

Its root is the project. Each listing reads the manifests and lock files there, finds every
declared dependency where it is installed, and lists that library's files as
``name@version:path``. A version bump changes only that library's paths, so the indexer's
reconcile re-reads exactly its files and keeps every other library's blocks as they are. The
watch covers the project's root folder only: an edit to a manifest or a lock file there lists
the dependencies again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import time
from pathlib import Path

from scriptorium.plugin import (
    Corpus,
    FileStat,
    Key,
    LibraryReport,
    LibrarySource,
    LocalTreeSource,
    SourceConfig,
    SourceContext,
    SourceDocument,
    content_hash,
    split_library_label,
)
from scriptorium_plugins.dependencies.discover import Where, discover, is_manifest
from scriptorium_plugins.dependencies.docsites import (
    DOCS_PREFIX,
    Attached,
    DocsAttacher,
    DocsOptions,
)
from scriptorium_plugins.dependencies.files import DOC_SUFFIXES
from scriptorium_plugins.dependencies.model import (
    ECOSYSTEMS,
    Dependency,
    InstalledFile,
    library_key,
)
from scriptorium_plugins.dependencies.python import readme_text

log = logging.getLogger("scriptorium.dependencies")

DEFAULT_MAX_FILES = 2000
# A listing (the poll watcher lists every tick) reads the manifests again at least this often
# even when nothing it can see changed (a ``go mod download`` into the module cache).
REDISCOVER_SECONDS = 60.0
# Larger files of a library are nearly always generated (bundles, tables, protocol types); a
# reader looks for the hand-written modules beside them.
DEFAULT_MAX_FILE_BYTES = 256 * 1024
# Said in the start-up log and in ListSources, beside the counts: how to turn off the source
# ``serve PATH`` adds by itself, and one a configuration file names.
TURN_OFF = "turn off with [dependencies] enabled = false or serve --no-dependencies"
TURN_OFF_CONFIGURED = "turn off by removing its [[sources]] entry"

KEYS: tuple[Key, ...] = (
    Key("transitive", "bool", False, "index every locked dependency, not only the direct ones"),
    Key(
        "ecosystems",
        "strings",
        list(ECOSYSTEMS),
        "which manifests are read: python, node, go, rust",
        choices=ECOSYSTEMS,
    ),
    Key(
        "venv",
        "string",
        "",
        "the virtualenv whose site-packages is read (default: the project's .venv, "
        "else $VIRTUAL_ENV)",
    ),
    Key("node_modules", "string", "", "the node_modules folder (default: the project's)"),
    Key(
        "gomodcache",
        "string",
        "",
        "the Go module cache (default: $GOMODCACHE, else `go env GOMODCACHE`)",
    ),
    Key("cargo_home", "string", "", "Cargo's home (default: $CARGO_HOME, else ~/.cargo)"),
    Key(
        "max_files_per_library",
        "integer",
        DEFAULT_MAX_FILES,
        "most files read of one library (in path order)",
        minimum=1,
    ),
    Key("max_file_bytes", "integer", DEFAULT_MAX_FILE_BYTES, "larger files are skipped", minimum=1),
    Key(
        "docs_sites",
        "bool",
        False,
        "fetch each library's published documentation site (its metadata's documentation URL) "
        "at the pinned version where the site serves one, and index its pages with the library",
    ),
    Key("docs_max_pages", "integer", 20, "most pages kept of one library's site", minimum=1),
    Key(
        "docs_cache_dir",
        "string",
        "",
        "where the sites' pages are kept (default: the user cache, scriptorium/dependency-docs)",
    ),
    Key(
        "docs_refresh_hours",
        "number",
        24.0,
        "a site fetched (or found unreachable) more recently is not asked again",
        minimum=0,
    ),
    Key(
        "docs_timeout_seconds",
        "number",
        10.0,
        "deadline of one request to a documentation site",
        minimum=0,
        strict=True,
    ),
    Key(
        "docs_requests_per_second",
        "number",
        2.0,
        "most requests per second to one documentation site",
        minimum=0,
        strict=True,
    ),
    Key("snapshot", "bool", False, "index once; never watch the manifests"),
    Key("order", "number", None, "place in the provider chain (lower answers first)"),
)


def split_label(path: str) -> tuple[str, str] | None:
    """``httpx@0.28.1:httpx/_client.py`` -> (``httpx``, ``0.28.1``); None for other paths."""
    return split_library_label(path)


class DependenciesSource(LocalTreeSource, LibrarySource):
    """The project's installed dependencies, each library's files under ``name@version:``."""

    kind = "dependencies"
    corpus = Corpus.CODE
    settings = KEYS
    respect_gitignore = False

    def __init__(self, config: SourceConfig, context: SourceContext) -> None:
        super().__init__(config, context)
        options = config.options
        self.transitive = bool(options.get("transitive", False))
        self.ecosystems = tuple(options.get("ecosystems") or ECOSYSTEMS)
        self.where = Where(
            venv=str(options.get("venv", "")),
            node_modules=str(options.get("node_modules", "")),
            gomodcache=str(options.get("gomodcache", "")),
            cargo_home=str(options.get("cargo_home", "")),
        )
        self.max_files = int(options.get("max_files_per_library", DEFAULT_MAX_FILES))
        self.max_file_bytes = int(options.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES))
        self.dependencies: list[Dependency] = []
        self._files: dict[str, InstalledFile] = {}
        docs = DocsOptions.from_options(options)
        self.docs = DocsAttacher(config.name, docs, context) if docs.enabled else None
        self._docs_pages: dict[str, tuple[Attached, str]] = {}
        self._docs_fetched = 0  # the attacher's count of fetches the last listing saw
        self._said = ""
        self._seen: tuple = ()
        self._discovered_at = -REDISCOVER_SECONDS

    # -- what is declared and installed ---------------------------------------------------

    def refresh(self) -> list[Dependency]:
        """Read the manifests again and find each dependency's files."""
        found = discover(
            self.root,
            transitive=self.transitive,
            ecosystems=self.ecosystems,
            where=self.where,
            max_files=self.max_files,
        )
        files: dict[str, InstalledFile] = {}
        for dep in found:
            for item in dep.files:
                files[f"{dep.label}:{item.path}"] = item
        self._docs_pages = self._attach_docs(found, files) if self.docs else {}
        self.dependencies, self._files = found, files
        self._say(found)
        return found

    def _attach_docs(
        self, found: list[Dependency], files: dict[str, InstalledFile]
    ) -> dict[str, tuple[Attached, str]]:
        """Each installed library's documentation site, its pages listed under
        ``name@version:docs@<version>/`` beside its files."""
        assert self.docs is not None
        pages: dict[str, tuple[Attached, str]] = {}
        for dep in found:
            if not dep.installed or not dep.documentation_urls:
                continue
            pinned = dep.version or dep.installed_version
            attached = self.docs.attach(dep.name, pinned, dep.documentation_urls)
            if attached is None or attached.folder is None:
                continue
            for relpath in attached.pages:
                inner = f"{attached.segment}/{relpath}"
                files[f"{dep.label}:{inner}"] = InstalledFile(inner, attached.folder / relpath)
                pages[f"{dep.label}:{inner}"] = (attached, relpath)
        self.docs.say()
        return pages

    def _say(self, found: list[Dependency]) -> None:
        """Log what was found when it differs from the last listing's (the start-up line)."""
        line = self.detail_of(found)
        if line != self._said:
            self._said = line
            log.info("%s: %s; %s", self.name, line, self.turn_off)

    @staticmethod
    def detail_of(found: list[Dependency]) -> str:
        installed = [d for d in found if d.installed]
        missing = [d for d in found if not d.installed]
        line = f"{len(installed)} libraries indexed of {len(found)} declared"
        if missing:
            names = ", ".join(f"{d.name}@{d.version}" if d.version else d.name for d in missing)
            if len(names) > 300:
                names = names[:297].rsplit(",", 1)[0] + ", ..."
            line += f"; not installed (nothing is downloaded): {names}"
        mismatched = [d for d in installed if d.version and d.version != d.installed_version]
        if mismatched:
            line += "; installed at another version than the lock file's: " + ", ".join(
                f"{d.name} (locked {d.version}, installed {d.installed_version})"
                for d in mismatched
            )
        return line

    def detail(self) -> str:
        if not self.dependencies and not self._said:
            return ""
        docs = f"; {self.docs.say()}" if self.docs else ""
        return f"{self.detail_of(self.dependencies)}{docs}; {self.turn_off}"

    @property
    def turn_off(self) -> str:
        """How to turn this source off: a bare path's (index 0) or a configured one's."""
        return TURN_OFF_CONFIGURED if self.config.index else TURN_OFF

    def libraries(self) -> list[LibraryReport]:
        return [
            LibraryReport(
                name=d.name,
                version=d.version,
                installed_version=d.installed_version,
                ecosystem=d.ecosystem,
                direct=d.direct,
                installed=d.installed,
                files=len(d.files),
                location=str(d.location or ""),
                documentation_urls=list(d.documentation_urls),
                **self._docs_fields(d.name),
            )
            for d in self.dependencies
        ]

    def _docs_fields(self, library: str) -> dict[str, object]:
        """What ListSources says of a library's attached documentation site."""
        attached = self.docs.attached.get(library) if self.docs else None
        if attached is None:
            return {}
        return {
            "docs_url": attached.url if attached.pages else "",
            "docs_kind": attached.kind,
            "docs_version": attached.version,
            "docs_pages": len(attached.pages),
            "docs_detail": attached.detail,
        }

    def docs_version_of(self, path: str) -> str:
        """``lantern@1.2.3:docs@1.2/quickstart.md`` -> ``1.2``; "" for the library's files."""
        inner = path.partition(":")[2]
        if not inner.startswith(DOCS_PREFIX):
            return ""
        return inner[len(DOCS_PREFIX) :].partition("/")[0]

    def library_of(self, path: str) -> tuple[str, str] | None:
        return split_label(path)

    def library_paths(self, library: str) -> list[str]:
        """The paths of every file of the libraries named ``library`` (any version)."""
        if not self._files:
            self.refresh()
        key = library_key(library)
        out = []
        for path in self._files:
            found = split_label(path)
            if found is not None and library_key(found[0]) == key:
                out.append(path)
        return out

    def library_names(self) -> list[str]:
        return sorted({d.name for d in self.dependencies if d.installed})

    # -- the tree the indexer sees ----------------------------------------------------------

    def _manifests_seen(self) -> tuple:
        """What the root's manifests and the install folders look like now: a listing reads
        the dependencies again only when this changed, or ``REDISCOVER_SECONDS`` passed."""
        seen = []
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except OSError:
            entries = []
        for entry in entries:
            if is_manifest(entry.name):
                with contextlib.suppress(OSError):
                    stat = entry.stat()
                    seen.append((entry.name, stat.st_size, stat.st_mtime_ns))
        for folder in sorted({str(d.location) for d in self.dependencies if d.location}):
            with contextlib.suppress(OSError):
                seen.append((folder, 0, os.stat(folder).st_mtime_ns))
        return tuple(seen)

    def list_files(self) -> list[FileStat]:
        """Every installed file of every dependency; the manifests are read again when they
        (or the folders the libraries are installed in) changed, the files stated each time."""
        seen = self._manifests_seen()
        now = time.monotonic()
        fetched = self.docs.fetched if self.docs else 0
        if (
            seen != self._seen
            or now - self._discovered_at >= REDISCOVER_SECONDS
            or fetched != self._docs_fetched
        ):
            self._docs_fetched = fetched
            self.refresh()
            self._seen, self._discovered_at = self._manifests_seen(), now
        stats: list[FileStat] = []
        for path, item in self._files.items():
            try:
                stat = os.stat(item.absolute)
            except OSError:
                continue
            if stat.st_size <= self.max_file_bytes:
                stats.append(FileStat(path, stat.st_size, stat.st_mtime_ns))
        stats.sort(key=lambda f: f.path)
        self.listed_dirs = frozenset({str(self.root)})
        return stats

    def stat_paths(self, relpaths) -> list[FileStat] | None:
        """A manifest or lock file changed: list again; anything else in the root: nothing."""
        if any(is_manifest(p) for p in relpaths if "/" not in p):
            return None
        return []

    def skipped_counts(self) -> dict[str, int]:
        return {}

    def resolve_path(self, relpath: str) -> Path:
        item = self._item(relpath)
        if item is None:
            raise FileNotFoundError(relpath)
        return item.absolute

    def _item(self, relpath: str) -> InstalledFile | None:
        item = self._files.get(relpath)
        if item is None and not self._files:
            self.refresh()  # a build helper process: it has not listed yet
            item = self._files.get(relpath)
        return item

    def read_text(self, relpath: str) -> str | None:
        item = self._item(relpath)
        if item is None:
            return None
        if item.synthesised:
            return readme_text(item.absolute)
        data = _read_bounded(item.absolute, self.max_file_bytes)
        if data is None or b"\x00" in data[:8192]:
            return None
        return data.decode("utf-8", "replace")

    def document_from_text(self, relpath: str, text: str) -> SourceDocument | None:
        corpus = Corpus.DOCS if relpath.lower().endswith(DOC_SUFFIXES) else Corpus.CODE
        extractor = self.context.extractors.for_path(relpath, corpus)
        if extractor is None:
            return None
        extraction = extractor.extract(relpath, text)
        if extraction.text is not None:
            text = extraction.text
        return SourceDocument(
            source=self.name,
            path=relpath,
            text=text,
            corpus=corpus,
            content_hash=content_hash(text),
            meta=dataclasses.replace(extraction.meta),
            blocks=extraction.blocks,
            language=extraction.language,
            front_matter_lines=extraction.front_matter_lines,
            preview_from_body=extraction.preview_from_body,
        )

    def url_for(self, path: str, anchor: str = "") -> str:
        """The installed file's own ``file://`` URL (``METADATA`` for a wheel's README); the
        published page for a page of an attached documentation site."""
        page = self._docs_pages.get(path)
        if page is not None and page[0].reader is not None:
            return page[0].url_for(page[1], anchor)
        item = self._item(path)
        if item is None:
            return ""
        return item.absolute.as_uri() + (f"#{anchor}" if anchor else "")

    def page_location(self, path: str) -> str:
        """``httpx@0.28.1:httpx/_client.py``: the library, its version, the file inside it."""
        return path


def _read_bounded(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes; None when it is missing, not a file, or larger than ``limit``."""
    try:
        with open(path, "rb") as handle:
            if not os.path.isfile(path):
                return None
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None
