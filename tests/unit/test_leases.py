"""Leases: a live one keeps its generation from pruning, a dead one is cleared."""

from __future__ import annotations

from pathlib import Path

from scriptorium.index import leases


def test_a_held_lease_names_its_generation_until_released(tmp_path: Path) -> None:
    lease = leases.Lease(tmp_path)
    lease.hold([3])
    assert leases.leased(tmp_path) == {3}
    lease.hold([5])  # replaced whole: the old generation is no longer named
    assert leases.leased(tmp_path) == {5}
    lease.release()
    assert leases.leased(tmp_path) == set()
    assert not any((tmp_path / leases.LEASES).iterdir())


def test_the_lease_of_a_process_that_ended_is_removed(tmp_path: Path) -> None:
    lease = leases.Lease(tmp_path)
    lease.hold([2])
    lease._handle.close()  # as when its process dies: the file stays, its lock goes
    assert leases.leased(tmp_path) == set()
    assert not any((tmp_path / leases.LEASES).iterdir())


def test_no_lease_where_the_directory_cannot_hold_one(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    lease = leases.Lease(blocked)
    lease.hold([1])  # nothing raised, nothing named
    assert leases.leased(blocked) == set()
    lease.release()
