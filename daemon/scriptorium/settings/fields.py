"""BM25's field boosts, a value the ranking settings hold and the index's query reads."""

from __future__ import annotations

from dataclasses import dataclass

from scriptorium.domain.model import Corpus


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """BM25 field boosts; the defaults are the ones the evaluation set supports.

    ``docs_path`` is the path's boost for documentation blocks (None: ``path``). A page's
    path is its title in slug form; a code file's path names a module, and for a query that
    names a definition the folder it sits in says little.
    """

    body: float = 1.0
    heading: float = 1.0
    path: float = 0.5
    docs_path: float | None = None

    def path_for(self, corpus: str) -> float:
        """The path's boost for blocks of ``corpus`` ("docs" or "code")."""
        if corpus == Corpus.DOCS and self.docs_path is not None:
            return self.docs_path
        return self.path
