"""A call bounded in time fails as a remote call past its deadline does."""

from __future__ import annotations

import asyncio

import pytest

from retrieval.deadlines import answered_within, undo_ends_at
from retrieval.errors import BackendTimeoutError


async def test_a_block_past_its_time_is_cancelled_and_told_as_a_backend_timeout() -> None:
    cancelled = asyncio.Event()

    async def stalled() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(BackendTimeoutError, match=r"retrieve: no answer within 0\.05 s"):
        async with answered_within(0.05, "retrieve"):
            await stalled()
    assert cancelled.is_set()


async def test_a_timeout_raised_inside_is_not_taken_for_its_own() -> None:
    with pytest.raises(TimeoutError) as raised:
        async with answered_within(60, "retrieve"):
            raise TimeoutError("a store's own timeout")
    assert not isinstance(raised.value, BackendTimeoutError)


async def test_no_time_given_bounds_nothing_nor_the_undo_of_a_write() -> None:
    async with answered_within(None, "retrieve"):
        assert undo_ends_at.get() is None
        assert asyncio.current_task().cancelling() == 0
        await asyncio.sleep(0.01)


async def test_a_time_given_leaves_a_stopped_write_its_undo_window() -> None:
    loop = asyncio.get_running_loop()
    async with answered_within(1.0, "ingest"):
        ends_at = undo_ends_at.get()
        assert ends_at is not None
        assert 0.9 < ends_at - loop.time() <= 1.0
    assert undo_ends_at.get() is None
