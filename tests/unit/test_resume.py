"""What a stopped write keeps (``index/resume.py``): a verified partial generation, never a
``gen-`` one, found again only when it fits, its blobs kept from pruning."""

from __future__ import annotations

import errno
import json

import pytest

from scriptorium.cancel import BuildCancelled
from scriptorium.index import resume
from scriptorium.index.generation import Change, FileEntry, Finish, GenerationStore, SourceEntry
from scriptorium.index.resume import Kept, KeptRecord, ProgressKept
from scriptorium.index.store import blob_name
from tests.unit.test_generation import FINGERPRINT, make_doc, tokens_for, write


def _entry(doc) -> FileEntry:
    return FileEntry(doc.content_hash, len(doc.text), 0, blob_name(doc, FINGERPRINT), 1)


def _kept_after_two(store: GenerationStore, first):
    """A write of three documents over ``first``, stopped after its second: kept."""
    docs = [make_doc(f"n{i}.md", f"nectarine {i}") for i in range(3)]
    tables = {"s": SourceEntry("markdown", "/x", "fp", dict(first.sources["s"].files))}
    for doc in docs:
        tables["s"].files[doc.path] = _entry(doc)
    applied_seen: list = []
    stop_after = {"n": 0}

    def steps():
        for doc in docs:
            yield doc
            stop_after["n"] += 1

    def keep(applied):
        applied_seen.extend(applied)
        kept = resume.kept_tables(first, tables, applied)
        return Kept(
            Finish(kept), KeptRecord(first.generation, first.checksum, len(applied), len(docs))
        )

    with pytest.raises(ProgressKept) as stopped:
        store.write_streamed(
            parent=first,
            change=Change(added=list(docs)),
            extractors=FINGERPRINT,
            steps=steps(),
            tokens_for=tokens_for,
            finish=lambda: Finish(tables),
            stop=lambda: stop_after["n"] >= 2,
            keep=keep,
        )
    return stopped.value, docs, applied_seen


def test_a_stopped_write_keeps_what_it_applied_as_a_partial_that_is_never_served(tmp_path):
    store = GenerationStore(tmp_path)
    first = write(store, None, [make_doc("a.md", "apple")])
    kept, _, applied = _kept_after_two(store, first)
    assert kept.generation == 2
    assert [d.path for d in applied] == ["n0.md", "n1.md"]
    assert store.complete_generations() == [1]  # nothing served from it
    assert [p.name for _, p in resume.kept_dirs(store.generations_dir)] == [".resume-000002"]
    found = resume.find(GenerationStore(tmp_path), first, lambda m: True, {"s": "fp"})
    assert found is not None and found.generation == 2
    assert sorted(found.manifest.sources["s"].files) == ["a.md", "n0.md", "n1.md"]
    assert found.record.files_done == 2


def test_its_blobs_outlive_a_prune_and_a_new_write_takes_the_next_number(tmp_path):
    store = GenerationStore(tmp_path)
    first = write(store, None, [make_doc("a.md", "apple")])
    _, docs, _ = _kept_after_two(store, first)
    store.prune(1, blobs=True)
    for doc in docs[:2]:
        assert store.blobs.exists(blob_name(doc, FINGERPRINT))
    assert write(store, first, [make_doc("b.md", "banana")]).generation == 3


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        ("record", "its record's checksum does not match"),
        ("served", "it continues generation 1, and generation 9 serves"),
        ("config", "source 's' was configured otherwise when it was kept"),
        ("format", "another index format or configuration wrote it"),
    ],
)
def test_a_partial_that_does_not_fit_is_discarded_with_a_reason(tmp_path, caplog, spoil, why):
    store = GenerationStore(tmp_path)
    first = write(store, None, [make_doc("a.md", "apple")])
    _kept_after_two(store, first)
    path = store.generations_dir / ".resume-000002"
    served, fingerprints, compatible = first, {"s": "fp"}, (lambda m: True)
    if spoil == "record":
        payload = json.loads((path / resume.RECORD).read_text())
        payload["record"]["files_done"] = 3
        (path / resume.RECORD).write_text(json.dumps(payload))
    elif spoil == "served":
        served = write(store, first, [make_doc("b.md", "banana")])
        served.generation = 9
    elif spoil == "config":
        fingerprints = {"s": "other"}
    else:
        compatible = lambda m: False  # noqa: E731
    with caplog.at_level("WARNING"):
        assert resume.find(GenerationStore(tmp_path), served, compatible, fingerprints) is None
    assert not path.exists()
    assert f"(.resume-000002): {why}" in caplog.text


def test_kept_tables_hold_only_what_was_applied(tmp_path):
    store = GenerationStore(tmp_path)
    first = write(store, None, [make_doc("a.md", "apple"), make_doc("b.md", "banana")])
    new_a, new_c = make_doc("a.md", "apple two"), make_doc("c.md", "cherry")
    tables = {"s": SourceEntry("markdown", "/x", "fp", {"a.md": _entry(new_a)})}
    tables["s"].files["c.md"] = _entry(new_c)
    # a.md replaced, b.md removed; c.md's step did not come before the stop.
    kept = resume.kept_tables(first, tables, [("s", "a.md"), new_a, ("s", "b.md")])
    assert kept is not None
    assert kept["s"].files == {"a.md": _entry(new_a)}
    # A source whose settings changed keeps nothing while old files of it remain.
    other = {"s": SourceEntry("markdown", "/x", "changed", dict(tables["s"].files))}
    assert resume.kept_tables(first, other, [("s", "a.md"), new_a]) is None


def test_a_partial_that_cannot_be_written_is_dropped_and_the_stop_still_stops(
    tmp_path, monkeypatch, caplog
):
    store = GenerationStore(tmp_path)
    first = write(store, None, [make_doc("a.md", "apple")])

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "_seal", full_disk)
    with caplog.at_level("WARNING"), pytest.raises(BuildCancelled) as stopped:
        _kept_after_two(store, first)
    assert not isinstance(stopped.value, ProgressKept)
    assert "could not keep the stopped build's progress: no space left on device" in caplog.text
    assert sorted(p.name for p in store.generations_dir.iterdir()) == ["gen-000001"]
    assert not any(
        store.blobs.exists(blob_name(make_doc(f"n{i}.md", f"nectarine {i}"), FINGERPRINT))
        for i in range(2)
    )
