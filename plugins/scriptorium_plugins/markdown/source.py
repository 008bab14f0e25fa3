"""Local Markdown trees: the documentation corpus read straight from disk."""

from __future__ import annotations

from dataclasses import replace

from scriptorium.plugin import Corpus, LocalTreeSource
from scriptorium_plugins.markdown.extractor import MARKDOWN_SUFFIXES

# reStructuredText pages live in the same trees; the ``rst`` plugin's extractor cuts them (a
# tree without that plugin lists them and indexes nothing of them).
PAGE_SUFFIXES = (*MARKDOWN_SUFFIXES, ".rst")
INCLUDE = ("*.md", "*.markdown", "*.mdx", "*.rst")


class MarkdownSource(LocalTreeSource):
    """A directory of Markdown (and reST) files whose page locations follow MkDocs' URL shape."""

    kind = "markdown"
    corpus = Corpus.DOCS
    include = INCLUDE
    # The shared keys, with the default of ``include`` spelled out for the settings reference.
    settings = tuple(
        replace(key, default=list(INCLUDE)) if key.name == "include" else key
        for key in LocalTreeSource.settings
    )
    respect_gitignore = True

    def page_location(self, path: str) -> str:
        """``guide/install.md`` (or ``.rst``) → ``guide/install``; ``guide/index.md`` → ``guide``.

        A root ``index`` or ``README`` keeps its name so the home page still has a location.
        """
        for suffix in PAGE_SUFFIXES:
            if path.lower().endswith(suffix):
                path = path[: -len(suffix)]
                break
        head, _, leaf = path.rpartition("/")
        if head and leaf == "index":
            return head
        return path
