"""The crash harness's quick profile: a real ingesting process killed at random instants."""

from __future__ import annotations

import pytest

from retrieval_bench.crash import run_harness


@pytest.mark.timeout(900)
def test_ten_kills_leave_no_mismatch() -> None:
    report = run_harness(kills=10, seed=7)
    assert report.kills >= 10
    assert report.reruns >= 3
    assert report.mismatches == 0
