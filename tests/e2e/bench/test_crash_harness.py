"""The crash harness's quick profile: a real process syncing, deleting or restoring killed at
random instants.
`make crash` is the thorough one (200 kills unless `KILLS=` says otherwise)."""

from __future__ import annotations

import pytest

from retrieval_bench.crash import run_harness


@pytest.mark.timeout(900)
def test_six_kills_leave_no_mismatch() -> None:
    report = run_harness(kills=6, seed=7)
    assert report.kills >= 6
    assert report.restore_kills >= 1
    assert report.reruns >= 3
    assert report.mismatches == 0
