"""The MCP benchmark times each call by the clock and by the processor time of its thread."""

from __future__ import annotations

import asyncio
import time

from retrieval_bench.mcp_overhead import timed_ms


def spin(seconds: float) -> None:
    """Keep the processor busy for ``seconds`` of this thread's processor time."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


async def busy() -> None:
    spin(0.05)


async def waiting() -> None:
    await asyncio.sleep(0.05)


async def test_a_call_is_timed_by_the_clock_and_by_the_processor() -> None:
    _, busy_processor = await timed_ms(busy())
    waiting_wall, waiting_processor = await timed_ms(waiting())
    assert busy_processor >= 50
    assert waiting_wall >= 50
    assert waiting_processor < 25
