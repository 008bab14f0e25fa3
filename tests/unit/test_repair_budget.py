"""The repair budget: a first repair at once, then waits that double, then none until the
window has passed (a disk that keeps damaging what is written cannot cause a rebuild loop)."""

from __future__ import annotations

from scriptorium.index.repair import MAX_REPAIRS, RepairBudget


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_repairs_back_off_and_stop_at_the_bound() -> None:
    clock = Clock()
    budget = RepairBudget(clock=clock)
    waits = [budget.take() for _ in range(MAX_REPAIRS)]
    assert waits == [0.0, 0.5, 1.0][:MAX_REPAIRS]
    assert budget.take() is None
    assert budget.take() is None
    assert budget.used == MAX_REPAIRS


def test_the_bound_holds_within_the_window_and_lifts_after_it() -> None:
    clock = Clock()
    budget = RepairBudget(limit=2, window=600.0, clock=clock)
    assert budget.take() == 0.0
    clock.now += 599.0
    assert budget.take() == 0.5
    assert budget.take() is None
    clock.now += 2.0  # the first repair has left the window: one more may run
    assert budget.take() == 0.5
    assert budget.take() is None
