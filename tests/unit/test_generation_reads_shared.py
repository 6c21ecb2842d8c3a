"""A call's namespace generation, from a read sent since the call began: the last one, or one
under way, which the calls that began before it share."""

from __future__ import annotations

import asyncio

import pytest

from retrieval.errors import BackendUnavailableError
from retrieval.ports.namespace_generations import Generation
from retrieval.service.caching.remembered_generations import RememberedGenerations
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "ns"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class HeldGenerations(InMemoryNamespaceGenerations):
    """Reads that wait until ``release`` is set; ``down`` makes them fail."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.release.set()
        self.down = False

    async def current(self, namespace: str) -> Generation:
        read = await super().current(namespace)
        await self.release.wait()
        if self.down:
            raise BackendUnavailableError("generations down")
        return read


async def test_a_read_sent_since_the_call_began_is_used_again_an_older_one_is_not() -> None:
    stored, clock = HeldGenerations(), Clock()
    generations = RememberedGenerations(stored, clock=clock)
    await stored.advance(NS)
    assert await generations.read_since(NS, began=clock.now) == 1
    assert await generations.read_since(NS, began=clock.now) == 1
    assert stored.current_calls == 1
    await stored.advance(NS)
    clock.now += 1
    assert await generations.read_since(NS, began=clock.now) == 2
    assert stored.current_calls == 2


async def test_calls_that_began_before_a_read_under_way_share_it() -> None:
    stored, clock = HeldGenerations(), Clock()
    generations = RememberedGenerations(stored, clock=clock)
    stored.release.clear()
    began = clock.now
    calls = [asyncio.create_task(generations.read_since(NS, began=began)) for _ in range(5)]
    await asyncio.sleep(0)
    stored.release.set()
    assert await asyncio.gather(*calls) == [0] * 5
    assert stored.current_calls == 1


async def test_a_call_that_began_after_a_read_was_sent_reads_again() -> None:
    stored, clock = HeldGenerations(), Clock()
    generations = RememberedGenerations(stored, clock=clock)
    stored.release.clear()
    first = asyncio.create_task(generations.read_since(NS, began=clock.now))
    await asyncio.sleep(0)
    await stored.advance(NS)
    clock.now += 1
    later = asyncio.create_task(generations.read_since(NS, began=clock.now))
    await asyncio.sleep(0)
    stored.release.set()
    assert await later == 1
    assert await first in (0, 1)
    assert stored.current_calls == 2


async def test_a_failed_shared_read_fails_every_call_sharing_it_and_is_forgotten() -> None:
    stored, clock = HeldGenerations(), Clock()
    generations = RememberedGenerations(stored, clock=clock)
    stored.release.clear()
    stored.down = True
    calls = [asyncio.create_task(generations.read_since(NS, began=clock.now)) for _ in range(2)]
    await asyncio.sleep(0)
    stored.release.set()
    for call in calls:
        with pytest.raises(BackendUnavailableError):
            await call
    assert generations.last_read(NS) is None
    stored.down = False
    assert await generations.read_since(NS, began=clock.now) == 0
    assert stored.current_calls == 2
