"""The served tantivy searcher behind a guard: whatever it does underneath becomes an error.

A damaged segment makes tantivy fail in two ways: a ``ValueError``/``OSError`` from a read,
or a Rust panic, which pyo3 raises as ``PanicException``, a ``BaseException`` that ordinary
``except Exception`` handlers (the servicer's, asyncio's, the HTTP server's) let through, so
the call never completes. Every call into the served searcher goes through
:class:`GuardedSearcher`, which turns either into :class:`DamagedIndex` (UNAVAILABLE with a
sentence saying so) and reports it, so the indexer rebuilds the generation (it repairs a
generation once, whatever the number of reports).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tantivy

from scriptorium import faults
from scriptorium.domain.outcomes import Unavailable

# What must never be turned into an error status: the interpreter stopping, a generator
# closing, and what asyncio and the cancellation flags use to stop work.
PASS_THROUGH: tuple[type[BaseException], ...] = (KeyboardInterrupt, SystemExit, GeneratorExit)


class DamagedIndex(Unavailable):
    """The served generation's search index failed underneath a call: it is rebuilt, and the
    caller may ask again once it has been."""

    def __init__(self, generation: int, why: str) -> None:
        super().__init__(
            f"the search index of generation {generation} is damaged ({why}); rebuilding it"
        )
        self.generation, self.why = generation, why


def describe(exc: BaseException) -> str:
    """A short, request-free account of what tantivy raised."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text[:200]}" if text else name


# Document frequencies a searcher remembers (pairs of field and term).
DOC_FREQ_MEMO = 65_536


class GuardedSearcher:
    """A ``tantivy.Searcher`` whose failures are :class:`DamagedIndex`, each reported."""

    __slots__ = ("_freqs", "_searcher", "generation", "on_damage")

    def __init__(self, searcher: tantivy.Searcher, generation: int) -> None:
        self._searcher = searcher
        self.generation = generation
        # Called with each ``DamagedIndex`` (the indexer rebuilds the generation).
        self.on_damage: Callable[[DamagedIndex], None] | None = None
        # Document frequencies already asked of this generation, which never change them:
        # abstention asks two per query term, search after search (135 a pasted issue text).
        self._freqs: dict[tuple[str, str], int] = {}

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        try:
            faults.panic("index.search")
            return getattr(self._searcher, name)(*args, **kwargs)
        except PASS_THROUGH:
            raise
        except BaseException as exc:  # pyo3's PanicException is a BaseException
            damage = DamagedIndex(self.generation, describe(exc))
            if self.on_damage is not None:
                self.on_damage(damage)
            raise damage from None

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("search", *args, **kwargs)

    def doc_freq(self, field: str, term: str) -> int:
        key = (field, term)
        found = self._freqs.get(key)
        if found is None:
            found = self._call("doc_freq", field, term)
            if len(self._freqs) >= DOC_FREQ_MEMO:
                self._freqs = {}
            self._freqs[key] = found
        return found

    def fast_field_values(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("fast_field_values", *args, **kwargs)

    def doc(self, *args: Any, **kwargs: Any) -> Any:
        return self._call("doc", *args, **kwargs)

    @property
    def num_docs(self) -> int:
        return self._call("__getattribute__", "num_docs")

    @property
    def num_segments(self) -> int:
        return self._call("__getattribute__", "num_segments")
