"""What readers of the served index need of it, as protocols the ``Indexer`` satisfies.

Hits, content, retrieval and compose read the served generation; they type against
``ServedIndex`` rather than the concrete ``Indexer``, which also builds, writes and prunes.
The locations resolver is made by ``content/`` and handed in (``PageResolver``), so the index
keeps one per generation without importing the folder that resolves locations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from scriptorium.domain.model import SourceDocument
    from scriptorium.index.catalog import Snapshot
    from scriptorium.index.doctable import DocTable

# A page gone from a generation: its path and the paths it was moved from (content.pages).
PageEntry = tuple[str, Sequence[str]]


class ServedIndex(Protocol):
    """The served generation and the lines of its documents."""

    @property
    def snapshot(self) -> Snapshot:
        """The served generation (``Unavailable`` while the first one loads)."""
        ...

    @property
    def current(self) -> Snapshot | None:
        """The served generation, or None while the first one loads."""
        ...

    def lines_of(self, doc: SourceDocument) -> list[str]: ...


class PageResolver(Protocol):
    """A locations resolver over one generation, carried to the next by its changes."""

    def changed(
        self,
        removed: Iterable[tuple[tuple[str, str], PageEntry]],
        added: Iterable[SourceDocument],
        docs: DocTable,
    ) -> PageResolver: ...
