"""The indexer's side of keeping a full reconcile's progress (``index/resume.py``): what a
stopped write keeps, and the kept partial generation a later reconcile continues from."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from scriptorium.index import resume
from scriptorium.index.catalog import Snapshot, next_tables, written
from scriptorium.index.failures import CorruptGenerationError
from scriptorium.index.generation import Finish, Manifest, SourceEntry, Step
from scriptorium.index.pack import encode_pack
from scriptorium.index.resume import Kept, KeptRecord
from scriptorium.index.store import CorruptBlobError
from scriptorium.index.texts import StoredDocument

if TYPE_CHECKING:
    from scriptorium.index.generation import GenerationStore
    from scriptorium.index.texts import TextCache

log = logging.getLogger(__name__)


class Resuming:
    """Mixed into the ``Indexer``: it provides ``store``, ``cache``, ``_snapshot``,
    ``index_fingerprint``, ``_compatible`` and ``_build_stopped``."""

    store: GenerationStore
    cache: TextCache
    _snapshot: Snapshot | None
    index_fingerprint: str
    _compatible: Callable[[Manifest], bool]
    _build_stopped: Callable[[], bool]

    def _resumable(self, fingerprints: dict[str, str]) -> tuple[Snapshot, KeptRecord] | None:
        """The kept partial generation this reconcile continues from, opened (never served),
        or None; one that does not verify or fit is discarded with a log line."""
        served = self._snapshot.manifest if self._snapshot is not None else None
        found = resume.find(self.store, served, self._compatible, fingerprints, self._build_stopped)
        if found is None:
            return None
        try:
            snapshot = Snapshot.load(self.store, found.manifest, None, cache=self.cache)
        except (CorruptGenerationError, CorruptBlobError, ValueError, OSError) as exc:
            self.store.forget(found.generation)
            resume.drop(self.store.generation_dir(found.generation), str(exc))
            return None
        record = found.record
        log.info(
            "continuing from the progress an interrupted build kept (partial generation %d, "
            "%d of %d files it had to read)",
            found.generation,
            record.files_done,
            record.files_total,
        )
        return snapshot, record

    def _keeper(
        self,
        base: Manifest | None,
        current: Snapshot | None,
        tables: dict[str, SourceEntry],
        progress: list[int],
    ) -> Callable[[list[Step]], Kept | None]:
        """What a stopped write of this reconcile keeps of the ``applied`` steps.

        ``progress`` is [files done before this run, files this run has to read], the second
        filled in once the listing is known.
        """

        def keep(applied: list[Step]) -> Kept | None:
            kept = resume.kept_tables(base, tables, applied)
            if kept is None:
                return None
            fingerprint = self.index_fingerprint
            added = [
                doc
                if isinstance(doc, StoredDocument)
                else written(doc, fingerprint, self.cache, prime=False)
                for doc in applied
                if not isinstance(doc, tuple)
            ]
            removed = [step for step in applied if isinstance(step, tuple)]
            docs, blocks = next_tables(
                kept,
                current.docs if current else None,
                current.blocks if current else None,
                added,
                removed,
            )
            served = self._snapshot.manifest if self._snapshot is not None else None
            record = KeptRecord(
                base_generation=served.generation if served is not None else 0,
                base_checksum=served.checksum if served is not None else "",
                files_done=progress[0] + len(added),
                files_total=progress[0] + progress[1],
            )
            finish = Finish(
                kept,
                pack=lambda: encode_pack(list(docs), map(docs.raw_at, range(len(docs)))),
                block_table=blocks.encode,
            )
            return Kept(finish, record)

        return keep
