"""Keeping a full reconcile's progress across a shutdown, and resuming from it.

A daemon restarted often (an MCP bridge per agent session over a large tree) would otherwise
never finish its start-up catch-up: every shutdown threw away the files it had read. When a
build that lists every root (the start-up catch-up, a first build, ``index build``) is
stopped, what it had applied is kept instead: its index segments are committed, its blobs
written, and its file table says which files are at their new version and which are still as
the served generation has them. The result is a generation like any other (a checksummed
manifest, a document pack, a block table), stored as ``generations/.resume-NNNNNN``: that
name is never served, so the served generation stays the one the build began from.

The next build that lists every root verifies it whole (every checksum) and builds on it only
when it continues the generation served now (number and manifest checksum), was written by the
same index format and configuration, and for the same source settings; then only the files
left are read. Anything else is discarded with a log line. At most one is kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from scriptorium.cancel import BuildCancelled
from scriptorium.index.failures import CorruptGenerationError
from scriptorium.index.manifest import FileEntry, Manifest, SourceEntry

log = logging.getLogger(__name__)

KEPT_PREFIX = ".resume-"
RECORD = "RESUME.json"


@dataclass(frozen=True, slots=True)
class KeptRecord:
    """What a kept partial generation continues, and how far it got."""

    # The generation served when the build began (0: none) and its manifest's checksum.
    base_generation: int
    base_checksum: str
    # Files read and indexed so far (over every interrupted run), of those the build had to.
    files_done: int
    files_total: int


@dataclass(frozen=True, slots=True)
class Kept:
    """What a stopped write keeps: its tables (a ``generation.Finish``) and its record."""

    finish: Any
    record: KeptRecord


class ProgressKept(BuildCancelled):
    """A build was stopped and its progress kept as a partial generation."""

    def __init__(self, generation: int, record: KeptRecord) -> None:
        super().__init__(f"progress kept as partial generation {generation}")
        self.generation = generation
        self.record = record


@dataclass(frozen=True, slots=True)
class Resumable:
    """A kept partial generation that verified and fits: a build may continue from it."""

    generation: int
    manifest: Manifest
    record: KeptRecord


def kept_name(generation: int) -> str:
    return f"{KEPT_PREFIX}{generation:06d}"


def write_record(directory: Path, record: KeptRecord) -> None:
    """Write the record beside the partial generation's manifest, checksummed."""
    body = asdict(record)
    text = json.dumps(body, sort_keys=True)
    payload = {"record": body, "sha256": hashlib.sha256(text.encode()).hexdigest()}
    (directory / RECORD).write_text(json.dumps(payload), encoding="utf-8")


def read_record(directory: Path) -> KeptRecord:
    """The record of a partial generation; ``ValueError`` when missing or damaged."""
    try:
        payload = json.loads((directory / RECORD).read_text(encoding="utf-8"))
        body = payload["record"]
        text = json.dumps(body, sort_keys=True)
        if hashlib.sha256(text.encode()).hexdigest() != payload["sha256"]:
            raise ValueError("its record's checksum does not match")
        return KeptRecord(**body)
    except (OSError, KeyError, TypeError) as exc:
        raise ValueError(f"its record is unreadable ({exc})") from None


def kept_tables(
    base: Manifest | None, tables: dict[str, SourceEntry], applied: Iterable[Any]
) -> dict[str, SourceEntry] | None:
    """The file tables of what a stopped write applied: the base's tables with the applied
    removals and documents (``tables`` holds each applied document's new entry). None when
    they would not describe the index: a source whose settings changed, and some of whose
    old files were not removed yet."""
    gone: dict[str, set[str]] = {}
    came: dict[str, dict[str, FileEntry]] = {}
    for step in applied:
        if isinstance(step, tuple):
            name, path = step
            gone.setdefault(name, set()).add(path)
        else:
            came.setdefault(step.source, {})[step.path] = tables[step.source].files[step.path]
    old_sources = base.sources if base is not None else {}
    kept: dict[str, SourceEntry] = {}
    for name in dict.fromkeys([*tables, *old_sources]):
        old, new = old_sources.get(name), tables.get(name)
        files = {p: e for p, e in old.files.items() if p not in gone.get(name, ())} if old else {}
        if old is not None and new is not None and old.fingerprint != new.fingerprint and files:
            return None
        files.update(came.get(name, {}))
        like = new if new is not None else old
        if new is None and not files:
            continue  # a source no longer configured, all of it removed
        ordered = dict(sorted(files.items()))
        kept[name] = SourceEntry(like.kind, like.root, like.fingerprint, ordered)
    return kept


def kept_dirs(generations_dir: Path) -> list[tuple[int, Path]]:
    """The kept partial generations, newest first."""
    if not generations_dir.is_dir():
        return []
    found = []
    for entry in generations_dir.iterdir():
        if entry.name.startswith(KEPT_PREFIX) and entry.is_dir():
            try:
                found.append((int(entry.name[len(KEPT_PREFIX) :]), entry))
            except ValueError:
                continue
    return sorted(found, reverse=True)


def drop(path: Path, why: str) -> None:
    """Discard a kept partial generation, saying why."""
    log.warning("discarding the progress an interrupted build kept (%s): %s", path.name, why)
    shutil.rmtree(path, ignore_errors=True)


class KeptStore(Protocol):
    """What finding a kept partial needs of the ``GenerationStore`` (which writes them)."""

    generations_dir: Path

    def complete_generations(self) -> list[int]: ...

    def locate(self, generation: int, path: Path) -> None: ...

    def forget(self, generation: int) -> None: ...

    def load_manifest(self, generation: int, *, verify: bool = True) -> Manifest: ...

    def verify_rest(
        self, manifest: Manifest, stop: Callable[[], bool] | None = None
    ) -> tuple[str, str] | None: ...


def find(
    store: KeptStore,
    served: Manifest | None,
    compatible,
    fingerprints: dict[str, str],
    stop: Callable[[], bool] | None = None,
) -> Resumable | None:
    """The kept partial generation a build listing every root may continue from, verified
    whole; any other is discarded with a log line. ``compatible(manifest)`` says whether this
    process's index format and configuration wrote it; ``fingerprints`` are the configured
    sources' (``builder.source_fingerprint``). A ``stop()`` during the verification leaves
    it in place for the next start."""
    found = kept_dirs(store.generations_dir)
    for _, older in found[1:]:
        drop(older, "a newer one was kept")
    if not found:
        return None
    generation, path = found[0]
    try:
        record = read_record(path)
        why = _misfit(record, served)
        if why is None and generation in store.complete_generations():
            why = f"generation {generation} is a served one's number"
        if why is None:
            store.locate(generation, path)
            manifest = store.load_manifest(generation)
            failed = store.verify_rest(manifest, stop)
            if stop is not None and stop():
                store.forget(generation)
                return None
            if failed is not None:
                why = f"{failed[0]}: {failed[1]}"
            elif not compatible(manifest):
                why = "another index format or configuration wrote it"
            else:
                why = _other_sources(manifest, fingerprints)
    except (ValueError, OSError, CorruptGenerationError) as exc:
        why = str(exc)
    if why is not None:
        store.forget(generation)
        drop(path, why)
        return None
    return Resumable(generation, manifest, record)


def _misfit(record: KeptRecord, served: Manifest | None) -> str | None:
    """Why ``record`` does not continue the generation served now; None when it does."""
    generation = served.generation if served is not None else 0
    checksum = served.checksum if served is not None else ""
    if record.base_generation != generation or record.base_checksum != checksum:
        now = f"generation {generation} serves" if generation else "no generation serves"
        return f"it continues generation {record.base_generation}, and {now}"
    return None


def _other_sources(manifest: Manifest, fingerprints: dict[str, str]) -> str | None:
    for name, entry in manifest.sources.items():
        if name in fingerprints and entry.fingerprint != fingerprints[name]:
            return f"source {name!r} was configured otherwise when it was kept"
    return None
