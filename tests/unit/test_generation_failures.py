"""A generation write that fails or is cancelled leaves nothing behind and says why in one line.

The real full disk is exercised end to end (tests/e2e/test_build_lifecycle.py, a small tmpfs);
here the blob store is made to fail on its third blob, so the blobs written before it are
there to be cleaned up, and the flag a shutdown sets is set between two documents.
"""

from __future__ import annotations

import errno
import shutil

import pytest

from scriptorium.cancel import BuildCancelled
from scriptorium.domain.model import Block, Corpus, RefKind, SourceDocument
from scriptorium.index.failures import write_failure
from scriptorium.index.generation import GenerationStore, GenerationWriteError
from scriptorium.index.store import BlobStore
from scriptorium.sources.base import content_hash
from tests.support.generations import write_first


def make_doc(path: str, text: str) -> SourceDocument:
    block = Block(RefKind.DOC, 1, 1, path, (path,), "", text)
    return SourceDocument("docs", path, text, Corpus.DOCS, content_hash(text), blocks=(block,))


def leftovers(store: GenerationStore) -> list[str]:
    found = [p for p in store.state_dir.rglob("*") if p.is_file() and p.name != "writer.lock"]
    return sorted(str(p.relative_to(store.state_dir)) for p in found)


DOCS = [make_doc(f"p{i}.md", f"page {i} about capybaras " * 50) for i in range(5)]


def test_a_full_disk_is_one_sentence_and_leaves_no_blob_or_generation(tmp_path, monkeypatch):
    store = GenerationStore(tmp_path / "state")
    real_put = BlobStore.put
    calls = []

    def put(self, name, data):
        calls.append(name)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_put(self, name, data)

    monkeypatch.setattr(BlobStore, "put", put)
    with pytest.raises(GenerationWriteError) as info:
        write_first(store, DOCS)
    message = str(info.value)
    # This disk has room for far more than the text: the text is not what did not fit.
    assert message.startswith(
        f"cannot write index generation 1 for source 'docs' to {store.generations_dir}: "
        "no space left on device ("
    ), message
    assert "free now, more than twice the" in message and "quota" in message, message
    assert "\n" not in message, message
    assert info.value.sources == ("docs",)
    assert leftovers(store) == [], "the abandoned generation left files behind"


def test_a_disk_too_small_for_the_text_names_the_text(tmp_path, monkeypatch):
    store = GenerationStore(tmp_path / "state")

    def put(self, name, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(BlobStore, "put", put)
    monkeypatch.setattr(
        "scriptorium.index.generation.shutil.disk_usage",
        lambda path: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000),
    )
    with pytest.raises(GenerationWriteError) as info:
        write_first(store, DOCS)
    message = str(info.value)
    assert "(the new text of 5 files alone is " in message, message
    assert message.endswith(" MB free)"), message


def test_a_cancelled_write_leaves_nothing(tmp_path):
    store = GenerationStore(tmp_path / "state")
    asked = []

    def stop() -> bool:
        asked.append(True)
        return len(asked) > 3  # past the pause and two documents

    with pytest.raises(BuildCancelled):
        write_first(store, DOCS, stop=stop)
    assert leftovers(store) == []
    assert store.complete_generations() == []


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ValueError("An IO error occurred: 'No space left on device (os error 28)'"), True),
        (ValueError("Internal error: 'No space left on device (os error 28)'"), True),
        (ValueError("An IO error occurred: 'No space left on device'"), True),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), True),
        (OSError(errno.EROFS, "Read-only file system"), False),
    ],
)
def test_file_system_failures_are_recognised(error, expected):
    failure = write_failure(error)
    assert failure is not None and failure[1] is expected


def test_other_errors_are_not_write_failures():
    assert write_failure(ValueError("schema mismatch")) is None
    assert write_failure(BuildCancelled()) is None


KILLED = ValueError(
    "An error occurred in a thread: 'An index writer was killed.. A worker thread encountered"
    " an error (io::Error most likely) or panicked.'"
)


def test_a_killed_index_writer_is_a_full_disk_only_where_next_to_nothing_is_free(
    tmp_path, monkeypatch
):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(2_000_000, 1_990_000, 10_000))
    assert write_failure(KILLED, tmp_path) == ("no space left on device", True)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 10**11, 9 * 10**11))
    assert write_failure(KILLED, tmp_path) == ("the index writer stopped on an I/O error", False)
    assert write_failure(KILLED) == ("the index writer stopped on an I/O error", False)
