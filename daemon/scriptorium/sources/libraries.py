"""Sources whose documents belong to libraries (``name@version``): the seam the core reads.

A ``dependencies`` source indexes the installed files of a project's dependencies; search
restricts to one library through :meth:`LibrarySource.library_paths`, hits say which library
and version they came from through :meth:`LibrarySource.library_of`, and ListSources reports
:meth:`LibrarySource.detail` and :meth:`LibrarySource.libraries`.
"""

from __future__ import annotations

from scriptorium.domain.outcomes import LibraryReport


class LibrarySource:
    """Mixed into a source kind whose documents belong to libraries."""

    def detail(self) -> str:
        """One sentence for ListSources beyond the counts every source has."""
        return ""

    def libraries(self) -> list[LibraryReport]:
        """Every declared library, installed or not."""
        return []

    def library_of(self, path: str) -> tuple[str, str] | None:
        """The (library, version) the document at ``path`` belongs to; None for none."""
        return None

    def docs_version_of(self, path: str) -> str:
        """For a page of a library's published docs, their version (``1.2``, ``latest``)."""
        return ""

    def library_paths(self, library: str) -> list[str]:
        """The document paths of the library named ``library``, every version of it."""
        return []

    def library_names(self) -> list[str]:
        """The names of the libraries indexed (for "known libraries")."""
        return []
