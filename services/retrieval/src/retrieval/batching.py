"""Work split into batches, and batches run side by side with a bound on those in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def slices(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """``items`` in consecutive pieces of at most ``size``: one request or bulk write each."""
    return [items[start : start + size] for start in range(0, len(items), size)]


async def gather_bounded(calls: Sequence[Callable[[], Awaitable[T]]], concurrency: int) -> list[T]:
    """Results of ``calls`` in order, at most ``concurrency`` at a time.

    The first failure cancels the calls still running and is raised as it was.
    """
    semaphore = asyncio.Semaphore(concurrency)

    async def run(call: Callable[[], Awaitable[T]]) -> T:
        async with semaphore:
            return await call()

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run(call)) for call in calls]
    except ExceptionGroup as failures:
        first = failures.exceptions[0]
    else:
        return [task.result() for task in tasks]
    raise first
