"""Reads of one replica that went back to an older version of a document, acknowledged
writes that the state after the faults does not show, and stale reads while the index lagged
more than usual, found in made-up histories."""

from __future__ import annotations

from retrieval_bench.nemesis.checks import (
    LagWindow,
    bound_at,
    lost_acknowledged_writes,
    non_monotonic_reads,
)
from retrieval_testkit.replica_history import Change, Read, stale_documents


def write(version: str, started: float, ended: float, acknowledged: bool = True) -> Change:
    return Change("d", version, started, ended, acknowledged)


def deletion(started: float, ended: float) -> Change:
    return Change("d", None, started, ended, True)


def shows(started: float, ended: float, *versions: str, replica: int = 0) -> Read:
    return Read(started, {"d": frozenset(versions)} if versions else {}, replica, ended)


HISTORY = {"d": [write("one", 0, 1), write("two", 2, 3)]}


def test_a_replica_showing_an_older_version_after_a_newer_one_went_back() -> None:
    went_back = shows(6, 7, "one")
    reads = [shows(4, 5, "two"), went_back]
    assert non_monotonic_reads(reads, HISTORY) == [went_back]


def test_newer_versions_and_other_replicas_keep_reads_monotonic() -> None:
    assert non_monotonic_reads([shows(4, 5, "one"), shows(6, 7, "two")], HISTORY) == []
    other_replica = [shows(4, 5, "two"), shows(6, 7, "one", replica=1)]
    assert non_monotonic_reads(other_replica, HISTORY) == []


def test_a_read_overlapping_the_newer_one_has_not_gone_back() -> None:
    assert non_monotonic_reads([shows(4, 6, "two"), shows(5, 7, "one")], HISTORY) == []


def test_versions_written_side_by_side_have_no_order() -> None:
    overlapping = {"d": [write("one", 0, 2), write("two", 1, 3)]}
    assert non_monotonic_reads([shows(4, 5, "two"), shows(6, 7, "one")], overlapping) == []


def test_a_final_read_missing_the_last_acknowledged_write_lost_it() -> None:
    assert lost_acknowledged_writes([shows(10, 11, "one")], HISTORY) == [write("two", 2, 3)]
    assert lost_acknowledged_writes([shows(10, 11, "two")], HISTORY) == []


def test_a_deletion_undone_and_a_write_gone_are_lost() -> None:
    deleted = {"d": [write("one", 0, 1), deletion(2, 3)]}
    assert lost_acknowledged_writes([shows(10, 11, "one")], deleted) == [deletion(2, 3)]
    assert lost_acknowledged_writes([shows(10, 11)], deleted) == []
    assert lost_acknowledged_writes([shows(10, 11)], HISTORY) == [write("two", 2, 3)]


def test_an_unacknowledged_write_is_not_lost_and_may_have_landed() -> None:
    history = {"d": [write("one", 0, 1), write("two", 2, 3, acknowledged=False)]}
    assert lost_acknowledged_writes([shows(10, 11, "one")], history) == []
    assert lost_acknowledged_writes([shows(10, 11, "two")], history) == []


def test_a_read_is_held_to_the_raised_lag_until_the_writes_made_under_it_show() -> None:
    window = LagWindow(started=10, ended=20, bound_s=6)
    assert bound_at(9, 2, [window]) == 2
    assert bound_at(15, 2, [window]) == 6
    assert bound_at(25.9, 2, [window]) == 6
    assert bound_at(26.1, 2, [window]) == 2


def test_a_read_stale_past_the_usual_bound_is_stale_after_a_lag_window() -> None:
    history = {"d": [write("one", 0, 1), write("two", 30, 31)]}
    window = LagWindow(started=10, ended=20, bound_s=6)
    late = shows(34, 35, "one")
    assert stale_documents(late, history, bound_at(late.started, 2, [window])) == ["d"]
    during = {"d": [write("one", 0, 1), write("two", 18, 19)]}
    held = shows(24, 25, "one")
    assert stale_documents(held, during, bound_at(held.started, 2, [window])) == []
    assert stale_documents(held, during, 2) == ["d"]
