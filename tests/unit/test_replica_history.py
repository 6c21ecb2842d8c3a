"""Which reads of several replicas are stale: what a read shows was certainly replaced by a
change acknowledged more than the bound before the read started."""

from __future__ import annotations

from retrieval_testkit.replica_history import Change, Read, stale_documents

BOUND_S = 2.0


def write(version: str, started: float, ended: float, acknowledged: bool = True) -> Change:
    return Change("d", version, started, ended, acknowledged)


def deletion(started: float, ended: float) -> Change:
    return Change("d", None, started, ended, True)


def shows(at: float, *versions: str) -> Read:
    return Read(at, {"d": frozenset(versions)} if versions else {})


def stale(read: Read, *history: Change) -> bool:
    return stale_documents(read, {"d": list(history)}, BOUND_S) == ["d"]


def test_an_older_version_is_fresh_within_the_bound_and_stale_after_it() -> None:
    history = (write("one", 0, 1), write("two", 2, 3))
    assert not stale(shows(4.9, "one"), *history)
    assert stale(shows(5.1, "one"), *history)
    assert not stale(shows(5.1, "two"), *history)


def test_of_two_overlapping_writes_either_may_be_the_last() -> None:
    history = (write("one", 0, 2), write("two", 1, 3))
    assert not stale(shows(100, "one"), *history)
    assert not stale(shows(100, "two"), *history)


def test_a_document_missing_after_its_write_is_stale_past_the_bound() -> None:
    history = (write("one", 0, 1),)
    assert not stale(shows(2.9), *history)
    assert stale(shows(3.1), *history)
    assert not stale(shows(3.1), write("one", 0, 1, acknowledged=False))


def test_a_deleted_document_shown_past_the_bound_is_stale() -> None:
    history = (write("one", 0, 1), deletion(2, 3))
    assert not stale(shows(4.9, "one"), *history)
    assert stale(shows(5.1, "one"), *history)
    assert not stale(shows(5.1), *history)


def test_a_version_nobody_wrote_is_stale() -> None:
    assert stale(shows(0, "forged"), write("one", 0, 1))


def test_a_failed_write_may_have_been_made_until_a_later_one_is_acknowledged() -> None:
    history = (write("one", 0, 1), write("two", 2, 3, acknowledged=False))
    assert not stale(shows(50, "two"), *history)
    assert stale(shows(50, "two"), *history, write("three", 4, 5))
