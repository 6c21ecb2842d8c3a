"""Waiting in tests for what another thread, task or process does, when it sets no event."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

WAIT_S = 60.0


async def until(
    condition: Callable[[], bool | Awaitable[bool]],
    what: str,
    seconds: float = WAIT_S,
    every: float = 0.005,
) -> None:
    """Poll ``condition`` (which may ask a server) every ``every`` seconds until it holds;
    ``TimeoutError`` naming ``what`` after ``seconds``."""
    try:
        async with asyncio.timeout(seconds):
            while not await holds(condition):  # noqa: ASYNC110 - there is no event to wait on
                await asyncio.sleep(every)
    except TimeoutError:
        raise TimeoutError(f"waited {seconds:.0f} s for {what}") from None


async def holds(condition: Callable[[], bool | Awaitable[bool]]) -> bool:
    answer = condition()
    return await answer if inspect.isawaitable(answer) else answer
