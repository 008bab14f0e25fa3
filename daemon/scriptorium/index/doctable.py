"""The served documents of one generation, each made from the document pack on first use.

A cold start at 90,000 files spent seconds decoding the whole pack and making one
``StoredDocument`` per file before it served. Here the pack stays memory-mapped: opening it
reads the (source, path) keys and one offset per record, and a document is decoded from its
own record the first time a request, a table or an update asks for it. The documents made
from records are kept in a least-recently-used table of :data:`MADE_DOCUMENTS` (a search
touches a few dozen; serving a long session must not keep every document it ever touched),
the others (a first build's, an update's new ones, until the pack holding them is read)
for as long as the table serves. An update derives the next
table from the served one by positions, without decoding the documents it keeps, and the next
pack is written from the parent's record bytes for those; once written, the next table reads
from it (``read_from``), so no generation holds an older one's pack open.
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from scriptorium.domain.outcomes import Unavailable
from scriptorium.index.pack import CorruptPackError, PackRecords, encode_record, from_record
from scriptorium.index.texts import StoredDocument, TextCache

Key = tuple[str, str]

# Documents made from pack records kept at once, least recently used out first. A made
# document is its metadata and encoded block records (about 200 bytes, more when its blocks
# are decoded: see texts.DECODED_DOCUMENTS), and making one again is one record decode.
MADE_DOCUMENTS = 4_096


class DocTable(Mapping[Key, StoredDocument]):
    """(source, path) -> served document, in the generation's order, made on first use.

    Position ``i`` holds either a document made without a record (``_made[i]``) or the pack
    record ``_origin[i]`` of ``_records`` (the generation's pack, or an ancestor's an update
    kept); a document made from a record is held in ``_recent`` while it is recently used.
    """

    __slots__ = (
        "_by_key",
        "_keys",
        "_lock",
        "_made",
        "_origin",
        "_recent",
        "_records",
        "_texts",
        "on_damage",
    )

    def __init__(
        self,
        keys: list[Key],
        made: list[StoredDocument | None],
        origin: array | None,
        records: PackRecords | None,
        texts: TextCache | None,
    ) -> None:
        self._keys, self._made, self._origin = keys, made, origin
        self._records, self._texts = records, texts
        # Key -> position, made when first asked for: a search names documents by position
        # (through the block table), so serving the first searches does not wait for it.
        self._by_key: dict[Key, int] | None = None
        self._recent: OrderedDict[int, StoredDocument] = OrderedDict()
        self._lock = threading.Lock()
        # Called with the error before a record that does not decode is reported (the
        # indexer refuses the generation, as for a damaged text).
        self.on_damage: Callable[[CorruptPackError], None] | None = None

    # -- making one -------------------------------------------------------------------------

    @classmethod
    def of(cls, docs: Iterable[StoredDocument]) -> DocTable:
        """A table of documents already made (a first build)."""
        made: list[StoredDocument | None] = list(docs)
        keys = [(d.source, d.path) for d in made]  # type: ignore[union-attr]
        return cls(keys, made, None, None, None)

    @classmethod
    def opened(cls, records: PackRecords, texts: TextCache) -> DocTable:
        """The documents of a pack, none decoded yet."""
        keys = records.keys
        return cls(keys, [None] * len(keys), None, records, texts)

    # -- reading it -------------------------------------------------------------------------

    @property
    def _index(self) -> dict[Key, int]:
        index = self._by_key
        if index is None:
            with self._lock:
                index = self._by_key
                if index is None:
                    index = dict(zip(self._keys, range(len(self._keys)), strict=True))
                    self._by_key = index
        return index

    def __getitem__(self, key: Key) -> StoredDocument:
        return self.at(self._index[key])

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[Key]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def position(self, key: Key) -> int | None:
        return self._index.get(key)

    def key_at(self, at: int) -> Key:
        return self._keys[at]

    def made(self, key: Key) -> StoredDocument | None:
        """The document at ``key`` if it is made and held (None otherwise, or if absent)."""
        at = self._index.get(key)
        return None if at is None else self._held(at)

    def _held(self, at: int) -> StoredDocument | None:
        doc = self._made[at]
        return doc if doc is not None else self._recent.get(at)

    def at(self, at: int) -> StoredDocument:
        doc = self._made[at]
        if doc is not None:
            return doc
        recent = self._recent
        with self._lock:
            doc = recent.get(at)
            if doc is not None:
                recent.move_to_end(at)
                return doc
        record = self._record(at)
        made = from_record(record, self._texts)  # type: ignore[arg-type]
        with self._lock:
            doc = recent.setdefault(at, made)  # another thread's, when it was first
            if len(recent) > MADE_DOCUMENTS:
                recent.popitem(last=False)
        return doc

    def _where(self, at: int) -> int:
        return at if self._origin is None else self._origin[at]

    def _record(self, at: int) -> tuple:
        try:
            return self._records.record(self._where(at))  # type: ignore[union-attr]
        except CorruptPackError as exc:
            if self.on_damage is not None:
                self.on_damage(exc)
            source, path = self._keys[at]
            raise Unavailable(
                f"the stored record of {source}/{path} is damaged ({exc}); reloading"
            ) from None

    def bids_at(self, at: int) -> bytes:
        """The block id bytes of position ``at`` (without making its document)."""
        doc = self._held(at)
        return doc.record[11] if doc is not None else self._record(at)[11]

    def record_at(self, at: int) -> tuple:
        """The pack record of position ``at``: the made document's, else read and not kept
        (a table over every document then makes none of them)."""
        doc = self._held(at)
        return doc.record if doc is not None else self._record(at)

    def records(self) -> Iterator[tuple[Key, tuple]]:
        """Every document's key and record, in order, none of them made."""
        for at, key in enumerate(self._keys):
            yield key, self.record_at(at)

    def moved_from(self, key: Key) -> tuple[str, ...]:
        """The ``moved_from`` front matter of ``key`` (without making its document)."""
        return _moved_from(self.record_at(self._index[key]))

    def page_entries(self) -> Iterator[tuple[Key, tuple[str, tuple[str, ...]]]]:
        """Every document's key with (path, moved_from), in order, none of them made: what
        the resolver's tables need (each record is read and dropped, so they stay on disk)."""
        for key, record in self.records():
            yield key, (key[1], _moved_from(record))

    def raw_at(self, at: int) -> bytes:
        """The pack record bytes of position ``at`` (the parent's, when it was kept)."""
        where = self._where(at)
        if self._records is not None and where >= 0:
            return self._records.raw(where)
        return encode_record(self._made[at].record)  # type: ignore[union-attr]

    def read_from(self, records: PackRecords, texts: TextCache) -> bool:
        """Read the records of documents not made yet from ``records``, this table's own
        pack (just written, in this order), rather than from the ancestor's pack an update
        kept them in: so a pruned generation's pack is held by none of its successors.
        The documents made in memory are let go (made again from it when asked for).
        False (and nothing changed) when ``records`` are not this table's."""
        if records.keys != self._keys:
            return False
        with self._lock:
            # The documents made in memory are in that pack now: they are made from it
            # again when asked for, so a first build's documents do not outlive the build.
            self._records, self._origin, self._texts = records, None, texts
            self._made = [None] * len(self._keys)
        return True

    @property
    def positions(self) -> Sequence[StoredDocument]:
        """The documents by position (what the block table names them by)."""
        return _Positions(self)

    # -- the next generation's ------------------------------------------------------------

    def changed(
        self,
        added: list[StoredDocument],
        removed: list[Key],
        order: Callable[[], list[Key]],
    ) -> tuple[DocTable, array, list[bytes], list[int]]:
        """This table with one generation's change applied.

        Replaced documents keep their place; only when a path is new is the table put back
        in the manifest's ``order()``. Returns the table, each old position's new one (-1
        when gone), the block ids of the documents gone and the new positions of those that
        came.
        """
        index = self._index
        replaced: dict[int, StoredDocument] = {}
        appended: list[StoredDocument] = []
        gone: list[bytes] = []
        readded: set[Key] = set()
        for doc in added:
            key = (doc.source, doc.path)
            readded.add(key)
            at = index.get(key)
            if at is None:
                appended.append(doc)
            elif self._held(at) is not doc:
                gone.append(self.bids_at(at))
                replaced[at] = doc
        dropped = set()
        for key in removed:
            at = index.get(key)
            if key not in readded and at is not None and at not in dropped:
                dropped.add(at)
                gone.append(self.bids_at(at))
        keys: list[Key] = []
        made: list[StoredDocument | None] = []
        origin = array("q")
        remap = array("q", [-1]) * len(self._keys)
        came: list[int] = []
        for at, key in enumerate(self._keys):
            if at in dropped:
                continue
            remap[at] = len(keys)
            doc = replaced.get(at)
            if doc is not None:
                came.append(len(keys))
                made.append(doc)
                origin.append(-1)
            else:
                made.append(self._made[at])
                origin.append(self._where(at) if self._records is not None else -1)
            keys.append(key)
        for doc in appended:
            came.append(len(keys))
            keys.append((doc.source, doc.path))
            made.append(doc)
            origin.append(-1)
        table = DocTable(keys, made, origin, self._records, self._texts)
        table.on_damage = self.on_damage
        if appended:
            table, moved = table._reordered(order())
            remap = array("q", [moved[at] if at >= 0 else -1 for at in remap])
            came = [moved[at] for at in came]
        return table, remap, gone, came

    def _reordered(self, keys: list[Key]) -> tuple[DocTable, list[int]]:
        """The same documents in the order ``keys`` gives, and each position's new one."""
        index = self._index
        moved = [0] * len(self._keys)
        made: list[StoredDocument | None] = []
        origin = array("q")
        for new, key in enumerate(keys):
            at = index[key]
            moved[at] = new
            made.append(self._made[at])
            origin.append(self._origin[at] if self._origin is not None else at)
        table = DocTable(list(keys), made, origin, self._records, self._texts)
        table.on_damage = self.on_damage
        return table, moved


def _moved_from(record: tuple) -> tuple[str, ...]:
    meta = record[8]  # the meta record: None for default front matter
    return tuple(meta[5]) if meta is not None else ()


class _Positions(Sequence[StoredDocument]):
    __slots__ = ("_table",)

    def __init__(self, table: DocTable) -> None:
        self._table = table

    def __len__(self) -> int:
        return len(self._table)

    def __getitem__(self, at):  # type: ignore[override]
        if isinstance(at, slice):
            return [self._table.at(i) for i in range(*at.indices(len(self._table)))]
        return self._table.at(at)

    def bids_at(self, at: int) -> bytes:
        return self._table.bids_at(at)
