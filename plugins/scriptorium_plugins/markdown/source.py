"""Local Markdown trees: the documentation corpus read straight from disk."""

from __future__ import annotations

from scriptorium.plugin import Corpus, LocalTreeSource
from scriptorium_plugins.markdown.extractor import MARKDOWN_SUFFIXES


class MarkdownSource(LocalTreeSource):
    """A directory of Markdown files whose page locations follow MkDocs' URL shape."""

    kind = "markdown"
    corpus = Corpus.DOCS
    include = ("*.md", "*.markdown", "*.mdx")
    respect_gitignore = True

    def page_location(self, path: str) -> str:
        """``guide/install.md`` → ``guide/install``; ``guide/index.md`` → ``guide``.

        A root ``index`` or ``README`` keeps its name so the home page still has a location.
        """
        for suffix in MARKDOWN_SUFFIXES:
            if path.lower().endswith(suffix):
                path = path[: -len(suffix)]
                break
        head, _, leaf = path.rpartition("/")
        if head and leaf == "index":
            return head
        return path
