"""``retrieval bench cli``'s two loads: the targets each holds the commands that start nothing
to, and how many CPU burners each runs."""

from __future__ import annotations

import pytest

from retrieval_bench.cli.command_line import against_target, loads


@pytest.mark.parametrize(("cores", "burners"), [(1, 0), (2, 1), (8, 7)])
def test_the_busy_machine_spins_every_core_but_one(cores: int, burners: int) -> None:
    quiet, busy = loads(cores)
    assert (quiet.burners, quiet.target_s) == (0, 0.3)
    assert (busy.burners, busy.target_s) == (burners, 0.5)


@pytest.mark.parametrize(
    ("median_s", "quiet_met", "busy_met"),
    [(0.2, True, True), (0.4, False, True), (0.5, False, False)],
)
def test_each_load_holds_the_median_to_its_own_target(
    median_s: float, quiet_met: bool, busy_met: bool
) -> None:
    quiet, busy = loads(2)
    figures = {"median_s": median_s}
    assert against_target(figures, quiet)["met"] is quiet_met
    assert against_target(figures, busy)["met"] is busy_met
    assert against_target(figures, busy)["ratio"] == pytest.approx(median_s / 0.5)
