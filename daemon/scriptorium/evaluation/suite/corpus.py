"""One materialised corpus as the daemon and the baselines see it.

The daemon gets a generated TOML naming the same sources the harness instantiates here through
the plugin registry; the harness uses those sources to read the documents for the baselines and
to map the daemon's locations back to repository files.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from scriptorium.domain.model import SourceDocument
from scriptorium.evaluation.suite.materialise import Materialised
from scriptorium.evaluation.suite.sets import CorpusSpec, SourceSpec
from scriptorium.plugins import Registry
from scriptorium.sources.base import Source, SourceConfig, SourceContext


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def source_root(tree: Path, spec: SourceSpec) -> Path:
    return tree / spec.subdir if spec.subdir else tree


def config_toml(tree: Path, sources: tuple[SourceSpec, ...], ranking: str = "") -> str:
    """The daemon config for a corpus: no watching, every source default (unqualified), and
    ``ranking`` (a ``[ranking]`` table or "") after the sources."""
    lines = ["[server]", "watch = false", ""]
    for spec in sources:
        lines += [
            "[[sources]]",
            f"name = {_toml_string(spec.name)}",
            f"kind = {_toml_string(spec.kind)}",
            f"root = {_toml_string(str(source_root(tree, spec)))}",
            "default = true",
        ]
        if spec.include:
            lines.append(f"include = [{', '.join(_toml_string(p) for p in spec.include)}]")
        lines.append("")
    return "\n".join(lines) + ranking


def write_config(corpus: Materialised, spec: CorpusSpec, ranking: str = "") -> Path:
    """Write the corpus's daemon config beside its state dir and return its path (one file
    per ``ranking`` table, so runs with different levers never read each other's)."""
    name = f"daemon-{hashlib.sha256(ranking.encode()).hexdigest()[:12]}.toml" if ranking else ""
    path = corpus.state_dir.parent / (name or "daemon.toml")
    path.write_text(config_toml(corpus.tree, spec.sources, ranking), encoding="utf-8")
    return path


@dataclass
class CorpusView:
    """The sources of one corpus, their documents, and location → file maps."""

    spec: CorpusSpec
    tree: Path
    sources: dict[str, Source]
    documents: list[tuple[Source, SourceDocument]] = field(default_factory=list)
    # (source name, page location) → repository-relative file path
    pages: dict[tuple[str, str], str] = field(default_factory=dict)

    def repo_path(self, source: str, path: str) -> str:
        """The repository-relative path of a source-relative ``path``."""
        subdir = next(s.subdir for s in self.spec.sources if s.name == source)
        return f"{subdir.rstrip('/')}/{path}" if subdir else path

    def file_of_location(self, source: str, location: str) -> str | None:
        """The repository file a daemon location points into (fragment and qualifier dropped)."""
        page = location.split("#", 1)[0]
        found = self.pages.get((source, page))
        if found is None and page.startswith(f"{source}/"):
            found = self.pages.get((source, page[len(source) + 1 :]))
        return found


def open_view(registry: Registry, spec: CorpusSpec, tree: Path) -> CorpusView:
    """Instantiate the corpus's sources as the daemon would and list their files."""
    context = SourceContext(extractors=registry.extractor_chain)
    sources: dict[str, Source] = {}
    for s in spec.sources:
        options: dict[str, object] = {"include": list(s.include)} if s.include else {}
        config = SourceConfig(
            name=s.name, kind=s.kind, root=source_root(tree, s), default=True, options=options
        )
        sources[s.name] = registry.source_factory(s.kind)(config, context)
    view = CorpusView(spec=spec, tree=tree, sources=sources)
    for name, source in sources.items():
        for stat in source.list_files():  # type: ignore[attr-defined]
            view.pages[(name, source.page_location(stat.path))] = view.repo_path(name, stat.path)
    return view


def load_documents(view: CorpusView) -> list[tuple[Source, SourceDocument]]:
    """Read and cut every listed document with the daemon's extractors (for the baselines)."""
    if not view.documents:
        for source in view.sources.values():
            for stat in source.list_files():  # type: ignore[attr-defined]
                doc = source.load(stat.path)  # type: ignore[attr-defined]
                if doc is not None:
                    view.documents.append((source, doc))
    return view.documents
