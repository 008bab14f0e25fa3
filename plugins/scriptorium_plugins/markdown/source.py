"""Local Markdown trees: the documentation corpus read straight from disk."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from scriptorium.plugin import Corpus, Key, LocalTreeSource, SourceDocument, github_slug
from scriptorium_plugins.markdown.extractor import MARKDOWN_SUFFIXES, MarkdownExtractor
from scriptorium_plugins.markdown.mdx import vitepress_slug
from scriptorium_plugins.rst.sphinx import Project, exclude_for_source, find_projects

# reStructuredText pages and Jupyter notebooks live in the same trees; the ``rst`` and
# ``notebook`` plugins' extractors cut them (a tree without those plugins lists them and indexes
# nothing of them).
PAGE_SUFFIXES = (*MARKDOWN_SUFFIXES, ".rst")
INCLUDE = ("*.md", "*.markdown", "*.mdx", "*.rst", "*.ipynb")
ANCHOR_RULES = ("auto", "github", "vitepress")
# How far above a source's root ``auto`` looks for the ``.vitepress`` folder of a site.
_ABOVE_ROOT = 3


class MarkdownSource(LocalTreeSource):
    """A directory of Markdown (and reST) files whose page locations follow MkDocs' URL shape."""

    kind = "markdown"
    corpus = Corpus.DOCS
    include = INCLUDE
    settings = (
        *LocalTreeSource.keys_including(INCLUDE),
        Key(
            "toctree",
            "bool",
            True,
            "in a Sphinx project (a folder holding conf.py), put the titles of the pages above "
            "a reST page in its toctrees before its section paths",
        ),
        Key(
            "anchors",
            "string",
            "auto",
            "heading-id rule of Markdown pages: github, vitepress, or auto (vitepress under a "
            "folder holding .vitepress/, github elsewhere)",
            choices=ANCHOR_RULES,
        ),
    )
    respect_gitignore = True

    def __init__(self, config, context) -> None:
        self._projects: list[Project] = []
        if config.root is not None:
            self._projects = find_projects(Path(config.root).resolve())
            excluded = [p for pr in self._projects for p in exclude_for_source(pr.folder, pr.conf)]
            if excluded:
                options = dict(config.options)
                options["exclude"] = [*options.get("exclude", ()), *excluded]
                config = replace(config, options=options)
        super().__init__(config, context)
        self._anchors = str(config.options.get("anchors", "auto"))
        self._toctree = bool(config.options.get("toctree", True))
        self._vitepress_dirs: dict[Path, bool] = {}
        self._vitepress_folders: dict[str, bool] = {}
        self._scanned = False

    def _project_of(self, relpath: str) -> tuple[Project, str] | None:
        """The Sphinx project a reST page belongs to, and its docname there."""
        for project in self._projects:
            docname = project.relative(relpath)
            if docname is not None:
                return project, docname
        return None

    def _scan_projects(self) -> None:
        """Read every reST page's title and toctrees once, before the first breadcrumb."""
        self._scanned = True
        for stat in self.list_files():
            found = self._project_of(stat.path)
            if found is not None:
                text = self.read_text(stat.path)
                if text is not None:
                    found[0].read_page(found[1], text)

    def _with_breadcrumb(self, doc: SourceDocument) -> SourceDocument:
        found = self._project_of(doc.path) if self._toctree else None
        if found is None:
            return doc
        if not self._scanned:
            self._scan_projects()
        project, docname = found
        project.read_page(docname, doc.text)
        crumbs = project.breadcrumb(docname)
        if not crumbs:
            return doc
        blocks = tuple(replace(b, section_path=(*crumbs, *b.section_path)) for b in doc.blocks)
        return replace(doc, blocks=blocks)

    def _under_vitepress(self, relpath: str) -> bool:
        """Whether a folder between the file and a little above the root holds ``.vitepress``."""
        # Remembered per folder of the root: a build asks once per file, and the walk up
        # in ``Path`` objects cost more than cutting a small page.
        key = relpath.rpartition("/")[0]
        found = self._vitepress_folders.get(key)
        if found is None:
            found = self._vitepress_folders[key] = self._vitepress_above(relpath)
        return found

    def _vitepress_above(self, relpath: str) -> bool:
        folder = (self.root / relpath).parent
        stop = self.root
        for _ in range(_ABOVE_ROOT):
            if stop.parent == stop:
                break
            stop = stop.parent
        chain = []
        while True:
            chain.append(folder)
            if folder == stop or folder.parent == folder:
                break
            folder = folder.parent
        for candidate in chain:
            found = self._vitepress_dirs.get(candidate)
            if found is None:
                found = (candidate / ".vitepress").is_dir()
                self._vitepress_dirs[candidate] = found
            if found:
                return True
        return False

    def slug_rule(self, relpath: str):
        """The heading-id rule of the site that publishes ``relpath``."""
        rule = self._anchors
        if rule == "auto":
            rule = "vitepress" if self._under_vitepress(relpath) else "github"
        return vitepress_slug if rule == "vitepress" else github_slug

    def document_from_text(self, relpath: str, text: str) -> SourceDocument | None:
        doc = super().document_from_text(relpath, text)
        if doc is not None and relpath.endswith(".rst") and self._projects:
            return self._with_breadcrumb(doc)
        if doc is None or not relpath.lower().endswith(MARKDOWN_SUFFIXES):
            return doc
        slugify = self.slug_rule(relpath)
        extractor = self.context.extractors.for_path(relpath, self.corpus)
        if slugify is github_slug or not isinstance(extractor, MarkdownExtractor):
            return doc
        extraction = extractor.extract(relpath, text, slugify)
        return replace(doc, blocks=extraction.blocks)

    def page_location(self, path: str) -> str:
        """``guide/install.md`` (or ``.rst``) → ``guide/install``; ``guide/index.md`` → ``guide``.

        A root ``index`` or ``README`` keeps its name so the home page still has a location.
        Notebooks keep their suffix (``analysis/nb.ipynb``): a notebook often sits beside a
        Markdown page of the same name, its paired text form.
        """
        for suffix in PAGE_SUFFIXES:
            if path.lower().endswith(suffix):
                path = path[: -len(suffix)]
                break
        head, _, leaf = path.rpartition("/")
        if head and leaf == "index":
            return head
        return path
