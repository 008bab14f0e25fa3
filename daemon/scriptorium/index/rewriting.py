"""The ``Indexer``'s rewrite from the roots: the same tree ranks the same however it was reached.

Blocks an update deletes stay in tantivy's segments and keep counting in BM25's statistics
until a merge; when they would move them (``index/compaction.py`` says when), the served index
is written again from the roots, so an index reached through updates ranks as a fresh build.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from scriptorium.index.catalog import Snapshot
from scriptorium.index.compaction import deleted_blocks, should_rewrite
from scriptorium.index.generation import GenerationStore, GenerationWriteError
from scriptorium.index.progress import BuildSummary
from scriptorium.sources.base import LocalTreeSource, Source

# The indexer's logger: these lines are the build's.
log = logging.getLogger("scriptorium.index.builder")


class Rewriting:
    """Mixed into the ``Indexer``: it provides ``store``, ``settings``, ``sources``, ``states``,
    ``_snapshot`` and ``_reconcile``."""

    store: GenerationStore
    settings: Any
    sources: list[Source]
    states: dict[str, Any]
    _snapshot: Snapshot | None
    _reconcile: Callable[..., BuildSummary | None]

    def _rewrite_if_deleted(
        self, summary: BuildSummary | None, *, every_root: bool
    ) -> BuildSummary | None:
        """Write the served index again from nothing when the blocks deleted from it would
        move BM25's statistics away from a fresh build's (``index/compaction.py``); the
        summary is the reconcile's, with the generation that now serves."""
        snapshot = self._snapshot
        if snapshot is None or not self._rewritable(snapshot):
            return summary
        held = deleted_blocks(self.store.generation_dir(snapshot.generation) / "index")
        if not should_rewrite(
            held, every_root=every_root, bound=self.settings.rewrite_deleted_share
        ):
            return summary
        started = time.perf_counter()
        states = {name: (s.state, s.last_error) for name, s in self.states.items()}
        try:
            rewritten = self._reconcile(None, False, True)
        except GenerationWriteError as exc:
            # The update itself landed and serves: only its statistics wait for a rewrite.
            for name, (state, error) in states.items():
                self.states[name].state, self.states[name].last_error = state, error
            log.warning(
                "index generation %d serves with %d deleted blocks counted in the ranking's "
                "statistics: writing it again from the roots failed: %s",
                snapshot.generation,
                held.deleted,
                exc,
            )
            return summary
        if rewritten is None:
            return summary
        log.info(
            "index generation %d: written again from the roots in %.2fs, so the %d blocks "
            "deleted from generation %d no longer count in the ranking's statistics",
            rewritten.generation,
            time.perf_counter() - started,
            held.deleted,
            snapshot.generation,
        )
        if summary is None:
            return rewritten
        return dataclasses.replace(
            summary,
            generation=rewritten.generation,
            documents=rewritten.documents,
            blocks=rewritten.blocks,
            bytes=rewritten.bytes,
            seconds=summary.seconds + rewritten.seconds,
            files=rewritten.files,
        )

    def _rewritable(self, snapshot: Snapshot) -> bool:
        """Whether a write from the roots gives back every document ``snapshot`` serves: not
        when a source it holds is served as it was (a snapshot source, a remote one, a root
        that is gone or could not be listed), which such a write would drop or read again."""
        for source in self.sources:
            entry = snapshot.manifest.sources.get(source.name)
            if entry is None or not len(entry):
                continue
            if (
                not isinstance(source, LocalTreeSource)
                or source.config.options.get("snapshot")
                or self.states[source.name].state != "ready"
                or not source.root.is_dir()
            ):
                return False
        return True
