"""Vectors for every served generation, made in the background after it serves.

The lexical generation serves first; this thread then gives each of its blocks a vector: those
of blocks an earlier generation already had (a block id names a block's content) are copied,
the rest are encoded, a chunk at a time, each chunk appended to a partial file so a restart
resumes rather than starts over. Once every block has one, the generation's vector file is
written and swapped in, and older ones are pruned. A newer generation arriving meanwhile is
taken up at once, keeping what was encoded. The thread runs at a lowered priority: searches
come first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scriptorium import faults
from scriptorium.domain.model import Corpus
from scriptorium.index.guard import DamagedIndex
from scriptorium.index.native import release_free_memory
from scriptorium.ranking.paths import auxiliary_kind, translated
from scriptorium.semantic.passages import passage
from scriptorium.semantic.progress import EarlyCorpora, PassBlocks, TextVectors, chunks
from scriptorium.text.features import CJK, CJK_HEAD

if TYPE_CHECKING:
    import numpy as np

    from scriptorium.index.catalog import Snapshot
    from scriptorium.semantic import vectors as V
    from scriptorium.semantic.encoder import Encoder

log = logging.getLogger(__name__)

# The background thread's niceness (Linux applies it to the thread alone).
NICENESS = 10
# An evaluation harness that waits for the vectors sets it to 0 (``scriptorium eval --suite``).
NICENESS_ENV = "SCRIPTORIUM_VECTOR_NICENESS"
# A generation's vector file (the partial file does not match).
VECTOR_FILE = re.compile(r"^gen-(\d+)\.vec$")
PARTIAL = "partial.vec"
# A passage with this many CJK characters in its opening is not English.
CJK_LETTERS = 20


@dataclass(slots=True)
class VectorStatus:
    """What ListSources and the console say of the vectors."""

    state: str = "off"  # off, waiting, encoding, ready, failed
    detail: str = ""
    # Per source: [blocks with a vector, blocks].
    per_source: dict[str, list[int]] = field(default_factory=dict)


class VectorBuilder:
    """Keeps the served generation's vectors current; ``index`` is what Search reads."""

    def __init__(
        self,
        make_encoder: Callable[[], Encoder],
        folder: Path,
        *,
        generations: Callable[[], list[int]] = list,
        unread_sources: frozenset[str] = frozenset(),
    ) -> None:
        self._make_encoder = make_encoder
        # Sources whose blocks get no vector, as a translation's folder's pages get none.
        self._unread = unread_sources
        self.encoder: Encoder | None = None
        self._root = folder
        self.folder = folder
        self._stop = threading.Event()
        self._generations = generations
        self.status = VectorStatus(state="waiting")
        self.index: V.VectorIndex | None = None
        self._wanted: Snapshot | None = None
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()
        self._go = threading.Event()
        self._writable = True
        # What serves is a first pass's complete corpora, not yet a generation's file.
        self._early = False
        # Vectors encoded by this process and not yet in a served file: block id → row.
        self._fresh: dict[int, tuple[int, np.ndarray]] = {}

    # -- what the indexer and the engine call ---------------------------------------------

    def served(self, snapshot: Snapshot) -> None:
        """A generation now serves: make its vectors (the newest one wins)."""
        self._wanted = snapshot
        self._wake.set()
        with self._starting:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="scriptorium-vectors", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        """End the thread at its next chunk (a shutdown)."""
        self._stop.set()
        self._wake.set()
        self._go.set()

    def source_status(self, source: str) -> tuple[str, int, int, str]:
        """(state, vectors made, blocks, detail) for one source's blocks."""
        status = self.status
        done, total = status.per_source.get(source, (0, 0))
        state = status.state
        if state == "encoding" and self._early and 0 < total == done:
            state = "ready"  # a first pass serves this source's corpus already
        return state, done, total, status.detail

    # -- the thread -----------------------------------------------------------------------

    def begin(self) -> None:
        """The daemon serves: the thread may load its model and start (until then it waits,
        so loading the encoder never competes with the start-up)."""
        self._go.set()

    def _run(self) -> None:
        while not self._go.wait(1.0):
            if self._stop.is_set():
                return
        with contextlib.suppress(AttributeError, OSError, ValueError):
            niceness = int(os.environ.get(NICENESS_ENV, NICENESS))
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
        try:
            self.encoder = self._make_encoder()
        except Exception as exc:  # a missing model or runtime: lexical ranking only
            self.status = VectorStatus(state="off", detail=str(exc))
            log.warning("semantic ranking is off: %s", exc)
            return
        self.folder = self._root / re.sub(r"[^A-Za-z0-9._-]+", "-", self.encoder.name)
        self._load_newest()
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            snapshot = self._wanted
            if snapshot is None:
                continue
            try:
                # The table the retriever finds its blocks' stored features by, made here
                # rather than by the first search (14 ms at 60,000 blocks). Damage found
                # making it is reported by the searcher's guard, which has it rebuilt.
                with contextlib.suppress(DamagedIndex):
                    snapshot.block_addresses()
                self._make(snapshot)
            except _Superseded:
                self._wake.set()
            except Exception as exc:  # never takes the daemon down; said in ListSources
                log.exception("vectors for generation %d failed", snapshot.generation)
                self.status.state, self.status.detail = "failed", f"{type(exc).__name__}: {exc}"

    def _load_newest(self) -> None:
        """Serve the newest vector file on disk at once, and keep the partial file's rows."""
        from scriptorium.semantic import vectors as V

        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            self._writable = False
        assert self.encoder is not None
        self._fresh.update(V.read_partial(self.folder / PARTIAL, self.encoder.dimensions))
        for generation in sorted(self._files(), reverse=True):
            path = self.folder / f"gen-{generation}.vec"
            try:
                index = V.read(path)
            except V.CorruptVectorsError as exc:
                log.error("vector file refused, made again: %s", exc)
                self._remove(path)
                continue
            if index.matrix.shape[1:] == (self.encoder.dimensions,):
                if index.dense is None and self._writable:
                    # An earlier format: written again in this one (rows only for the blocks
                    # with a vector: what serving maps of it is smaller).
                    with contextlib.suppress(OSError, V.CorruptVectorsError):
                        V.write(path, index)
                        index = V.read(path, verify=False)
                self.index = index.with_codes()
                release_free_memory()  # making the codes' float temporaries
                return

    def _files(self) -> list[int]:
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        return [int(m.group(1)) for m in map(VECTOR_FILE.match, names) if m]

    def _make(self, snapshot: Snapshot) -> None:
        import numpy as np

        from scriptorium.semantic import vectors as V

        assert self.encoder is not None
        faults.pause("vectors.encode", self._stop.is_set)
        if self._serves_whole(snapshot):
            return
        started = time.monotonic()
        bids, corpora, places = _blocks_of(snapshot)
        kinds = corpora.copy()  # each block's corpus (``corpora`` marks those without a vector)
        total = len(bids)
        matrix = np.zeros((total, self.encoder.dimensions), dtype=np.float32)
        hashes = np.zeros(total, dtype=np.int64)
        have = np.zeros(total, dtype=bool)
        if self.index is not None and total:
            rows = self.index.rows_of(bids)
            known = rows >= 0
            matrix[known] = self.index.vectors(rows[known])
            if self.index.texts is not None:
                hashes[known] = self.index.texts[rows[known]]
            none = known.copy()
            none[known] = self.index.corpora[rows[known]] == V.NONE
            corpora[none] = V.NONE
            have |= known
        for at in np.flatnonzero(~have).tolist():
            held = self._fresh.get(int(bids[at]))
            if held is not None:
                matrix[at] = held[1]
                if held[0] == V.NONE:
                    corpora[at] = V.NONE
                have[at] = True
        # Docs before code (a repository's docs are often a tenth of its blocks, and a
        # question about using it wants them), each in document order, so each document's
        # text is read once.
        missing = sorted(
            np.flatnonzero(~have).tolist(),
            key=lambda at: (int(kinds[at]) != V.DOCS, places[at]),
        )
        # With no vectors serving yet, a corpus's serve as soon as each of its blocks has one.
        early = EarlyCorpora(kinds, missing) if self.index is None or self._early else None
        blocks = PassBlocks(bids, kinds, corpora, matrix, hashes, have)
        if early is not None:
            self._serve_complete(snapshot, early, blocks)
        sources = [snapshot.docs.key_at(at)[0] for at, _ in places]
        per_source: dict[str, list[int]] = {}
        for name in sources:
            per_source.setdefault(name, [0, 0])[1] += 1
        for name, done in zip(sources, have.tolist(), strict=True):
            per_source[name][0] += done
        self.status.state = "encoding" if missing else self.status.state
        self.status.per_source = per_source
        self.status.detail = f"generation {snapshot.generation}"
        known_texts = TextVectors(self.index, matrix)
        encoded = reused = 0
        for chunk in chunks(missing, kinds):
            if self._stop.is_set() or self._wanted is not snapshot:
                raise _Superseded
            texts = [
                None if sources[at] in self._unread else _passage(snapshot, places[at])
                for at in chunk
            ]
            rows = np.zeros((len(chunk), self.encoder.dimensions), dtype=np.float32)
            fresh = []
            for i, text in enumerate(texts):
                if text is None:
                    corpora[chunk[i]] = V.NONE
                    continue
                hashes[chunk[i]] = V.text_hash(text)
                vector = known_texts.get(int(hashes[chunk[i]]))
                if vector is None:
                    fresh.append(i)
                else:
                    rows[i] = vector
                    reused += 1
            if fresh:
                rows[fresh] = self.encoder.passages([texts[i] for i in fresh])
                encoded += len(fresh)
            matrix[chunk] = rows
            for i in fresh:
                known_texts.add(int(hashes[chunk[i]]), chunk[i])
            for at, row in zip(chunk, rows, strict=True):
                self._fresh[int(bids[at])] = (int(corpora[at]), row)
            if self._writable:
                try:
                    V.append_partial(self.folder / PARTIAL, bids[chunk], corpora[chunk], rows)
                except OSError:
                    self._writable = False
            for at in chunk:
                per_source[sources[at]][0] += 1
            if early is not None:
                have[chunk] = True
                early.done(chunk)
                self._serve_complete(snapshot, early, blocks)
        # (What serves may be a first pass's complete corpora alone: ``_early``.)
        if (
            missing
            or self.index is None
            or self._early
            or self.index.generation != snapshot.generation
        ):
            index = V.VectorIndex(
                self.encoder.name, snapshot.generation, bids, corpora, matrix, hashes
            )
            self.index = self._keep(index).with_codes()
            self._early = False
        self._fresh.clear()
        elapsed = time.monotonic() - started
        self.status = VectorStatus(
            state="ready",
            detail="" if self._writable else "state directory not writable: vectors kept in memory",
            per_source={name: [count, count] for name, (_, count) in per_source.items()},
        )
        log.info(
            "vectors for generation %d ready: %d blocks, %d encoded, %d of their passage's "
            "vector, in %.1fs",
            snapshot.generation,
            total,
            encoded,
            reused,
            elapsed,
        )
        release = getattr(self.encoder, "release", None)
        if release is not None:
            release()
        # The pass's activations were freed into glibc's arenas: give them back.
        release_free_memory()

    def _serves_whole(self, snapshot: Snapshot) -> bool:
        """Whether the vectors serving already have a row for every block of ``snapshot`` (a
        restart over its own generation's file): then it is ready, without the pass's
        arrays (a copy of every vector) or a look at any document."""
        import numpy as np

        index = self.index
        if index is None or self._early or index.generation != snapshot.generation:
            return False
        docs = snapshot.docs
        blocks: Counter[str] = Counter()
        parts = []
        for at in range(len(docs)):
            bids = np.frombuffer(docs.bids_at(at), dtype=np.int64)
            if len(bids):
                parts.append(bids)
                blocks[docs.key_at(at)[0]] += len(bids)
        every = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
        if not np.array_equal(every, index.bids):
            return False  # another tree's file under this number (seeded): the pass decides
        self._fresh.clear()
        per_source = {name: [count, count] for name, count in blocks.items()}
        self.status = VectorStatus(state="ready", per_source=per_source)
        log.info(
            "vectors for generation %d ready: %d blocks, 0 encoded (its file on disk)",
            snapshot.generation,
            len(every),
        )
        return True

    def _serve_complete(self, snapshot: Snapshot, early: EarlyCorpora, blocks: PassBlocks) -> None:
        """Serve the vectors of the corpora every block of which has one, while another is
        still encoding (held in memory: the generation's file is written when all are)."""
        import numpy as np

        from scriptorium.semantic import vectors as V

        complete = early.newly_complete()
        if not complete:
            return
        assert self.encoder is not None
        rows = blocks.have & np.isin(blocks.kinds, early.complete)
        index = V.VectorIndex(
            self.encoder.name,
            snapshot.generation,
            blocks.bids[rows],
            blocks.corpora[rows],
            blocks.matrix[rows],
            blocks.hashes[rows],
        )
        self.index = index.with_codes()
        self._early = True
        names = " and ".join("code" if c == V.CODE else "docs" for c in complete)
        log.info(
            "vectors of generation %d serve for %s (%d blocks) while the rest are encoded",
            snapshot.generation,
            names,
            len(index),
        )
        faults.pause("vectors.corpus", self._stop.is_set)

    def _keep(self, index: V.VectorIndex) -> V.VectorIndex:
        """Write ``index`` to its file and serve it mapped from there; prune older files."""
        from scriptorium.semantic import vectors as V

        if not self._writable:
            return index
        path = self.folder / f"gen-{index.generation}.vec"
        try:
            V.write(path, index)
            mapped = V.read(path, verify=False)
        except (OSError, V.CorruptVectorsError) as exc:
            log.warning("vectors kept in memory: %s", exc)
            self._writable = False
            return index
        self._remove(self.folder / PARTIAL)
        live = set(self._generations())
        for generation in self._files():
            if generation != index.generation and generation not in live:
                self._remove(self.folder / f"gen-{generation}.vec")
        return mapped

    @staticmethod
    def _remove(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()


class _Superseded(Exception):
    """A newer generation serves (or the daemon stops): the pass in hand is dropped."""


def _blocks_of(snapshot: Snapshot) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """Every block of ``snapshot`` sorted by id: ids, corpora, (document position, block)."""
    import numpy as np

    from scriptorium.semantic import vectors as V

    docs = snapshot.docs
    ids: list[np.ndarray] = []
    corpora: list[np.ndarray] = []
    places: list[tuple[int, int]] = []
    for at in range(len(docs)):
        bids = np.frombuffer(docs.bids_at(at), dtype=np.int64)
        if not len(bids):
            continue
        corpus = V.CODE if docs.at(at).corpus is Corpus.CODE else V.DOCS
        ids.append(bids)
        corpora.append(np.full(len(bids), corpus, dtype=np.uint8))
        places.extend((at, i) for i in range(len(bids)))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.uint8), []
    all_ids = np.concatenate(ids)
    order = np.argsort(all_ids, kind="stable")
    return all_ids[order], np.concatenate(corpora)[order], [places[i] for i in order.tolist()]


def _passage(snapshot: Snapshot, place: tuple[int, int]) -> str | None:
    """A block's passage, or None for one the encoder does not read: a translation or CJK
    text (the model reads English), or a file of an auxiliary kind (tests, fixtures, vendored
    or generated code, changelogs, tooling: in a library repository often half its blocks,
    and ranked below its code in any case). A text that cannot be read (damage is the indexer's to
    report) leaves its path alone."""
    doc = snapshot.docs.at(place[0])
    if auxiliary_kind(doc.path, True, doc.corpus is Corpus.DOCS) or translated(doc.path):
        return None
    try:
        text = passage(doc.path, doc.blocks[place[1]])
    except Exception:
        return doc.path
    return None if len(CJK.findall(text[:CJK_HEAD])) >= CJK_LETTERS else text
