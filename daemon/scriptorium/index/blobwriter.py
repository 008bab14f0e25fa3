"""Writing a generation's blobs in background threads while the build indexes.

Compressing a blob releases the GIL and so does writing it, so a build overlaps both with
tokenizing. A write of many new blobs puts them in one bundle (``index/bundles.py``); an edit's
few are loose files.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from scriptorium.domain.model import SourceDocument
from scriptorium.index.bundles import BundleWriter
from scriptorium.index.store import BlobStore, encode_document

# Blob-writing threads. When every blob was a file, a second thread encoded while the first
# waited on the file system (a 10x Markdown write phase 4.6-5.1 -> 3.4-3.7 s). In bundles,
# one thread keeps up, and a second only took the GIL from the building thread: each call
# into tantivy lets the GIL go, and the building thread waited 2.4-2.9 s inside
# ``add_document`` for 0.4-0.5 s of its own work (1.4-1.8 s with one thread). One thread:
# 10x, 8 interleaved builds, mean 9.03 -> 8.52 s, none slower; 1x the same.
WRITER_THREADS = 1
# Blobs waiting at most (the caller waits for the oldest beyond that): a writer that falls
# behind holds documents and leaves its encoding to compete with the caller for the
# interpreter at the end of the write. Bounded, a 10x Markdown build left 10-20 % fewer
# core-seconds idle (four interleaved pairs, together with four chunks queued per helper).
WRITER_QUEUE = 32
# Blobs handed to the thread at a time: a task each cost the building thread 20 us of
# futures and locks, a tenth of what a 500-byte page costs it in all (tldr-pages' 38,430).
PUT_BATCH = 8


# A write of at least this many new blobs puts them in one bundle; fewer (an edit) are written
# as loose files, so the small updates of a watching daemon never make a bundle each.
BUNDLE_FROM = 16


class BlobWriter:
    """Writes blobs in background threads while the caller indexes.

    Compressing releases the GIL, so a build overlaps it with tokenizing. The first
    ``BUNDLE_FROM`` new blobs are held; from the next on, all go to one bundle, and a write
    that ends with fewer writes them as loose files. Leaving the ``with`` block waits for
    every write, makes the bundle findable, and raises the first failure.
    """

    def __init__(self, blobs: BlobStore, bundle_from: int = BUNDLE_FROM) -> None:
        self._blobs = blobs
        blobs.refresh()  # another process may have written or pruned bundles since
        self._bundle_from = bundle_from
        self._pool = ThreadPoolExecutor(
            max_workers=WRITER_THREADS, thread_name_prefix="scriptorium-blobs"
        )
        self._pending: list[Future] = []
        self._batch: list[tuple[str, SourceDocument, bytes | None]] = []
        self._taken: set[str] = set()  # two documents of one build can share a blob
        self._lock = threading.Lock()
        self._held: list[tuple[str, bytes]] = []
        self._bundle: BundleWriter | None = None
        # Blobs this writer created (not those already there), loose or bundled.
        self.created: list[str] = []

    def put(self, name: str, doc: SourceDocument, encoded: bytes | None = None) -> None:
        """Write ``doc``'s blob as ``name``; ``encoded`` is its ``encode_document`` when a
        build helper made it already."""
        if name in self._taken:
            return
        self._taken.add(name)
        self._batch.append((name, doc, encoded))
        if len(self._batch) >= PUT_BATCH:
            self._submit()

    def _submit(self, bounded: bool = True) -> None:
        batch, self._batch = self._batch, []
        # At most a few blobs wait: a writer that fell behind would hold the documents and
        # compete with the caller for the interpreter at the end of the write instead.
        queued = max(1, WRITER_QUEUE // PUT_BATCH)
        if bounded and len(self._pending) >= queued:
            self._pending[-queued].result()
        self._pending.append(self._pool.submit(self._write, batch))

    def _write(self, batch: list[tuple[str, SourceDocument, bytes | None]]) -> None:
        # Checked here rather than by the caller: a lookup is cheap in this thread.
        encoded = [
            (name, data if data is not None else encode_document(doc))
            for name, doc, data in batch
            if not self._blobs.exists(name)
        ]
        with self._lock:
            if self._bundle is None:
                self._held.extend(encoded)
                if len(self._held) < self._bundle_from:
                    return
                self._bundle = self._blobs.new_bundle()
                encoded, self._held = self._held, []
            for name, data in encoded:
                self._bundle.append(name, data)
                self.created.append(name)

    def __enter__(self) -> BlobWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        # On failure the generation is abandoned: drop the queue, keep the original error.
        # What was written stays until ``discard()``: the caller first measures the disk.
        if exc_type is None and self._batch:
            self._submit(bounded=False)  # the last few; waited for below
        self._pool.shutdown(wait=True, cancel_futures=exc_type is not None)
        try:
            if exc_type is None:
                for future in self._pending:
                    future.result()
                for name, data in self._held:
                    if self._blobs.put(name, data):
                        self.created.append(name)
                if self._bundle is not None:
                    self._bundle.finish()
                    self._blobs.refresh()  # its table is read before the next lookup
        finally:
            if self._bundle is not None:
                self._bundle.close()

    def discard(self) -> None:
        """Remove every blob this writer created: an abandoned generation's."""
        loose = self.created
        if self._bundle is not None:
            bundled = {key.hex() for key, _, _ in self._bundle.entries}
            loose = [name for name in loose if name not in bundled]
            self._bundle.remove()
            self._blobs.refresh()
        self._blobs.remove(loose)
