"""Waiting in tests for what another thread or task does, when it sets no event."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

WAIT_S = 60.0


async def until(condition: Callable[[], bool], what: str, seconds: float = WAIT_S) -> None:
    """Poll until ``condition`` holds; ``TimeoutError`` naming ``what`` after ``seconds``."""
    try:
        async with asyncio.timeout(seconds):
            while not condition():  # noqa: ASYNC110 - there is no event to wait on
                await asyncio.sleep(0.005)
    except TimeoutError:
        raise TimeoutError(f"waited {seconds:.0f} s for {what}") from None
