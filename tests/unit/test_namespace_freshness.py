"""When a retrieval is settled: every index it asked answered at or above the LSN written to
that index and the highest LSN of that index already returned; time decides only where an
LSN is missing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import pytest

from retrieval.ports.index_lsns import AnsweredLsns
from retrieval.service.caching.freshness import IndexedGenerations, NamespaceFreshness
from retrieval_testkit import InMemoryNamespaceGenerations

NS = "tea"
SETTLE_S = 10.0
WRITTEN = {"dense": 5, "sparse": 3}


class ScriptedIndexLsns:
    """IndexLsns whose writes a test sets and whose answers the computation notes itself."""

    def __init__(self, written: Mapping[str, int] | None = None) -> None:
        self._written = dict(written or {})
        self.answers = AnsweredLsns()

    def written(self, namespace: str) -> Mapping[str, int]:
        return self._written

    @contextmanager
    def answering(self) -> Iterator[AnsweredLsns]:
        self.answers = AnsweredLsns()
        yield self.answers


class Replica:
    def __init__(self) -> None:
        self.now = 100.0
        self.generations = InMemoryNamespaceGenerations()
        self.lsns = ScriptedIndexLsns()
        self.freshness = NamespaceFreshness(
            self.generations, self.lsns, SETTLE_S, clock=lambda: self.now
        )

    async def retrieve(self, answered: Mapping[str, int | None]) -> bool:
        """Whether a retrieval whose indexes answered at ``answered`` is settled."""

        async def compute() -> None:
            for index, lsn in answered.items():
                self.lsns.answers.note(index, NS, lsn)

        await self.freshness.current(NS)
        _, settled = await self.freshness.computed(NS, compute)
        return settled


@pytest.fixture
async def replica() -> Replica:
    replica = Replica()
    await replica.generations.advance(NS, WRITTEN)
    return replica


@pytest.mark.parametrize(
    ("answered", "settled"),
    [
        ({"dense": 5, "sparse": 3}, True),
        ({"dense": 9, "sparse": 2}, False),
        ({"dense": 4, "sparse": 9}, False),
        ({"dense": 5}, True),
        ({"sparse": 3}, True),
        ({"sparse": 2}, False),
    ],
)
async def test_settled_once_every_index_asked_reached_what_was_written_to_it(
    replica: Replica, answered: Mapping[str, int], settled: bool
) -> None:
    assert await replica.retrieve(answered) is settled


async def test_the_lowest_answer_of_an_index_counts(replica: Replica) -> None:
    async def compute() -> None:
        for lsn in (9, 2):
            replica.lsns.answers.note("sparse", NS, lsn)

    await replica.freshness.current(NS)
    assert (await replica.freshness.computed(NS, compute))[1] is False


async def test_an_index_answering_below_what_the_replica_returned_is_not_settled(
    replica: Replica,
) -> None:
    assert await replica.retrieve({"dense": 5, "sparse": 7})
    assert not await replica.retrieve({"dense": 6, "sparse": 6})
    assert await replica.retrieve({"dense": 6})
    assert await replica.retrieve({"dense": 6, "sparse": 7})


async def test_an_index_without_an_lsn_waits_for_the_window(replica: Replica) -> None:
    assert not await replica.retrieve({"dense": 5, "sparse": None})
    replica.now += SETTLE_S
    assert await replica.retrieve({"dense": 5, "sparse": None})
    assert not await replica.retrieve({"dense": 4, "sparse": None})


async def test_a_retrieval_that_asked_no_index_waits_for_the_window(replica: Replica) -> None:
    assert not await replica.retrieve({})
    replica.now += SETTLE_S
    assert await replica.retrieve({})


async def test_a_generation_advanced_with_no_lsn_of_an_index_waits_for_the_window() -> None:
    replica = Replica()
    await replica.generations.advance(NS, {"dense": 5})
    assert not await replica.retrieve({"dense": 5, "sparse": 3})
    replica.now += SETTLE_S
    assert await replica.retrieve({"dense": 5, "sparse": 3})


async def test_an_advance_carries_the_highest_lsn_of_each_index() -> None:
    generations = InMemoryNamespaceGenerations()
    indexed = IndexedGenerations(generations, ScriptedIndexLsns({"dense": 4, "sparse": 9}))
    await indexed.advance(NS, {"dense": 6, "sparse": 2})
    assert (await generations.current(NS)).index_lsns == {"dense": 6, "sparse": 9}
