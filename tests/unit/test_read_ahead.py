"""A restore's file read a group ahead: the next group is read while the caller writes one,
and however the caller stops, the reading ends and the file is closed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Generator
from contextlib import aclosing

import pytest

from retrieval.service.backup.restoring import read_ahead


async def test_the_next_item_is_read_while_the_caller_works_on_one() -> None:
    second_read = threading.Event()

    def items() -> Generator[int, None, None]:
        yield 1
        second_read.set()
        yield 2

    seen = []
    async with aclosing(read_ahead(items())) as ahead:
        async for item in ahead:
            if item == 1:
                assert await asyncio.to_thread(second_read.wait, 5.0)
            seen.append(item)
    assert seen == [1, 2]


async def test_a_caller_that_stops_early_closes_the_items() -> None:
    closed = threading.Event()

    def items() -> Generator[int, None, None]:
        try:
            yield from range(10)
        finally:
            closed.set()

    async def write_failing() -> None:
        async with aclosing(read_ahead(items())) as ahead:
            async for _ in ahead:
                raise RuntimeError("write failed")

    with pytest.raises(RuntimeError, match="write failed"):
        await write_failing()
    assert closed.is_set()


async def test_an_error_reading_reaches_the_caller() -> None:
    def items() -> Generator[int, None, None]:
        yield 1
        raise ValueError("is corrupt")

    seen = []

    async def write_all() -> None:
        async with aclosing(read_ahead(items())) as ahead:
            async for item in ahead:
                seen.append(item)

    with pytest.raises(ValueError, match="is corrupt"):
        await write_all()
    assert seen == [1]
